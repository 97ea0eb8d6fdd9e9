"""``--reflector claude`` / ``codex``: the presets' command lines, answers and containment.

The real CLIs drive these presets end to end in tests/integrations/test_real_clients.py;
here the argv, the answer parsing, the schedule.yaml name and the inherited Canon
containment are checked without them.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.jobs.dispatch import resolve_reflector
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors import claude, codex, gemini, opencode
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
        "--no-session-persistence", "--setting-sources", "",
    ]  # fmt: skip


def test_reflector_cmd_names_the_program_and_extra_flags(root: MemoryRoot) -> None:
    refl = resolve_reflector(root, "claude", "/opt/claude --model sonnet")
    assert refl.argv[:4] == ["/opt/claude", "--model", "sonnet", "-p"]  # type: ignore[attr-defined]


def test_codex_runs_in_an_empty_config_home_with_only_the_login_and_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "auth.json").write_text('{"token": "t"}')
    (home / "AGENTS.md").write_text("instructions the reflector must not get")
    (home / "config.toml").write_text(
        'model = "m"\nmodel_provider = "p"\n'
        '[model_providers.p]\nname = "p"\nbase_url = "http://127.0.0.1:1/v1"\n'
        "request_max_retries = 0\n"
        '[mcp_servers.evolving-agent]\ncommand = "evolving-agent"\n'
        '[hooks]\nsession_start = "x"\n'
    )
    monkeypatch.setenv("CODEX_HOME", str(home))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    refl = codex.CodexReflector("codex", prompts=lambda job: "")
    env = refl.call_env(scratch)

    made = Path(env["CODEX_HOME"])
    assert sorted(p.name for p in made.iterdir()) == ["auth.json", "config.toml"]
    config = tomllib.loads((made / "config.toml").read_text())
    assert config == {
        "model": "m",
        "model_provider": "p",
        "model_providers": {
            "p": {"name": "p", "base_url": "http://127.0.0.1:1/v1", "request_max_retries": 0}
        },
    }
    assert refl.preset_argv() == [
        "codex", "exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check",
        "--ephemeral", "-",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("cls", "flags"),
    [
        (claude.ClaudeReflector, list(claude.PRESET_ARGS)),
        (gemini.GeminiReflector, list(gemini.PRESET_ARGS)),
        (opencode.OpenCodeReflector, list(opencode.PRESET_ARGS)),
        (codex.CodexReflector, [*codex.PRESET_ARGS, "-"]),
    ],
)
def test_each_preset_puts_its_flags_after_the_program_and_the_users_flags(
    cls: type[claude.ClaudeReflector], flags: list[str]
) -> None:
    # One preset_argv for all four (command.CliPresetReflector), each its own flags.
    assert cls(prompts=lambda job: "").preset_argv() == [cls.program, *flags]
    mine = cls("/opt/bin/x --model 'a b'", prompts=lambda job: "")
    assert mine.preset_argv() == ["/opt/bin/x", "--model", "a b", *flags]
    assert mine.argv == mine.preset_argv()


def test_answers_and_failures_are_read_from_each_clis_output() -> None:
    ok = json.dumps({"type": "result", "is_error": False, "result": '{"bias": "x"}'})
    assert claude.answer_of(ok) == '{"bias": "x"}'
    with pytest.raises(
        ReflectorUnavailable, match=r"^claude: API Error: rate limited \(HTTP 429\)$"
    ):
        claude.answer_of(json.dumps({"is_error": True, "api_error_status": 429,
                                     "result": "API Error: rate limited"}))  # fmt: skip
    events = [
        {"type": "item.completed", "item": {"type": "agent_message", "text": "draft"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "{}"}},
    ]
    assert codex.answer_of("\n".join(map(json.dumps, events))) == "{}"
    failed = {"type": "turn.failed", "error": {"message": "exceeded retry limit, 429"}}
    with pytest.raises(ReflectorUnavailable, match="^codex: exceeded retry limit, 429$"):
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


def test_gemini_and_opencode_answers_and_errors_are_read_from_their_json() -> None:
    assert gemini.answer_of(json.dumps({"session_id": "s", "response": '{"bias": "x"}'})) == (
        '{"bias": "x"}'
    )
    api = '[API Error: {"error":{"code":429,"message":"Quota exceeded"}}]'
    with pytest.raises(ReflectorUnavailable, match="^gemini: HTTP 429: Quota exceeded$"):
        gemini.answer_of(json.dumps({"error": {"type": "unknown", "message": api}}))
    text = {"type": "text", "part": {"type": "text", "text": '{"bias": "y"}'}}
    assert opencode.answer_of(json.dumps(text)) == '{"bias": "y"}'
    data = {"message": "bad key\nmore", "statusCode": 401}
    error = {"type": "error", "error": {"name": "APIError", "data": data}}
    with pytest.raises(ReflectorUnavailable, match=r"^opencode: APIError \(HTTP 401\): bad key$"):
        opencode.answer_of(json.dumps(error))


def test_a_failing_cli_is_named_by_its_own_first_error_line(tmp_path: Path) -> None:
    # Regression: "claude: exit 1" where the CLI itself had said why.
    script = tmp_path / "fake-cli"
    script.write_text(
        "#!/bin/sh\necho 'Warning: 256-color support not detected.' >&2\n"
        "echo 'Error: Not logged in · Please run /login' >&2\n"
        "echo '    at main (cli.js:1:1)' >&2\nexit 1\n"
    )
    script.chmod(0o755)
    for preset in (gemini.GeminiReflector, opencode.OpenCodeReflector):
        with pytest.raises(ReflectorUnavailable) as caught:
            preset(str(script), prompts=lambda job: "").complete("prompt")
        assert str(caught.value) == f"{script}: Error: Not logged in · Please run /login (exit 1)"


def test_gemini_and_opencode_presets_carry_only_the_login_and_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "oauth-personal"}}, "model": {"name": "m"},
        "hooks": {"SessionStart": []}, "mcpServers": {"evolving-agent": {"command": "x"}},
    }))  # fmt: skip
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.json").write_text(json.dumps({
        "model": "p/m", "provider": {"p": {"npm": "x"}}, "mcp": {"evolving-agent": {}},
        "instructions": ["a.md"], "plugin": ["p"],
    }))  # fmt: skip
    monkeypatch.setenv("HOME", str(home))
    for var in ("GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "OPENCODE_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    genv = gemini.GeminiReflector(prompts=lambda job: "").call_env(scratch)
    made = Path(genv["GEMINI_CLI_HOME"]) / ".gemini"
    assert genv["GEMINI_CLI_NO_RELAUNCH"] == "true"  # one process, not a second bigger one
    assert sorted(p.name for p in made.iterdir()) == ["oauth_creds.json", "settings.json"]
    assert json.loads((made / "settings.json").read_text()) == {
        "general": {"maxAttempts": 3},
        "security": {"auth": {"selectedType": "oauth-personal"}},
        "model": {"name": "m"},
    }
    oenv = opencode.OpenCodeReflector(prompts=lambda job: "").call_env(scratch)
    config = json.loads(Path(oenv["OPENCODE_CONFIG"]).read_text())
    assert config["model"] == "p/m" and config["provider"] == {"p": {"npm": "x"}}
    assert (config["mcp"], config["instructions"], config["plugin"]) == ({}, [], [])
    assert config["permission"] == {"*": "deny"}
    assert list(Path(oenv["XDG_CONFIG_HOME"]).iterdir()) == []


NOISE = [
    "Warning: 256-color support not detected.",
    "Ripgrep is not available. Falling back to GrepTool.",
    "    at main (file:///usr/lib/node_modules/cli.js:1:1)",
    "}",
    "  status: 429",
    "",
    "\x1b[0m",
]


@given(
    noise=st.lists(st.sampled_from(NOISE), max_size=6),
    reason=st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1
    ).filter(
        lambda t: (
            t.strip()
            and not t.strip().lower().startswith(("warn", "at ", "status"))
            and t.strip() not in ("{", "}", "[", "]", "{,", "},", "[,", "],")
        )
    ),
    tail=st.lists(st.text(max_size=40), max_size=4),
    code=st.integers(min_value=1, max_value=255),
)
def test_the_failure_reason_is_the_first_line_that_says_something(
    noise: list[str], reason: str, tail: list[str], code: int
) -> None:
    from evolving_agent.process import Completed
    from evolving_agent.reflectors.command import first_reason

    stderr = "\n".join([*noise, reason, *tail])
    got = first_reason(Completed(code, "", stderr))
    assert "\n" not in got
    status = "command not found (exit 127)" if code == 127 else f"exit {code}"
    assert got == f"{reason.strip()[:300]} ({status})"
