"""The ``claude`` reflector (``reflectors/claude.py``): its flags, its retry cap, and the
answer (or the failure) read from Claude Code's JSON result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.claude import (
    DEFAULT_MAX_RETRIES,
    MAX_RETRIES_ENV,
    PRESET_ARGS,
    ClaudeReflector,
    answer_of,
)


def test_no_tool_no_mcp_server_and_no_settings_are_given_to_the_model() -> None:
    flags = list(PRESET_ARGS)
    assert flags[flags.index("--tools") + 1] == ""
    assert "--strict-mcp-config" in flags and "--mcp-config" not in flags
    assert flags[flags.index("--setting-sources") + 1] == ""


def test_claudes_own_retries_are_capped_unless_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call_env = ClaudeReflector.call_env
    monkeypatch.delenv(MAX_RETRIES_ENV, raising=False)
    assert call_env(None, tmp_path) == {MAX_RETRIES_ENV: DEFAULT_MAX_RETRIES}  # type: ignore[arg-type]
    monkeypatch.setenv(MAX_RETRIES_ENV, "7")
    assert call_env(None, tmp_path) == {}  # type: ignore[arg-type]


def test_the_answer_is_the_result_text_even_after_log_lines() -> None:
    result = {"type": "result", "is_error": False, "result": '{"bias": ["x"]}'}
    assert answer_of("starting\n" + json.dumps(result)) == '{"bias": ["x"]}'
    assert answer_of(json.dumps(result, indent=2)) == '{"bias": ["x"]}'


def test_an_error_result_is_named_as_claude_names_it() -> None:
    login = {"is_error": True, "result": "Not logged in · Please run /login"}
    with pytest.raises(ReflectorUnavailable, match="^claude: Not logged in · Please run /login$"):
        answer_of(json.dumps(login))
    limited = {"is_error": True, "result": "Rate limited", "api_error_status": 429}
    with pytest.raises(ReflectorUnavailable, match=r"^claude: Rate limited \(HTTP 429\)$"):
        answer_of(json.dumps(limited))
    with pytest.raises(ReflectorUnavailable, match="claude printed no JSON result"):
        answer_of("Segmentation fault")
