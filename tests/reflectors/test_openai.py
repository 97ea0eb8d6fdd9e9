"""The openai reflector's endpoint when ``schedule.yaml`` names none (issue 34)."""

from __future__ import annotations

import pytest

from evolving_agent.reflectors.openai import (
    OFFICIAL_BASE_URL,
    OpenAIReflector,
    key_for,
    resolve_endpoint,
)
from evolving_agent.reflectors.settings import ReflectorSettings


def reflector(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], **written: str
) -> OpenAIReflector:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # As `schedule.yaml`'s reflector part is read: only what is written counts as set.
    settings = ReflectorSettings.model_validate({"name": "openai", **written})
    return OpenAIReflector(settings, prompts=lambda job: "$context")


def test_with_only_openai_api_key_set_the_official_api_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A newcomer's `--reflector openai` with OPENAI_API_KEY set went to a local Ollama.
    r = reflector(monkeypatch, {"OPENAI_API_KEY": "sk-test-123"})
    assert (r.settings.base_url, r.settings.model) == (OFFICIAL_BASE_URL, "gpt-4o-mini")
    assert key_for(r.settings) == ("sk-test-123", None)  # and the key goes with it


def test_a_written_base_url_or_model_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"OPENAI_API_KEY": "sk-test-123"}
    local = reflector(monkeypatch, env, base_url="http://127.0.0.1:8000/v1")
    assert local.settings.base_url == "http://127.0.0.1:8000/v1"
    assert key_for(local.settings)[0] is None  # the key still never leaves its service
    assert reflector(monkeypatch, env, model="gpt-4.1").settings.model == "gpt-4.1"


def test_without_a_key_it_is_the_local_server_and_openai_base_url_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert reflector(monkeypatch, {}).settings.base_url == "http://127.0.0.1:11434/v1"
    via_env = reflector(monkeypatch, {"OPENAI_BASE_URL": "http://10.0.0.5:8000/v1"})
    assert via_env.settings.base_url == "http://10.0.0.5:8000/v1"


def test_another_key_variable_is_not_taken_for_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    settings = ReflectorSettings.model_validate({"name": "openai", "api_key_env": "OLLAMA_KEY"})
    assert resolve_endpoint(settings).base_url == "http://127.0.0.1:11434/v1"
