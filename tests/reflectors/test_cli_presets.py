"""``--reflector claude`` / ``codex``: the presets' command lines, answers and containment.

The real CLIs drive these presets end to end in tests/integrations/test_real_clients.py;
here the argv, the answer parsing, the schedule.yaml name and the inherited Canon
containment are checked without them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evolving_agent.jobs.dispatch import resolve_reflector
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors import claude, codex
from evolving_agent.reflectors.base import ReflectorUnavailable
from tests.helpers import root_with_friction, run_proc, set_reflector

HOSTILE = str(Path(__file__).resolve().parents[1] / "helpers" / "hostile_reflector.py")
DAY = "2026-11-02"


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return root_with_friction(tmp_path / "memory", DAY)


def test_schedule_yaml_names_a_preset_and_it_is_guarded(root: MemoryRoot) -> None:
    set_reflector(root, " claude\n")
    refl = resolve_reflector(root)
    assert isinstance(refl, claude.ClaudeReflector)
    assert refl.root == root  # Canon is snapshotted around every call
    assert refl.argv == [
        "claude", "-p", "--output-format", "json", "--tools", "", "--strict-mcp-config",
        "--no-session-persistence",
    ]  # fmt: skip


def test_reflector_cmd_names_the_program_and_extra_flags(root: MemoryRoot) -> None:
    refl = resolve_reflector(root, "claude", "/opt/claude --model sonnet")
    assert refl.argv[:4] == ["/opt/claude", "--model", "sonnet", "-p"]  # type: ignore[attr-defined]


def test_codex_switches_off_every_configured_mcp_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[mcp_servers.evolving-agent]\ncommand = "evolving-agent"\n'
        '[mcp_servers.other]\ncommand = "x"\n'
    )
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert codex.mcp_server_names() == ["evolving-agent", "other"]
    seen: list[list[str]] = []

    class Probe(codex.CodexReflector):
        def complete(self, prompt: str) -> str:
            try:
                return super().complete(prompt)
            finally:
                seen.append(self.argv)

    with pytest.raises(ReflectorUnavailable):  # `true` prints no agent message
        Probe("true", prompts=lambda job: "").complete("prompt")
    assert seen[0] == [
        "true", "exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check",
        "--ephemeral", "-c", "mcp_servers.evolving-agent.enabled=false",
        "-c", "mcp_servers.other.enabled=false", "-",
    ]  # fmt: skip


def test_answers_and_failures_are_read_from_each_clis_output() -> None:
    ok = json.dumps({"type": "result", "is_error": False, "result": '{"bias": "x"}'})
    assert claude.answer_of(ok) == '{"bias": "x"}'
    with pytest.raises(ReflectorUnavailable, match=r"\(HTTP 429\): API Error"):
        claude.answer_of(json.dumps({"is_error": True, "api_error_status": 429,
                                     "result": "API Error: rate limited"}))  # fmt: skip
    events = [
        {"type": "item.completed", "item": {"type": "agent_message", "text": "draft"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "{}"}},
    ]
    assert codex.answer_of("\n".join(map(json.dumps, events))) == "{}"
    failed = {"type": "turn.failed", "error": {"message": "exceeded retry limit, 429"}}
    with pytest.raises(ReflectorUnavailable, match="codex turn failed: exceeded retry"):
        codex.answer_of(json.dumps(failed))


def test_a_preset_that_edits_canon_fails_the_job_and_canon_is_restored(
    root: MemoryRoot, tmp_path: Path
) -> None:
    before = {p: p.read_bytes() for p in root.canon.rglob("*") if p.is_file()}
    proc = run_proc(
        "run", "nightly", "--date", DAY, "--reflector", "claude",
        "--reflector-cmd", f"{sys.executable} {HOSTILE}",
        env={"EA_HOSTILE": "canon", "EA_HOSTILE_LOG": str(tmp_path / "cwd.log")},
    )  # fmt: skip
    assert proc.returncode == 5, proc.stderr.decode()
    assert "the claude reflector changed canon/" in proc.stderr.decode()
    assert {p: p.read_bytes() for p in root.canon.rglob("*") if p.is_file()} == before
