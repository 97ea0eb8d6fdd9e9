"""A turn's aftermath, built in one place: its record, whether it improved, the best.

Both callers that play turns -- the runner and ``plateau-test`` -- hand a played turn
to :func:`turn_record` and fold the record into their :class:`Tally`.  The tally *is*
the search state past the records: the best (its score, its commit and the record that
made it) and every commit's known score, a fold of the records in log order, so a
resumed run rebuilds it from ``log.jsonl`` and gets what the live run had.

A turn *improved* when its score beats the best before it by more than the noise floor
(``reducer.better``); the records before it are those earlier in the log, which the
logical clock (``schedule.py``) makes the same on every run.  A tampered turn was never
judged: its commit stays unknown and it never improves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from evolving_agent.search.reducer import better
from evolving_agent.search.rundir import ForgetReason, TurnRecord, now_iso
from evolving_agent.search.schedule import Slot
from evolving_agent.search.turn import Played


@dataclass
class Tally:
    """The best so far and what each commit scored: a fold of records in log order."""

    minimize: bool
    floor: float
    best_score: float
    best_commit: str
    best: TurnRecord | None = None  # the record that made the best (None: the start)
    known: dict[str, float | None] = field(default_factory=dict)

    @classmethod
    def start(
        cls,
        score: float,
        commit: str,
        *,
        minimize: bool,
        floor: float,
        records: Iterable[TurnRecord] = (),
    ) -> Tally:
        tally = cls(minimize, floor, score, commit, known={commit: score})
        for record in records:
            tally.add(record)
        return tally

    def improves(self, score: float | None) -> bool:
        return score is not None and better(
            score, self.best_score, minimize=self.minimize, floor=self.floor
        )

    def add(self, record: TurnRecord) -> None:
        """The fold's step: ``record`` is the next one in the log."""
        if not record.tampered:
            self.known[record.commit] = record.score
        score = record.ok_score
        if record.improved and score is not None:
            self.best_score, self.best_commit, self.best = score, record.commit, record

    def known_score(self, commit: str) -> tuple[bool, float | None]:
        """Is ``commit``'s score known (a turn that changed nothing keeps it), and what."""
        return commit in self.known, self.known.get(commit)


def best_steps(
    records: Sequence[TurnRecord],
    start: float | None,
    *,
    minimize: bool,
    marked: bool | None = None,
) -> list[float | None]:
    """The best after each of ``records`` from ``start``: the tally's fold, for readers of
    a log (the report, the comparison plot), so they show the best the run had.

    ``marked`` (default: whether any record carries ``improved``) says the records were
    marked by the run; unmarked ones (a log older than the marks, or one agent's own
    candidates) are marked as the fold goes: a turn improves when it beats the best.
    With no ``start`` the best is unknown (None) until a record makes one.
    """
    if marked is None:
        marked = any("improved" in r.model_fields_set for r in records)
    tally = None if start is None else Tally.start(start, "", minimize=minimize, floor=0.0)
    out: list[float | None] = []
    for record in records:
        score = record.ok_score
        if tally is None:
            if score is not None and (record.improved or not marked):
                tally = Tally.start(score, record.commit, minimize=minimize, floor=0.0)
        else:
            if not marked:
                record = record.model_copy(update={"improved": tally.improves(score)})
            tally.add(record)
        out.append(None if tally is None else tally.best_score)
    return out


@dataclass(frozen=True)
class PlayedTurn:
    """A played turn with what the caller measured around it."""

    played: Played
    base: str  # the commit the turn started from
    laps: dict[str, float]  # seconds per phase: setup, agent, commit, judge, export, score
    wall_s: float


def turn_record(
    turn: PlayedTurn,
    *,
    slot: Slot,
    seq: int,
    number: int,
    tally: Tally,
    forget: ForgetReason | None = None,
) -> TurnRecord:
    """*The* record of a played turn of round ``number``, judged against ``tally`` (the
    records before it)."""
    outcome, verdict = turn.played.outcome, turn.played.verdict
    result, change = outcome.result, outcome.change
    decision = slot.decision
    return TurnRecord(
        seq=seq,
        step=slot.step,
        round=number,
        agent=slot.agent,
        turn=slot.turn,
        round_turn=slot.round_turn,
        session=result.session_id,
        new_session=decision.new_session,
        base_commit=turn.base,
        commit=change.commit,
        score=verdict.score,
        scores=verdict.scores,
        feedback=verdict.feedback,
        empty=change.empty,
        lines_changed=change.lines_changed,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        reasoning_tokens=result.reasoning_tokens,
        cost_usd=result.cost_usd,
        wall_s=round(turn.wall_s, 4),
        agent_s=round(turn.laps.get("agent", 0.0), 4),
        judge_s=round(turn.laps.get("judge", 0.0), 4),
        timing={k: round(v, 5) for k, v in turn.laps.items()},
        ts=now_iso(),
        improved=not verdict.tampered and tally.improves(verdict.score),
        forget=forget,
        visible=len(decision.visible),
        peers=[
            f"r{v.round}-a{v.agent}-t{v.turn}" for v in decision.visible if v.kind == "peer-best"
        ],
        error=turn.played.error,
        tampered=verdict.tampered,
        attempts=outcome.attempts,
        node=outcome.node,
        retried=list(outcome.retried),
        denied=result.denied,
        failed_commands=result.failed_commands,
    )
