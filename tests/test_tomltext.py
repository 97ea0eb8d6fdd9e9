"""TOML written by hand (``evolving_agent/tomltext.py``), shared by the Codex reflector's
carried ``config.toml`` and ``integrations show codex``: whatever is written, ``tomllib``
reads back as it was."""

from __future__ import annotations

import tomllib

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.tomltext import toml_key, toml_string, toml_value

TOML_VALUES = st.recursive(
    st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
# Any text a path or a setting may hold, but lone surrogates (UTF-8 cannot write them).
TEXTS = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)


@settings(max_examples=40)
@given(TOML_VALUES)
def test_every_value_is_toml_that_reads_back_as_it_was(value: object) -> None:
    # Keys may need quoting too ("my.provider"): both go through the module's writer.
    assert tomllib.loads(f"{toml_key('x.y z')} = {toml_value(value)}") == {"x.y z": value}


@settings(max_examples=60)
@given(TEXTS)
def test_every_string_reads_back_as_it_was(text: str) -> None:
    assert tomllib.loads(f"x = {toml_string(text)}") == {"x": text}


def test_a_key_beyond_the_bmp_and_a_del_are_valid_toml() -> None:
    # Hypothesis found it: the Codex reflector quoted keys with json.dumps, which wrote
    # U+10000 as the surrogate pair \ud800\udc00, and TOML refused the carried config;
    # json.dumps also left DEL raw, which TOML refuses in a string.  `integrations show
    # codex` had the same json.dumps quoting for the root path.
    table, deleted = toml_value({"\U00010000": False}), toml_string("a\x7fb")
    assert tomllib.loads(f"x = {table}") == {"x": {"\U00010000": False}}
    assert tomllib.loads(f"x = {deleted}") == {"x": "a\x7fb"}
    assert deleted == '"a\\u007fb"'


def test_a_key_is_bare_only_when_toml_allows_it() -> None:
    assert toml_key("model_providers") == "model_providers"
    assert toml_key("local-1") == "local-1"
    assert toml_key("my.provider") == '"my.provider"'
    assert toml_key("") == '""'
