"""The light install: the core runs without any extra, and a missing extra is one line.

A fresh venv per case would take minutes; instead the heavy libraries are hidden the way
Python sees an uninstalled package (``sys.modules[name] = None`` makes ``import name``
raise ``ImportError``), in-process for single commands and in a real process for the
core's whole day.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from evolving_agent.extras import EXTRA_OF
from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.openai import OpenAIReflector
from evolving_agent.reflectors.settings import ReflectorSettings
from tests.helpers import REPO, new_root, run_cli

HEAVY = ("matplotlib", "numpy", "ray", "openai", "mcp")
# Not heavy, but not the core's either: GitPython (import name "git") is the tests' reader.
NOT_CORE = (*HEAVY, "git")


def _hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_the_core_dependencies_name_no_heavy_library() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"]).lower()
    assert [h for h in HEAVY if h in core] == []
    assert (
        "gitpython" not in core
        and "gitpython" in " ".join(project["optional-dependencies"]["test"]).lower()
    )
    extras = project["optional-dependencies"]
    assert {"mcp", "search", "ray", "openai", "review", "all", "test"} <= set(extras)
    assert "evolving-agent[all]" in extras["test"]
    # Every extra the code names in its error exists in pyproject.
    assert {extra for extra, _ in EXTRA_OF.values()} <= set(extras)


@pytest.mark.slow
def test_a_memory_day_runs_with_every_heavy_library_missing(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    hide = "; ".join(f"sys.modules[{name!r}] = None" for name in NOT_CORE)
    script = tmp_path / "core_only.py"
    script.write_text(
        "import sys\n"
        f"{hide}\n"
        "from evolving_agent.launch import main\n"
        "sys.argv[0] = 'evolving-agent'\n"
        "main()\n"
    )
    steps = [
        ["init", str(root)],
        ["hypothesis", "add", "I over-explain", "--do", "answer first"],
        ["friction", "over-explained again"],
        ["live", "set", "focus", "the release"],
        ["run", "nightly"],
        ["boot"],
        ["boot", "--format", "claude-hook"],
        ["schedule", "show"],
        ["review", "list"],
        ["verify"],
        ["--help"],
    ]
    env = {**os.environ, "EVOLVING_AGENT_ROOT": str(root)}
    for args in steps:
        proc = subprocess.run(
            [sys.executable, str(script), *args], capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0, (args, proc.stderr)


def test_the_mcp_server_needs_no_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The server speaks MCP's JSON-RPC itself (issue 21: the SDK's import alone missed
    # Codex's startup window), so the light core install serves the tools.
    from evolving_agent.integrations.mcp_server import Server
    from evolving_agent.paths import MemoryRoot

    root = MemoryRoot.resolve(new_root(tmp_path))
    _hide(monkeypatch, "mcp")
    server = Server(root)
    call = {"name": "friction", "arguments": {"text": "served without the SDK"}}
    reply = server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    assert reply is not None and reply["result"]["isError"] is False
    assert reply["result"]["structuredContent"]["actor"] == "session"


def test_the_demo_without_matplotlib_says_so_before_making_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide(monkeypatch, "matplotlib")
    result = run_cli("demo", "--dir", str(tmp_path / "demo"))
    assert result.exit_code == 4
    assert result.output == (
        "error: the demo's search report needs matplotlib, which is not installed: "
        "pip install 'evolving-agent[search]'\n"
    )
    assert not (tmp_path / "demo").exists()


def test_the_openai_reflector_without_its_client_is_unavailable_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hide(monkeypatch, "openai")
    reflector = OpenAIReflector(ReflectorSettings(name="openai"), prompts=lambda name: "")
    with pytest.raises(ReflectorUnavailable) as caught:
        reflector.complete("a prompt")
    assert str(caught.value) == (
        "the openai reflector needs the openai client, which is not installed: "
        "pip install 'evolving-agent[openai]'"
    )
