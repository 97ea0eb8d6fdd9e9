"""What probes record and report: answers (Evidence ``probe`` data), verdicts, the diff.

The probe file itself is Canon and lives below, in
:mod:`evolving_agent.memory.canon.probe_file` (the writer validates it); re-exported here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.memory.canon.probe_file import (  # noqa: F401  # re-exported
    PROBES_FILE,
    Probe,
    ProbeChecks,
    ProbesFile,
)
from evolving_agent.probes.receipt import Receipt

SCHEMA_VERSION = 2  # 2: ``repeat`` (one probe asked R times in one run)
MAX_ANSWER_CHARS = 4000  # an answer is evidence of how a model reads Canon, not a transcript

VerdictStatus = Literal["honours", "breaks", "undecided"]


class ProbeAnswerData(BaseModel):
    """The ``data`` of a ``probe`` Evidence record: one model's answer to one probe."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(SCHEMA_VERSION, le=SCHEMA_VERSION)
    run: str  # the probe run this answer belongs to
    model: str
    reflector: str
    probe: str
    entry: str  # the probe's reference, "habits: Lead with the answer"
    entry_text: str  # the Canon entry it resolved to
    canon_commit: str | None
    context_sha256: str  # sha256 of the exact boot context the model was given
    prompt_sha256: str
    answer: str  # masked and bounded
    truncated: bool = False
    error: str | None = None  # the backend gave no answer (then ``answer`` is empty)
    repeat: int = Field(1, ge=1)  # which of the run's R answers to this probe (v1: one)


class JudgeVerdict(BaseModel):
    """A judge model's structured answer (validated; invalid twice means undecided)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    honours: bool
    reason: str = Field(min_length=1, max_length=300)


class Verdict(BaseModel):
    """Whether one answer honours its probe's Canon entry, and why."""

    status: VerdictStatus
    failed: list[str] = Field(default_factory=list)  # the human-readable rules it broke
    judge: str | None = None  # None: no judge; else "honours" / "breaks" / "undecided"
    judge_reason: str = ""

    def why(self) -> str:
        parts = list(self.failed)
        if self.judge is not None and self.judge != "honours":
            parts.append(
                f"judge: {self.judge}" + (f" ({self.judge_reason})" if self.judge_reason else "")
            )
        return "; ".join(parts)


class AnswerView(BaseModel):
    evidence_id: str
    ts: datetime
    model: str
    canon_commit: str | None
    answer: str
    error: str | None = None
    verdict: Verdict


class ProbeRow(BaseModel):
    """One probe with the two models' latest answers side by side."""

    probe: str
    entry: str
    entry_text: str
    implies: str
    a: AnswerView | None  # the latest answer of the latest run
    b: AnswerView | None
    a_all: list[AnswerView] = Field(default_factory=list)  # that run's every answer (repeats)
    b_all: list[AnswerView] = Field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return (
            self.a is not None
            and self.b is not None
            and self.a.verdict.status == "honours"
            and self.b.verdict.status != "honours"
        )

    def _answers(self) -> tuple[list[AnswerView], list[AnswerView]]:
        a = self.a_all or ([self.a] if self.a else [])
        b = self.b_all or ([self.b] if self.b else [])
        return a, b

    @property
    def worse(self) -> bool:
        """B honours this probe in a smaller share of its answers than A does."""
        a, b = self._answers()
        return bool(a and b) and _honoured_share(b) < _honoured_share(a)

    def witness(self) -> tuple[AnswerView, AnswerView] | None:
        """An answer of A's that honours the probe and one of B's that does not."""
        a, b = self._answers()
        # The latest answers first (what the row shows), else the run's first that fits.
        good = next((v for v in [self.a, *a] if v and v.verdict.status == "honours"), None)
        bad = next((v for v in [self.b, *b] if v and v.verdict.status != "honours"), None)
        return (good, bad) if good and bad else None


def _honoured_share(views: list[AnswerView]) -> float:
    return sum(v.verdict.status == "honours" for v in views) / len(views)


class Continuity(BaseModel):
    """Probes honoured before and after a model change (only probes both answered)."""

    model_a: str
    model_b: str
    compared: int
    honoured_a: int
    honoured_b: int
    kept: int  # honoured by both
    regressed: list[str]  # honoured by A, not by B
    improved: list[str]  # honoured by B, not by A
    undecided: list[str]  # probes whose verdict for either model is undecided

    def line(self) -> str:
        share = f" ({self.kept / self.honoured_a:.0%})" if self.honoured_a else ""
        return (
            f"continuity {self.model_a} -> {self.model_b}: {self.honoured_a} of "
            f"{self.compared} probes honoured before, {self.honoured_b} after; "
            f"{self.kept} of {self.honoured_a} kept{share}"
        )


class ProbeRunResult(BaseModel):
    run: str
    model: str
    reflector: str
    canon_commit: str | None
    context_sha256: str
    answered: list[str]  # probe keys
    repeats: int = 1  # answers asked of each probe
    failed: dict[str, str] = Field(default_factory=dict)  # probe key -> why no answer
    skipped: dict[str, str] = Field(default_factory=dict)  # probe key -> why not run
    record_ids: list[str]


class ProbeDiff(BaseModel):
    model_a: str
    model_b: str
    judge: str | None
    rows: list[ProbeRow]
    continuity: Continuity
    queued: list[str] = Field(default_factory=list)  # review ids of new probe cards
    already_queued: list[str] = Field(default_factory=list)
    record_id: str | None = None  # the ``job`` record of this diff, when it queued cards
    notes: list[str] = Field(default_factory=list)
    receipt: Receipt | None = None  # adherence per entry and overall, with intervals
    hold: str | None = None  # the review id of the card holding the upgrade, if queued
