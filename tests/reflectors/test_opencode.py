"""The ``opencode`` reflector (``reflectors/opencode.py``): the answer read from
``run --format json`` events, and a config that keeps the user's model and denies all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.opencode import answer_of, carried_config, user_configs


def _events(*events: object) -> str:
    return "\n".join(json.dumps(e) for e in events)


def test_the_answer_is_the_last_text_part() -> None:
    out = _events(
        {"type": "text", "part": {"text": "draft"}},
        {"type": "step_finish"},
        {"type": "text", "part": {"text": '{"bias": []}'}},
    )
    assert answer_of("noise\n" + out) == '{"bias": []}'


def test_an_error_event_or_no_text_is_an_unavailable_backend() -> None:
    err = {
        "type": "error",
        "error": {"name": "APIError", "data": {"statusCode": 401, "message": "bad key\nmore"}},
    }
    with pytest.raises(ReflectorUnavailable, match=r"^opencode: APIError \(HTTP 401\): bad key$"):
        answer_of(_events(err))
    with pytest.raises(ReflectorUnavailable, match="opencode printed no text"):
        answer_of(_events({"type": "step_start"}))


def test_the_users_model_is_carried_later_configs_win_and_everything_is_denied(
    tmp_path: Path,
) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "OPENCODE_CONFIG": str(tmp_path / "extra.json")}
    folder = tmp_path / "opencode"
    folder.mkdir()
    (folder / "opencode.jsonc").write_text(
        '{\n  // my setup\n  "model": "anthropic/claude-sonnet",\n'
        '  "mcp": {"memory": {"type": "local"}},\n  "permission": {"bash": "allow"},\n}\n'
    )
    (tmp_path / "extra.json").write_text('{"small_model": "openai/gpt-5-mini"}')
    assert user_configs(env)[-1] == tmp_path / "extra.json"
    config = carried_config(env)
    assert config["model"] == "anthropic/claude-sonnet"
    assert config["small_model"] == "openai/gpt-5-mini"
    assert config["permission"] == {"*": "deny"} and config["mcp"] == {}
    assert config["instructions"] == [] and config["plugin"] == []
    # One model call a reflection: no session title asked for, no snapshot of the scratch.
    assert config["agent"] == {"title": {"disable": True}} and config["snapshot"] is False
