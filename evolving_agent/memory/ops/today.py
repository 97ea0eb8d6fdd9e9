"""Today: the bias (2-3 executable lines) and one typed carry-forward.

Written whole by the nightly job (or the human); read by boot.  The carry type is
meaningful: each says what tomorrow does with the hypothesis.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evolving_agent.memory.base.redact import redact
from evolving_agent.paths import MemoryRoot

if TYPE_CHECKING:
    from evolving_agent.memory.canon.policy import Actor

CarryType = Literal[
    "vow",  # keep it tomorrow
    "experiment",  # try it tomorrow
    "watchpoint",  # watch for it tomorrow
    "refusal",  # refuse it tomorrow
    "rule-for-tomorrow",  # enforce it tomorrow
    "question",  # ask the user tomorrow
    "release",  # stop doing it tomorrow
    "repair",  # make one specific slip right tomorrow
    "practice",  # deliberately rehearse it tomorrow
]
CARRY_TYPES: tuple[str, ...] = get_args(CarryType)

BIAS_FILE = "bias.md"
CARRY_FILE = "carry.json"

EMPTY_BIAS = "(no bias yet: the nightly job writes one after the first day with evidence)"
EMPTY_CARRY = "(no carry-forward yet)"


class Carry(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    type: CarryType
    text: str = Field(min_length=1)
    hypothesis: str | None = None
    date: dt.date | None = None

    @field_validator("text")
    @classmethod
    def _masked(cls, v: str) -> str:
        # The carry quotes friction; whatever slipped past Evidence's redaction stops here.
        return redact(v)


def write_today_file(root: MemoryRoot, actor: Actor, relpath: str, data: bytes) -> Path:
    """``write --as ACTOR today RELPATH``: secrets masked before the text lands in Today."""
    from evolving_agent.memory.authority import Writer

    try:
        data = redact(data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        pass  # not text: nothing boot would show, nothing to mask
    return Writer(root, actor).write("today", relpath, data, message=f"{actor} wrote {relpath}")
