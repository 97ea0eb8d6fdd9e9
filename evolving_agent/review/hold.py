"""The drift watch's hold: a flagged hypothesis waits until the human has looked.

One rule for every door into Canon: the monthly job's queue, ``review approve`` and the
review page all ask :func:`holds`, which runs the drift watch over the six weeks up to
a day (default: the last day with Evidence) and keeps the hypotheses with a flag whose
evidence the human has not acknowledged.  The monthly job leaves a held hypothesis's
proposals out of the queue (they wait, and do not use the month's room);
:func:`require_not_held` refuses to approve a held review.  :func:`acknowledge` is the
human's look: a decision file under ``reviews/decisions/drift-acks/`` (SSH-signed like
the other decisions when signing is on) and a ``review`` Evidence record.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from evolving_agent.errors import EXIT_DENIED, EvolvingAgentError, InvalidInput
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import now
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.review.drift import ACKS_DIR, DriftAck, DriftFlag, watch
from evolving_agent.review.store import Review, check_person, dump

_FILE_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,100}")


def ack_command(hypothesis: str) -> str:
    return f"evolving-agent drift ack {hypothesis}"


@record(frozen=True)
class Hold:
    """The flags holding one hypothesis, not yet acknowledged."""

    hypothesis: str
    flags: list[DriftFlag]

    @property
    def evidence_ids(self) -> list[str]:
        return list(dict.fromkeys(i for f in self.flags for i in f.evidence_ids))

    @property
    def summary(self) -> str:
        """The first flag as "kind: title" (and how many more)."""
        first = self.flags[0]
        more = f" (and {len(self.flags) - 1} more flag(s))" if len(self.flags) > 1 else ""
        return f"{first.kind}: {first.title}{more}"

    @property
    def command(self) -> str:
        return ack_command(self.hypothesis)

    def to_json(self) -> dict[str, object]:
        return {"flags": [f.to_json() for f in self.flags], "acknowledge": self.command}

    def notice(self) -> str:
        """What a card, ``review list`` and ``review show`` say about the hold."""
        return f"held by the drift watch: {self.summary}; acknowledge with '{self.command}'"


def holds(root: MemoryRoot, *, until: date | None = None) -> dict[str, Hold]:
    """Hypotheses held by the drift watch over the six weeks up to ``until``."""
    report = watch(root, end=until, today=until)
    return {hid: Hold(hid, flags) for hid, flags in report.held.items()}


class ReviewHeld(EvolvingAgentError):
    """Approving a review whose hypothesis the drift watch holds, before the human looked."""

    exit_code = EXIT_DENIED

    def __init__(self, review_id: str, hold: Hold) -> None:
        self.review_id = review_id
        self.hold = hold
        super().__init__(
            f"refused: review {review_id} is {hold.notice()} (the flag's evidence: "
            f"'evolving-agent drift'); nothing was written"
        )


def hold_on(root: MemoryRoot, review: Review) -> Hold | None:
    """The hold on a pending review's hypothesis, if any (a probe card has none)."""
    if review.status != "pending" or not review.pending.hypothesis:
        return None
    return holds(root).get(review.pending.hypothesis)


def require_not_held(root: MemoryRoot, review: Review) -> None:
    hold = hold_on(root, review)
    if hold is not None:
        raise ReviewHeld(review.id, hold)


class NothingHeld(InvalidInput):
    def __init__(self, hypothesis: str) -> None:
        super().__init__(
            f"nothing holds {hypothesis} now ('evolving-agent drift' lists what is flagged "
            "and what it holds)"
        )


@record(frozen=True)
class AckResult:
    hold: Hold
    path: Path  # the decision file
    record_id: str  # the Evidence record


def acknowledge(root: MemoryRoot, hypothesis: str, *, by: str) -> AckResult:
    """The human has looked at every flag holding ``hypothesis``: record it."""
    check_person(by)
    hold = holds(root).get(hypothesis)
    if hold is None:
        raise NothingHeld(hypothesis)
    if not _FILE_SAFE.fullmatch(hypothesis):  # it names the file; Evidence text is not trusted
        raise InvalidInput(f"hypothesis id {hypothesis!r} cannot name a file")
    when = now()
    ack = DriftAck(
        hypothesis=hypothesis,
        evidence_ids=hold.evidence_ids,
        flags=[f"{f.kind}: {f.title}" for f in hold.flags],
        by=by,
        ts=when,
    )
    rel = f"{ACKS_DIR}/{hypothesis}-{when.strftime('%Y%m%dT%H%M%S%f')}.json"
    human = Writer(root, "human")
    try:
        path = human.write("decisions", rel, dump(ack))  # signed here when signing is on
    except BaseException:
        human.delete("decisions", rel)  # an unsigned look must not stay behind
        raise
    rec = human.append(
        "review",
        f"looked at the drift flag(s) on {hypothesis}: {hold.summary}",
        data={
            "action": "drift-ack",
            "hypothesis": hypothesis,
            "evidence_ids": hold.evidence_ids,
            "flags": ack.flags,
            "by": by,
            "file": rel,
        },
    )
    return AckResult(hold, path, rec.id)
