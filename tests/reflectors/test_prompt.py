"""A prompt-backed reflector (``reflectors/prompt.py``): the nightly and the weekly job
each render their prompt file with the context, the answer's schema and the fenced
friction, and parse the answer as their own reflection (one ``_reflect`` for both)."""

from __future__ import annotations

import json
from datetime import date, datetime, time
from pathlib import Path

import pytest

from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.answers import NightlyReflection, WeeklyReflection
from evolving_agent.reflectors.base import ReflectorError
from evolving_agent.reflectors.context import NightlyContext, WeeklyContext
from evolving_agent.reflectors.prompt import PromptReflector
from tests.helpers.roots import fresh_root

DAY = date(2026, 11, 2)
PROMPT = "job $job\ncontext: $context\nschema: $schema\n$friction\n$feedback"


class Scripted(PromptReflector):
    """Answers with ``answer`` and keeps every prompt it was asked."""

    name = "scripted"

    def __init__(self, answer: str) -> None:
        super().__init__(lambda job: PROMPT.replace("$job", job))
        self.answer = answer
        self.asked: list[str] = []

    def complete(self, prompt: str) -> str:
        self.asked.append(prompt)
        return self.answer


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    root = fresh_root(tmp_path / "root")
    at = datetime.combine(DAY, time(10)).astimezone()
    Writer(root, "session").append("friction", "offered three options again", ts=at)
    return root


def test_the_nightly_prompt_carries_its_context_schema_friction_and_feedback(
    root: MemoryRoot,
) -> None:
    bias = "Give one answer, not a menu.\nYou offered three options again today."
    refl = Scripted("Here it is:\n" + json.dumps({"bias": bias}))
    ctx = NightlyContext(DAY, ScopedReader(root, "nightly", (DAY, DAY)), None)
    got = refl.nightly(context=ctx, feedback="bias too long")
    assert got == NightlyReflection(bias=bias)
    [prompt] = refl.asked
    assert prompt.startswith("job nightly\ncontext: {")
    assert '"day": "2026-11-02"' in prompt
    assert json.dumps(NightlyReflection.model_json_schema(), ensure_ascii=False) in prompt
    assert "BEGIN UNTRUSTED FRICTION" in prompt and "offered three options again" in prompt
    assert "Your previous answer was refused: bias too long." in prompt


def test_the_weekly_prompt_is_its_own_and_its_answer_a_weekly_reflection(
    root: MemoryRoot,
) -> None:
    refl = Scripted('{"proposals": []}')
    reader = ScopedReader(root, "weekly", evidence_window=(DAY, DAY))
    got = refl.weekly(context=WeeklyContext(week_end=DAY, reader=reader))
    assert got == WeeklyReflection(proposals=[])
    [prompt] = refl.asked
    assert prompt.startswith("job weekly\ncontext: {")
    assert '"week_end": "2026-11-02"' in prompt
    assert json.dumps(WeeklyReflection.model_json_schema(), ensure_ascii=False) in prompt
    assert "refused" not in prompt
    # A nightly answer is no weekly one: parsed as the job's own model, it is refused.
    refl.answer = '{"bias": "x"}'
    with pytest.raises(ReflectorError, match="invalid reflector output"):
        refl.weekly(context=WeeklyContext(week_end=DAY, reader=reader))
