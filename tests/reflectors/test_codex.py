"""The ``codex`` reflector (``reflectors/codex.py``): the answer read from ``exec --json``
events, and a config home that carries the user's model settings and nothing else."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.codex import _key, _toml, answer_of, carried_config, codex_home

TOML_VALUES = st.recursive(
    st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _events(*events: object) -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n"


def test_the_answer_is_the_last_agent_message() -> None:
    out = _events(
        {"type": "thread.started"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "draft"}},
        {"type": "item.completed", "item": {"type": "reasoning", "text": "thinking"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": '{"bias": []}'}},
    )
    assert answer_of("warning: noise\n" + out) == '{"bias": []}'


def test_a_failed_turn_or_no_message_is_an_unavailable_backend() -> None:
    failed = _events({"type": "turn.failed", "error": {"message": "stream error: 429\nretry"}})
    with pytest.raises(ReflectorUnavailable, match=r"^codex: stream error: 429$"):
        answer_of(failed)
    with pytest.raises(ReflectorUnavailable, match="^codex: unauthorized"):
        answer_of(_events({"type": "error", "message": "unauthorized"}))
    with pytest.raises(ReflectorUnavailable, match="codex printed no agent_message"):
        answer_of(_events({"type": "thread.started"}))


def test_only_the_model_settings_are_carried(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'model = "o3"\nmodel_reasoning_effort = "high"\napproval_policy = "never"\n'
        '[mcp_servers.memory]\ncommand = "evolving-agent"\n'
        '[model_providers.local]\nbase_url = "http://127.0.0.1:8080/v1"\n'
    )
    carried = tomllib.loads(carried_config(tmp_path))
    assert carried == {
        "model": "o3",
        "model_reasoning_effort": "high",
        "model_providers": {"local": {"base_url": "http://127.0.0.1:8080/v1"}},
    }
    (tmp_path / "config.toml").write_text("not = [toml")
    assert carried_config(tmp_path) == ""
    assert carried_config(tmp_path / "none") == ""


@settings(max_examples=40)
@given(TOML_VALUES)
def test_every_carried_value_is_toml_that_reads_back_as_it_was(value: object) -> None:
    # Keys may need quoting too ("my.provider"): both go through the module's writer.
    assert tomllib.loads(f"{_key('x.y z')} = {_toml(value)}") == {"x.y z": value}


def test_the_config_home_is_codex_home_or_home_dot_codex() -> None:
    assert codex_home({"CODEX_HOME": "/srv/codex", "HOME": "/h"}) == Path("/srv/codex")
    assert codex_home({"HOME": "/h"}) == Path("/h/.codex")


def test_a_key_beyond_the_bmp_and_a_del_are_valid_toml() -> None:
    # Hypothesis found it: _key quoted with json.dumps, which wrote U+10000 as the
    # surrogate pair \ud800\udc00, and TOML refused the carried config; json.dumps also
    # left DEL raw, which TOML refuses in a string.
    table, deleted = _toml({"\U00010000": False}), _toml("a\x7fb")
    assert tomllib.loads(f"x = {table}") == {"x": {"\U00010000": False}}
    assert tomllib.loads(f"x = {deleted}") == {"x": "a\x7fb"}
