"""The real ``claude`` and ``codex`` CLIs, driven against one scripted model server.

Every set-up is used exactly as ``evolving-agent integrations show`` prints it (the
printed text is parsed and pasted into the client's config, or run as a shell line),
and each test checks what reached the model (the scripted server records every
request) and what reached the memory root (Evidence, ``verify``).  The CLIs are the
pinned versions ``.ci/tools.d/node-clis.sh`` installs; they never see the network, only
the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.integrations.setups import Setup, setups_for
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence import EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot
from tests.conftest import _test_env
from tests.integrations.scripted_model import (
    CallTool,
    Say,
    ScriptedModel,
    claude_env,
    codex_env,
    codex_home,
    deferred_tools,
)

pytestmark = pytest.mark.slow

BIAS = "When about to offer a menu of options, stop: did the user ask for options?"
TOOLS = {"boot", "friction", "hypotheses", "hypothesis_add", "live_set"}
BIN = Path(sys.executable).parent  # the venv's bin: holds `evolving-agent`


@dataclass
class World:
    model: ScriptedModel
    root: MemoryRoot
    tmp: Path
    env: dict[str, str]  # the test environment (git identity, PATH with evolving-agent)

    def dir(self, name: str) -> Path:
        path = self.tmp / name
        path.mkdir(parents=True)
        return path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    for program in ("claude", "codex"):
        assert shutil.which(program), f"{program} is not installed (.ci/tools.sh installs it)"
    tmp = tmp_path_factory.mktemp("real-clients")
    env = {**os.environ, **_test_env(tmp)}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("EVOLVING_AGENT_ROOT")  # the set-ups must carry the root themselves
    with pytest.MonkeyPatch.context() as mp:
        for name, value in _test_env(tmp).items():
            mp.setenv(name, value)
        root = init_root(tmp / "memory")
        Writer(root, "human").write("today", "bias.md", BIAS + "\n")
    with ScriptedModel() as model:
        yield World(model, root, tmp, env)


def setup(client: str, key: str, root: MemoryRoot | Path) -> Setup:
    path = root.path if isinstance(root, MemoryRoot) else root
    (found,) = [s for s in setups_for(client, str(path)) if s.key == key]
    return found


def frictions(root: MemoryRoot, text: str) -> list[Any]:
    return [r for r in EvidenceLog(root).iter_all() if r.kind == "friction" and r.text == text]


def verify(world: World) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "evolving-agent"), "--root", str(world.root.path), "verify"],
        env=world.env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def workspace(world: World, name: str) -> Path:
    ws = world.dir(name)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


# -- Claude Code -------------------------------------------------------------------------------


def claude_world(world: World, name: str) -> tuple[Path, dict[str, str]]:
    home = world.dir(f"{name}-home")
    env = {**world.env, **claude_env(home, world.model.url)}
    env["PATH"] = world.env["PATH"]
    return home, env


def claude_result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_claude_user_setup_as_printed_reaches_the_model_and_lands_friction(world: World) -> None:
    home, env = claude_world(world, "claude-user")
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        setup("claude", "claude-settings", world.root).text
    )
    add = run(shlex.split(setup("claude", "claude-mcp-user", world.root).text), home, env)
    assert add.returncode == 0, add.stderr
    ws = workspace(world, "claude-user-ws")
    text = "claude: answered with four options where one was asked for"
    marker = world.model.script("claude-user", [CallTool("friction", {"text": text}), Say("ok")])

    result = claude_result(
        run(["claude", "-p", "--output-format", "json", "--", f"go {marker}"], ws, env)
    )

    assert result["permission_denials"] == [] and result["is_error"] is False
    first, *rest = world.model.requests("claude-user", api="messages")
    # The SessionStart hook's boot context reached the model's first request.
    assert BIAS in first.text()
    # Claude Code lists MCP tools by name and loads them on demand; all five are there.
    assert {n.removeprefix("mcp__evolving-agent__") for n in deferred_tools(first.body)} >= TOOLS
    assert any("mcp__evolving-agent__friction" in r.tool_names() for r in rest)
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"
    assert verify(world).returncode == 0


def test_claude_denies_the_tools_without_the_printed_allow_rule(world: World) -> None:
    # Regression: the old docs' set-up left `claude -p` denying every memory tool call.
    home, env = claude_world(world, "claude-deny")
    add = run(shlex.split(setup("claude", "claude-mcp-user", world.root).text), home, env)
    assert add.returncode == 0, add.stderr
    ws = workspace(world, "claude-deny-ws")
    text = "claude: this friction is denied"
    marker = world.model.script("claude-deny", [CallTool("friction", {"text": text}), Say("ok")])

    result = claude_result(
        run(["claude", "-p", "--output-format", "json", "--", f"go {marker}"], ws, env)
    )

    assert [d["tool_name"] for d in result["permission_denials"]] == [
        "mcp__evolving-agent__friction"
    ]
    assert frictions(world.root, text) == []


def test_claude_old_documented_e_flag_order_is_refused(world: World) -> None:
    # Regression: `-e KEY=V` before the name swallowed it; the printed line never uses -e.
    home, env = claude_world(world, "claude-e")
    old = [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        "-e",
        "EVOLVING_AGENT_ROOT=/x",
        "evolving-agent",
        "--",
        "evolving-agent",
        "mcp",
    ]
    assert run(old, home, env).returncode != 0
    assert "-e" not in shlex.split(setup("claude", "claude-mcp-user", world.root).text)


def test_claude_project_setup_as_printed_lands_friction(world: World) -> None:
    home, env = claude_world(world, "claude-project")
    ws = workspace(world, "claude-project-ws")
    (ws / ".mcp.json").write_text(setup("claude", "claude-mcp-project", world.root).text)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(
        setup("claude", "claude-project-settings", world.root).text
    )
    # What accepting the trust dialog once records (the printed note says to).
    (home / ".claude.json").write_text(
        json.dumps({"projects": {str(ws): {"hasTrustDialogAccepted": True}}})
    )
    text = "claude: project-scoped friction"
    marker = world.model.script("claude-proj", [CallTool("friction", {"text": text}), Say("ok")])

    result = claude_result(
        run(["claude", "-p", "--output-format", "json", "--", f"go {marker}"], ws, env)
    )

    assert result["permission_denials"] == []
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"


# -- Codex ---------------------------------------------------------------------------------


def codex_world(world: World, name: str, extra_toml: str = "") -> tuple[Path, dict[str, str]]:
    home = world.dir(f"{name}-home")
    chome = codex_home(home / ".codex", world.model.url, extra_toml)
    env = {**world.env, **codex_env(home, chome)}
    env["PATH"] = world.env["PATH"]
    return chome, env


def codex_events(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def mcp_items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["item"]
        for e in events
        if e.get("type") == "item.completed" and e["item"].get("type") == "mcp_tool_call"
    ]


def test_codex_config_as_printed_gives_the_model_tools_and_lands_friction(world: World) -> None:
    _chome, env = codex_world(
        world, "codex-config", setup("codex", "codex-config", world.root).text
    )
    ws = workspace(world, "codex-config-ws")
    (ws / "AGENTS.md").write_text(setup("codex", "codex-agents", world.root).text + "\n")
    text = "codex: listed four libraries where one was asked for"
    marker = world.model.script(
        "codex-config", [CallTool("boot"), CallTool("friction", {"text": text}), Say("done")]
    )

    proc = run(["codex", "exec", "--json", "--", f"go {marker}"], ws, env)

    assert proc.returncode == 0, proc.stderr
    first, second, _third = world.model.requests("codex-config", api="responses")
    # The tools are in the very first request (required = true waits for the server).
    assert {n.removeprefix("mcp__evolving_agent") for n in first.tool_names()} >= TOOLS
    assert "call the evolving-agent `boot` tool" in first.text()  # AGENTS.md arrived
    # The boot tool's answer (with today's bias) went back to the model.
    outputs = [i for i in second.body["input"] if i.get("type") == "function_call_output"]
    assert BIAS in json.dumps(outputs)
    assert [(i["tool"], i["status"]) for i in mcp_items(codex_events(proc))] == [
        ("boot", "completed"),
        ("friction", "completed"),
    ]
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"
    assert verify(world).returncode == 0


def test_codex_mcp_add_as_printed_is_callable_by_annotations_alone(world: World) -> None:
    # Regression: tools without annotations were rejected ("approval policy is never").
    chome, env = codex_world(world, "codex-add")
    add = run(shlex.split(setup("codex", "codex-mcp-add", world.root).text), chome, env)
    assert add.returncode == 0, add.stderr
    table = tomllib.loads((chome / "config.toml").read_text())["mcp_servers"]["evolving-agent"]
    assert table["args"] == ["--root", str(world.root.path), "mcp"]
    assert "default_tools_approval_mode" not in table
    ws = workspace(world, "codex-add-ws")
    text = "codex: friction through codex mcp add"
    marker = world.model.script("codex-add", [CallTool("friction", {"text": text}), Say("ok")])

    proc = run(["codex", "exec", "--json", "--", f"go {marker}"], ws, env)

    assert proc.returncode == 0, proc.stderr
    assert [i["status"] for i in mcp_items(codex_events(proc))] == ["completed"]
    assert len(frictions(world.root, text)) == 1


def test_codex_with_a_wrong_root_fails_loudly_not_silently(world: World) -> None:
    # Regression: a server that could not start left Codex running without memory, silently.
    missing = world.tmp / "no-such-root"
    _chome, env = codex_world(world, "codex-bad", setup("codex", "codex-config", missing).text)
    ws = workspace(world, "codex-bad-ws")
    marker = world.model.script("codex-bad", [Say("should not be asked")])

    proc = run(["codex", "exec", "--json", "--", f"go {marker}"], ws, env)

    assert proc.returncode != 0
    assert "required MCP servers failed to initialize: evolving-agent" in proc.stderr
    assert world.model.requests("codex-bad") == []
