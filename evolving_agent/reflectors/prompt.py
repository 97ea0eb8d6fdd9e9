"""The model-backed reflector: prompt file from ``crons/`` → text → JSON → answer model.

:class:`PromptReflector` implements both interfaces of :mod:`evolving_agent.reflectors.base`
over one abstract :meth:`~PromptReflector.complete`; every backend with a model behind it
(command, openai and the CLI presets) is one.
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import first_error
from evolving_agent.memory.base.redact import redact
from evolving_agent.reflectors.answers import NightlyReflection, WeeklyReflection
from evolving_agent.reflectors.base import ProbeAnswerer, Reflector, ReflectorError
from evolving_agent.reflectors.context import NightlyContext, WeeklyContext

PROBE_PROMPT = """$context

---

You are the assistant described above. Reply to the user's next message as you would
in a session. Reply in plain text; do not run tools.

The user says:

$prompt
"""


def render_probe(context: str, prompt: str) -> str:
    """One text holding the boot context and the user's message (for stdin backends)."""
    from string import Template

    return redact(Template(PROBE_PROMPT).safe_substitute(context=context, prompt=prompt))


M = TypeVar("M", bound=BaseModel)


def parse_json_answer(text: str, model: type[M]) -> M:
    """The JSON object in a model's answer (bare, fenced, or the last JSON line)."""
    candidates = [text.strip()]
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    if fenced:
        candidates.append(fenced.group(1))
    lines = [ln for ln in text.strip().splitlines() if ln.strip().startswith("{")]
    if lines:
        candidates.append(lines[-1])
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last_error = "no JSON object in the answer"
    for c in candidates:
        try:
            data = json.loads(c)
        except ValueError:
            continue
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            last_error = first_error(exc, whole="(answer)")
            break
    raise ReflectorError(f"invalid reflector output: {last_error}")


class PromptReflector(Reflector, ProbeAnswerer):
    """A model-backed reflector: render the job's prompt file, ask, parse JSON."""

    def __init__(self, prompts: Callable[[str], str]) -> None:
        self._prompts = prompts

    @abstractmethod
    def complete(self, prompt: str) -> str:
        """Send ``prompt`` to the model and return its raw text answer."""

    def answer_probe(self, *, context: str, prompt: str) -> str:
        """By default the context and the message go to :meth:`complete` as one text;
        a chat backend overrides this to send the context as the system prompt."""
        return self.complete(render_probe(context, prompt))

    def render(
        self,
        job: str,
        data: dict[str, Any],
        schema: dict[str, Any],
        feedback: str | None,
        friction: str = "",
    ) -> str:
        from string import Template

        note = ""
        if feedback:
            note = f"Your previous answer was refused: {feedback}. Answer again with valid JSON."
        template = self._prompts(job)
        if friction and "$friction" not in template:
            template += "\n$friction\n"  # an older edited prompt copy: still fence it
        prompt = Template(template).safe_substitute(
            context=json.dumps(data, indent=2, ensure_ascii=False),
            schema=json.dumps(schema, ensure_ascii=False),
            friction=friction,
            feedback=note,
        )
        return redact(prompt)  # no secret leaves the machine in a prompt

    def nightly(self, *, context: NightlyContext, feedback: str | None = None) -> NightlyReflection:
        return self._reflect("nightly", context, NightlyReflection, feedback)

    def weekly(self, *, context: WeeklyContext, feedback: str | None = None) -> WeeklyReflection:
        return self._reflect("weekly", context, WeeklyReflection, feedback)

    def _reflect(
        self,
        job: str,
        context: NightlyContext | WeeklyContext,
        answer: type[M],
        feedback: str | None,
    ) -> M:
        """Ask for ``job``'s reflection: its prompt with the context, the answer's JSON
        schema and the fenced friction; the answer parsed as ``answer``."""
        data, schema = context.as_prompt_data(), answer.model_json_schema()
        prompt = self.render(job, data, schema, feedback, context.friction_block())
        return parse_json_answer(self.complete(prompt), answer)
