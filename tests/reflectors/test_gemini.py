"""The ``gemini`` reflector (``reflectors/gemini.py``): the answer read from Gemini CLI's
JSON, its API errors named, and the user's settings carried without their tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.gemini import (
    MAX_ATTEMPTS,
    answer_of,
    api_error_text,
    carried_settings,
    gemini_dir,
)


def test_the_answer_is_the_response_after_any_preamble() -> None:
    out = 'Loaded cached credentials.\n{"response": "{\\"bias\\": []}", "stats": {}}'
    assert answer_of(out) == '{"bias": []}'


def test_errors_and_missing_responses_are_an_unavailable_backend() -> None:
    raw = '[API Error: {"error":{"code":429,"message":"Quota exceeded"}}]'
    with pytest.raises(ReflectorUnavailable, match="^gemini: HTTP 429: Quota exceeded$"):
        answer_of(json.dumps({"error": {"message": raw}}))
    with pytest.raises(ReflectorUnavailable, match="gemini printed no response"):
        answer_of(json.dumps({"stats": {}}))
    with pytest.raises(ReflectorUnavailable, match="gemini printed no JSON result"):
        answer_of("nothing")
    assert api_error_text("plain\nsecond") == "plain"


def test_only_the_login_choice_and_model_are_carried(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "oauth-personal"}, "folderTrust": False},
                "model": {"name": "gemini-2.5-pro", "maxSessionTurns": 99},
                "mcpServers": {"memory": {"command": "evolving-agent"}},
                "hooks": {"SessionStart": []},
            }
        )
    )
    assert carried_settings(tmp_path) == {
        "general": {"maxAttempts": MAX_ATTEMPTS},
        "security": {"auth": {"selectedType": "oauth-personal"}},
        "model": {"name": "gemini-2.5-pro"},
    }
    (tmp_path / "settings.json").write_text("[1, 2]")
    assert carried_settings(tmp_path) == {"general": {"maxAttempts": MAX_ATTEMPTS}}


def test_the_folder_follows_gemini_cli_home() -> None:
    assert gemini_dir({"GEMINI_CLI_HOME": "/g", "HOME": "/h"}) == Path("/g/.gemini")
    assert gemini_dir({"HOME": "/h"}) == Path("/h/.gemini")
