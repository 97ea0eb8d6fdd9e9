"""``integrations show claude|codex``: the printed set-ups, with the root filled in."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from tests.helpers.roots import fresh_root

# The venv's own script: what the set-ups name when the CLI runs in this interpreter.
PROGRAM = str(Path(sys.executable).parent / "evolving-agent")


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
        "command": PROGRAM,
        "args": ["--root", str(root.path), "mcp"],
        "required": True,
        "startup_timeout_sec": 20,
        "default_tools_approval_mode": "approve",
    }
    assert setups["codex-mcp-add"]["text"] == (
        f"codex mcp add evolving-agent -- {PROGRAM} --root {root.path} mcp"
    )


def test_claude_text_names_the_place_of_each_setup(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "my memory")
    code, out, _err = show("claude", "--root", str(root.path))

    assert code == 0
    assert "--- 1. Boot context at every session start" in out
    assert "(~/.claude/settings.json) ---" in out
    # A root with a space is quoted for the shell line, and kept whole in JSON.
    assert f"evolving-agent -- {PROGRAM} --root '{root.path}' mcp" in out
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


def test_every_command_names_the_program_by_its_absolute_path(tmp_path: Path) -> None:
    # A newcomer's new shell had no venv on PATH: `claude mcp list` said "Failed to
    # connect — ENOENT" and the SessionStart hook ran nothing.
    root = fresh_root(tmp_path / "memory")
    for client in ("claude", "codex", "gemini", "opencode"):
        code, out, err = show(client, "--root", str(root.path), "--json")
        assert (code, err) == (0, "")
        for s in json.loads(out):
            if s["key"] in ("claude-project-settings", "codex-agents", "opencode-agents"):
                continue
            assert PROGRAM in s["text"], s["key"]
            assert '"command": "evolving-agent"' not in s["text"]
            assert 'command = "evolving-agent"' not in s["text"]
            assert " -- evolving-agent " not in s["text"]


def test_the_printed_hook_runs_from_a_shell_without_the_venv_on_its_path(
    tmp_path: Path,
) -> None:
    root = fresh_root(tmp_path / "memory")
    _code, out, _err = show("claude", "--root", str(root.path), "--json")
    (settings,) = [s for s in json.loads(out) if s["key"] == "claude-settings"]
    (entry,) = json.loads(settings["text"])["hooks"]["SessionStart"]
    command = entry["hooks"][0]["command"]
    env = {k: v for k, v in os.environ.items() if k != "EVOLVING_AGENT_ROOT"}
    env["PATH"] = "/usr/bin:/bin"  # a login shell's PATH: no venv on it
    proc = subprocess.run(
        ["sh", "-c", command], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert shlex.split(command)[0] == PROGRAM


def test_settings_files_are_merged_into_and_shell_access_is_named(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    _code, out, _err = show("claude", "--root", str(root.path))
    assert (
        "Merge: if ~/.claude/settings.json exists, add these keys to it and keep its other "
        "settings (append to its lists); do not replace the file."
    ) in out
    assert "Merge: if .mcp.json exists" in out
    _code, codex, _err = show("codex", "--root", str(root.path))
    assert "Merge: if ~/.codex/config.toml exists" in codex
    assert "Merge: if AGENTS.md" not in codex  # instructions are added to, not merged
    for text in (out, codex):
        tail = text.split("--- What a session with shell access can still do ---\n", 1)[1]
        can, stops = tail.splitlines()
        assert "write --as human" in can and "pass for you" in can
        assert "signing enable --key" in stops and "deploy os-users" in stops


def test_a_relative_program_is_printed_with_a_warning(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    code, out, err = show("codex", "--root", str(root.path), "--program", "evolving-agent")
    assert code == 0
    assert 'command = "evolving-agent"' in out
    assert err == (
        "warning: --program 'evolving-agent' is not an absolute path; a client started "
        "from another shell may not find it\n"
    )


@pytest.mark.slow
def test_the_printed_mcp_line_connects_from_a_shell_without_the_venv(tmp_path: Path) -> None:
    # The newcomer's symptom, with the real Claude Code: registered from the README's
    # venv, `claude mcp list` in a new shell said "✘ Failed to connect — ENOENT".
    claude = shutil.which("claude")
    assert claude, "claude is not installed (.ci/tools.sh installs it)"
    root = fresh_root(tmp_path / "memory")
    _code, out, _err = show("claude", "--root", str(root.path), "--json")
    (line,) = [s["text"] for s in json.loads(out) if s["key"] == "claude-mcp-user"]
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "EVOLVING_AGENT_ROOT"}
    env.update(HOME=str(home), PATH=f"{Path(claude).parent}:/usr/bin:/bin")  # no venv
    added = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    listed = subprocess.run(
        ["claude", "mcp", "list"], env=env, capture_output=True, text=True, timeout=120
    )
    assert f"{PROGRAM} --root {root.path} mcp - ✔ Connected" in listed.stdout, listed.stdout


@pytest.mark.parametrize("client", ["gemini", "opencode"])
def test_new_clients_print_the_absolute_path_of_the_running_program(client: str) -> None:
    # Regression (issue 34): a bare `evolving-agent` is not on PATH in a new shell.
    code, out, _err = show(client)
    assert code == 0
    commands = re.findall(r'"(/[^"]*evolving[-_]agent[^"]*|/[^"]*python[^"]*)"', out)
    assert commands and all(Path(c.split()[0]).is_absolute() for c in commands)
    assert '"command": "evolving-agent"' not in out and '"evolving-agent",\n' not in out
    assert "--trust evolving-agent evolving-agent" not in out
