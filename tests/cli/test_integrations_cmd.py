"""``integrations show claude|codex``: the printed set-ups, with the root filled in."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from tests.helpers.roots import fresh_root


def show(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["integrations", "show", *args])
    return result.exit_code, result.stdout, result.stderr


def test_codex_config_carries_the_root_required_and_approval(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    code, out, err = show("codex", "--root", str(root.path), "--json")

    assert (code, err) == (0, "")
    setups = {s["key"]: s for s in json.loads(out)}
    table = tomllib.loads(setups["codex-config"]["text"])["mcp_servers"]["evolving-agent"]
    assert table == {
        "command": "evolving-agent",
        "args": ["--root", str(root.path), "mcp"],
        "required": True,
        "startup_timeout_sec": 20,
        "default_tools_approval_mode": "approve",
    }
    assert setups["codex-mcp-add"]["text"] == (
        f"codex mcp add evolving-agent -- evolving-agent --root {root.path} mcp"
    )


def test_claude_text_names_the_place_of_each_setup(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "my memory")
    code, out, _err = show("claude", "--root", str(root.path))

    assert code == 0
    assert "--- 1. Boot context at every session start" in out
    assert "(~/.claude/settings.json) ---" in out
    # A root with a space is quoted for the shell line, and kept whole in JSON.
    assert f"evolving-agent -- evolving-agent --root '{root.path}' mcp" in out
    assert f'"{root.path}"' in out


def test_a_missing_root_still_prints_and_warns(tmp_path: Path) -> None:
    missing = tmp_path / "later"
    code, out, err = show("codex", "--root", str(missing))

    assert code == 0
    assert f'args = ["--root", "{missing}", "mcp"]' in out
    assert err.startswith(f"warning: no memory root at {missing}")


def test_an_unknown_client_is_a_usage_error() -> None:
    code, _out, err = show("cursor")
    assert code == 2
    assert "'cursor' is not one of 'claude', 'codex', 'gemini', 'opencode'" in err


@pytest.mark.parametrize("client", ["gemini", "opencode"])
def test_new_clients_print_the_absolute_path_of_the_running_program(client: str) -> None:
    # Regression (issue 34): a bare `evolving-agent` is not on PATH in a new shell.
    code, out, _err = show(client)
    assert code == 0
    commands = re.findall(r'"(/[^"]*evolving[-_]agent[^"]*|/[^"]*python[^"]*)"', out)
    assert commands and all(Path(c.split()[0]).is_absolute() for c in commands)
    assert '"command": "evolving-agent"' not in out and '"evolving-agent",\n' not in out
    assert "--trust evolving-agent evolving-agent" not in out
