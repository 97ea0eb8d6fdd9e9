"""The clients' set-ups (``integrations/setups.py``): for any root path a user may have,
every JSON and TOML block parses and every shell line splits to the root as one word.
The set-ups against the real clients are tests/integrations/test_real_clients.py."""

from __future__ import annotations

import json
import shlex
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.errors import UsageError
from evolving_agent.integrations.setups import CLIENTS, merge_note, render, setups_for

# A root as people name folders: spaces, quotes, $, backslashes, any script.
ROOTS = st.text(
    st.characters(exclude_categories=["Cc", "Cs", "Zl", "Zp"]), min_size=1, max_size=30
).map(lambda name: "/home/me/" + name.replace("/", "-"))
PROGRAM = ["/opt/ea venv/bin/python", "-m", "evolving_agent"]


def _strings(data: object) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


@settings(max_examples=40)
@given(st.sampled_from(CLIENTS), ROOTS)
def test_every_block_parses_and_carries_the_root_exactly(client: str, root: str) -> None:
    starts = 0
    for setup in setups_for(client, root, PROGRAM):
        if setup.lang == "json":
            found = _strings(json.loads(setup.text))
        elif setup.lang == "toml":
            found = _strings(tomllib.loads(setup.text))
        elif setup.lang == "bash":
            found = shlex.split(setup.text)
        else:
            continue
        # A string holding a whole command line (a hook) is split as the shell will.
        words = [w for s in found for w in (shlex.split(s) if " --root " in s else [s])]
        if PROGRAM[0] in words:  # a block that starts the program hands it the root
            assert words[words.index("--root") + 1] == root, (setup.key, setup.text)
            starts += 1
    assert starts >= 1, client


def test_the_program_is_started_as_given_with_root_then_mcp() -> None:
    [config] = [s for s in setups_for("codex", "/m", PROGRAM) if s.lang == "toml"]
    server = tomllib.loads(config.text)["mcp_servers"]["evolving-agent"]
    assert server["command"] == PROGRAM[0]
    assert server["args"] == [*PROGRAM[1:], "--root", "/m", "mcp"]


def test_a_root_with_del_or_a_control_character_is_still_valid_toml() -> None:
    # The set-up quoted with json.dumps, which leaves DEL raw: tomllib refused the table.
    for root in ("/home/me/a\x7fb", "/home/me/tab\there", "/home/me/\U0001f600"):
        [config] = [s for s in setups_for("codex", root, PROGRAM) if s.lang == "toml"]
        server = tomllib.loads(config.text)["mcp_servers"]["evolving-agent"]
        assert server["args"] == [*PROGRAM[1:], "--root", root, "mcp"]


def test_codex_and_opencode_are_told_the_same_memory_instructions() -> None:
    told = {
        s.key: s.text
        for client in ("codex", "opencode")
        for s in setups_for(client, "/m", PROGRAM)
        if s.where == "AGENTS.md"
    }
    assert sorted(told) == ["codex-agents", "opencode-agents"]
    assert told["codex-agents"] == told["opencode-agents"]
    assert told["codex-agents"].startswith("## Memory (evolving-agent)\n\n")
    assert "`boot` tool" in told["codex-agents"] and "`friction` tool" in told["codex-agents"]


def test_an_unknown_client_lists_the_known_ones() -> None:
    with pytest.raises(UsageError, match="unknown client 'cursor'; choose one of: claude, codex"):
        setups_for("cursor", "/m")


def test_settings_files_say_merge_and_the_rendering_numbers_each_place() -> None:
    setups = setups_for("claude", "/m", PROGRAM)
    for s in setups:
        assert bool(merge_note(s)) == (s.where != "shell" and s.lang in ("json", "toml"))
    shown = render(setups, shell_access=["a session can still run git"])
    assert shown.startswith(f"--- 1. {setups[0].title} ({setups[0].where}) ---\n")
    assert f"--- {len(setups)}. " in shown and "run in a shell" in shown
    assert shown.endswith(
        "--- What a session with shell access can still do ---\na session can still run git\n"
    )
