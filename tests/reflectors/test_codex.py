"""The ``codex`` reflector (``reflectors/codex.py``): the answer read from ``exec --json``
events, and a config home that carries the user's model settings and nothing else."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.codex import answer_of, carried_config, codex_home


def _events(*events: object) -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n"


def test_the_answer_is_the_last_agent_message() -> None:
    out = _events(
        {"type": "thread.started"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "draft"}},
        {"type": "item.completed", "item": {"type": "reasoning", "text": "thinking"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": '{"bias": []}'}},
    )
    assert answer_of("warning: noise\n" + out) == '{"bias": []}'


def test_a_failed_turn_or_no_message_is_an_unavailable_backend() -> None:
    failed = _events({"type": "turn.failed", "error": {"message": "stream error: 429\nretry"}})
    with pytest.raises(ReflectorUnavailable, match=r"^codex: stream error: 429$"):
        answer_of(failed)
    with pytest.raises(ReflectorUnavailable, match="^codex: unauthorized"):
        answer_of(_events({"type": "error", "message": "unauthorized"}))
    with pytest.raises(ReflectorUnavailable, match="codex printed no agent_message"):
        answer_of(_events({"type": "thread.started"}))


def test_only_the_model_settings_are_carried(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'model = "o3"\nmodel_reasoning_effort = "high"\napproval_policy = "never"\n'
        '[mcp_servers.memory]\ncommand = "evolving-agent"\n'
        '[model_providers.local]\nbase_url = "http://127.0.0.1:8080/v1"\n'
    )
    carried = tomllib.loads(carried_config(tmp_path))
    assert carried == {
        "model": "o3",
        "model_reasoning_effort": "high",
        "model_providers": {"local": {"base_url": "http://127.0.0.1:8080/v1"}},
    }
    (tmp_path / "config.toml").write_text("not = [toml")
    assert carried_config(tmp_path) == ""
    assert carried_config(tmp_path / "none") == ""


def test_the_config_home_is_codex_home_or_home_dot_codex() -> None:
    assert codex_home({"CODEX_HOME": "/srv/codex", "HOME": "/h"}) == Path("/srv/codex")
    assert codex_home({"HOME": "/h"}) == Path("/h/.codex")


def test_a_provider_whose_name_needs_quoting_is_carried_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[model_providers."my.provider"]\nbase_url = "http://h/\\u007f"\n', encoding="utf-8"
    )
    carried = tomllib.loads(carried_config(tmp_path))
    assert carried == {"model_providers": {"my.provider": {"base_url": "http://h/\x7f"}}}
