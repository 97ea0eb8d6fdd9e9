"""Every model backend answers a probe through the one ``answer_probe`` contract.

``command`` pipes boot's context and the message as one text; ``openai`` sends the
context as the system prompt and the probe as the user's message, in plain text (no
JSON mode), to a loopback chat-completions server that answers like the fake models.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes.diff import diff_probes
from evolving_agent.probes.run import run_probes
from evolving_agent.reflectors import get_reflector
from evolving_agent.reflectors.base import ProbeAnswerer
from evolving_agent.reflectors.openai import OpenAIReflector
from evolving_agent.reflectors.prompt import render_probe
from evolving_agent.reflectors.settings import REFLECTOR_NAMES, ReflectorSettings
from tests.helpers.chat_server import ChatServer, Reply, completion
from tests.helpers.probe_fakes import ANSWERS, fake
from tests.helpers.roots import fresh_root


def _probe_chat() -> ChatServer:
    """Answers in the style named by the request's model."""

    def answer(body: dict[str, Any], _n: int) -> Reply:
        said = body["messages"][-1]["content"].lower()
        key = "grep" if "grep" in said else "branches"
        return completion(body["model"], ANSWERS[body["model"]][key])

    return ChatServer(answer)


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with _probe_chat() as server:
        yield server


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _openai(base_url: str, model: str) -> OpenAIReflector:
    settings = ReflectorSettings(name="openai", base_url=base_url, model=model, api_key_env=None)
    return OpenAIReflector(settings, prompts=lambda _job: "")


def test_openai_sends_boot_as_the_system_prompt_in_plain_text(
    root: MemoryRoot, chat: ChatServer
) -> None:
    context = build_boot(root).markdown()
    run_probes(root, model="chat-honest", backend=_openai(chat.base_url, "honest"))
    run_probes(root, model="chat-drift", backend=_openai(chat.base_url, "drifting"))
    first = chat.requests[0]
    assert first["messages"] == [
        {"role": "system", "content": context},
        {"role": "user", "content": "What does the -n flag of grep do?"},
    ]
    assert "response_format" not in first  # an answer to a person, not JSON
    d = diff_probes(root, queue=False)
    assert (d.model_a, d.model_b) == ("chat-honest", "chat-drift")
    assert d.continuity.regressed == ["shell-flag", "unclear-cleanup"]


@pytest.mark.parametrize("name", [n for n in REFLECTOR_NAMES if n != "rules"])
def test_every_model_backend_is_a_probe_answerer(name: str) -> None:
    backend = get_reflector(name, command=fake("honest"))
    assert isinstance(backend, ProbeAnswerer)
    assert not isinstance(get_reflector("rules"), ProbeAnswerer)


def test_command_backends_get_context_then_the_message() -> None:
    text = render_probe("# Boot context: Ada\n", "token=abcdefghijklmnop1234 what now?")
    assert text.startswith("# Boot context: Ada\n")
    assert text.rstrip().endswith("what now?")
    assert "abcdefghijklmnop1234" not in text  # a secret never leaves in a prompt
