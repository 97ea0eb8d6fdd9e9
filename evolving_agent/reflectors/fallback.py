"""Retry once, then fall back to ``rules``: how a job asks a reflector for an answer.

A backend that never answers (missing program, timeout, HTTP error) falls back at
once and names the cause.  Invalid output (a schema error, or a ``check`` that refuses
its meaning in context) is retried once with the reason as feedback; a second refusal
falls back to the deterministic ``rules`` reflector and says so, so a job never writes
malformed text into Today.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import first_error
from evolving_agent.records import record
from evolving_agent.reflectors.base import Reflector, ReflectorError, ReflectorUnavailable
from evolving_agent.reflectors.rules import RulesReflector

R = TypeVar("R", bound=BaseModel)


@record
class Reflected:
    """A validated reflection, which reflector produced it, and why it fell back (if it did)."""

    value: Any
    used: str
    fallback: str | None = None


def reflect_with_fallback(
    reflector: Reflector,
    call: Callable[[Reflector, str | None], R],
    check: Callable[[R], None],
) -> Reflected:
    """Ask ``reflector``; on invalid output retry once, then fall back to ``rules``.

    ``check`` raises ``ReflectorError`` for answers that parse but do not fit the
    context (a repeated carry type, an unknown hypothesis, an empty answer on a day
    with friction…).
    """
    feedback: str | None = None
    unavailable: str | None = None
    for _attempt in range(2):
        try:
            value = call(reflector, feedback)
            check(value)
            return Reflected(value, reflector.name)
        except ReflectorUnavailable as exc:
            # The backend never answered: not the model's fault, so no "refused" retry.
            unavailable = str(exc)
            break
        except ReflectorError as exc:
            feedback = str(exc).removeprefix("invalid reflector output: ")
        except ValidationError as exc:
            feedback = first_error(exc)
        if isinstance(reflector, RulesReflector):
            raise ReflectorError(f"the rules reflector produced invalid output: {feedback}")
    rules = RulesReflector()
    value = call(rules, None)
    check(value)
    if unavailable is not None:
        note = f"{reflector.name} reflector failed ({unavailable}); fell back to rules"
    else:
        note = (
            f"{reflector.name} reflector output was invalid twice ({feedback}); fell back to rules"
        )
    return Reflected(value, rules.name, note)
