"""``probe diff``: two models' answers side by side, a verdict each, the continuity figure,
and a review card for every Canon entry the newer model reads differently.

Answers are the latest ``probe`` Evidence record per (model, probe).  A verdict is
``honours`` only when every rule of the probe holds and, with a judge configured, the
judge says so; a judge that cannot decide makes the verdict ``undecided`` (not
honoured).  A *regression* is a probe model A honoured and model B does not.

Regressions are grouped by Canon entry into one card each, written to the pending
queue by the ``monthly`` actor (the only one that writes the queue) as
``rev-<YYYY-MM>-probe-<n>``.  The card proposes restating the entry with what its
probes imply; the human approves it, edits it (restate it another way), rejects it
(change nothing) or retires the probes.  Provenance, shared with the monthly job: one
``job`` record for this diff, then per card a ``review-queued`` record (before the
card's file) naming the card, the sha256 of the file's bytes, ``by: probe`` and the job
record's id.  A card
for the same model pair and entry that is still pending or was rejected ("change
nothing" holds for that pair), or any card already decided on the same answers, is not
queued again; after an approved restatement, new answers are judged afresh.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError

from evolving_agent.errors import NotFound, UsageError
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.locks import human_lock_dir, lock_file
from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.memory.canon.probe_file import Probe, resolve_entry
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.memory.evidence.evidence import now as local_now
from evolving_agent.memory.ops.review_trace import queue_pending
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes.judge import Judge
from evolving_agent.probes.models import (
    AnswerView,
    Continuity,
    ProbeAnswerData,
    ProbeDiff,
    ProbeRow,
    Verdict,
)
from evolving_agent.probes.receipt import receipt
from evolving_agent.probes.rules import failures
from evolving_agent.probes.run import ACTOR, committed_probes
from evolving_agent.review.models import PendingReview, ProbeAnswerPair, ProbeCard
from evolving_agent.review.store import dump, list_reviews

MAX_ENTRY_CHARS = 300


Answer = tuple[EvidenceRecord, ProbeAnswerData]


def latest_runs(root: MemoryRoot) -> dict[str, dict[str, list[Answer]]]:
    """model -> probe -> the answers of the latest run that answered it (its repeats, in
    order), models in the order they last answered."""
    out: dict[str, dict[str, list[Answer]]] = {}
    for model, probes in _all_answers(root).items():
        out[model] = {}
        for probe, answers in probes.items():
            last_run = answers[-1][1].run
            out[model][probe] = [a for a in answers if a[1].run == last_run]
    return out


def latest_answers(root: MemoryRoot) -> dict[str, dict[str, Answer]]:
    """model -> probe -> its latest answer, models in the order they last answered."""
    return {m: {p: a[-1] for p, a in probes.items()} for m, probes in latest_runs(root).items()}


def _all_answers(root: MemoryRoot) -> dict[str, dict[str, list[Answer]]]:
    """model -> probe -> every answer, oldest first; models in the order they last answered."""
    found: list[tuple[EvidenceRecord, ProbeAnswerData]] = []
    for rec in EvidenceLog(root).iter_kind("probe"):
        try:
            found.append((rec, ProbeAnswerData.model_validate(rec.data)))
        except ValidationError:
            continue  # a record of a newer or foreign shape is not an answer we can read
    found.sort(key=lambda pair: (pair[0].ts, pair[1].repeat))
    out: dict[str, dict[str, list[Answer]]] = {}
    for _rec, data in found:
        out.pop(data.model, None)  # re-insert: dict order is "last answered"
        out.setdefault(data.model, {})
    for rec, data in found:
        out[data.model].setdefault(data.probe, []).append((rec, data))
    return out


class NoAnswersFrom(NotFound):
    """``probe diff`` was asked about a model that never answered a probe."""

    def __init__(self, model: str, known: list[str]) -> None:
        self.model = model
        super().__init__(
            f"no probe answers from model {model!r} (run 'evolving-agent probe run --model "
            f"{model}'; models with answers: {_shown(known)})"
        )


class NeedTwoModels(UsageError):
    """``probe diff`` compares two different models that both answered."""

    def __init__(self, known: list[str], same: str | None = None) -> None:
        if same is not None:
            message = f"probe diff compares two different models, not {same} with itself"
        else:
            message = (
                f"probe diff needs answers from two models (models with answers: "
                f"{_shown(known)}); run 'evolving-agent probe run --model NAME' for each"
            )
        super().__init__(message)


def _shown(known: list[str]) -> str:
    return ", ".join(known) if known else "none yet"


def pick_models(known: list[str], model_a: str | None, model_b: str | None) -> tuple[str, str]:
    """A and B as given; B defaults to the model that answered last, A to the one before."""
    for m in (model_a, model_b):
        if m is not None and m not in known:
            raise NoAnswersFrom(m, known)
    rest = [m for m in reversed(known) if m not in (model_a, model_b)]
    if model_b is None and rest:
        model_b = rest.pop(0)
    if model_a is None and rest:
        model_a = rest.pop(0)
    if model_a is None or model_b is None:
        raise NeedTwoModels(known)
    if model_a == model_b:
        raise NeedTwoModels(known, same=model_a)
    return model_a, model_b


def judge_answer(
    probe: Probe, entry_text: str, data: ProbeAnswerData, judge: Judge | None
) -> Verdict:
    if data.error:
        return Verdict(status="undecided", failed=[f"no answer: {data.error}"])
    failed = failures(data.answer, probe.checks)
    if failed:
        return Verdict(status="breaks", failed=failed)
    if judge is None:
        return Verdict(status="honours")
    status, reason = judge.verdict(probe, entry_text, data.answer)
    return Verdict(status=status, judge=status, judge_reason=reason)


def _view(
    pair: tuple[EvidenceRecord, ProbeAnswerData] | None,
    probe: Probe,
    entry_text: str,
    judge: Judge | None,
) -> AnswerView | None:
    if pair is None:
        return None
    rec, data = pair
    return AnswerView(
        evidence_id=rec.id,
        ts=rec.ts,
        model=data.model,
        canon_commit=data.canon_commit,
        answer=data.answer,
        error=data.error,
        verdict=judge_answer(probe, entry_text, data, judge),
    )


def _client(answers: dict[str, list[Answer]]) -> str:
    """The client (reflector) that gave a model's latest answers."""
    latest = max((a[-1] for a in answers.values()), key=lambda x: x[0].ts, default=None)
    return latest[1].reflector if latest else "unknown"


def continuity(model_a: str, model_b: str, rows: list[ProbeRow]) -> Continuity:
    both = [r for r in rows if r.a is not None and r.b is not None]
    ok_a = {r.probe for r in both if r.a and r.a.verdict.status == "honours"}
    ok_b = {r.probe for r in both if r.b and r.b.verdict.status == "honours"}
    undecided = [
        r.probe
        for r in both
        if (r.a and r.a.verdict.status == "undecided")
        or (r.b and r.b.verdict.status == "undecided")
    ]
    return Continuity(
        model_a=model_a,
        model_b=model_b,
        compared=len(both),
        honoured_a=len(ok_a),
        honoured_b=len(ok_b),
        kept=len(ok_a & ok_b),
        regressed=[r.probe for r in both if r.probe in ok_a - ok_b],
        improved=[r.probe for r in both if r.probe in ok_b - ok_a],
        undecided=undecided,
    )


def restatement(entry_text: str, implied: list[str]) -> str:
    """The entry with what its probes imply spelled out (the card's proposed diff)."""
    base = entry_text.strip().rstrip(".")
    said = "; ".join(dict.fromkeys(i.strip().rstrip(".") for i in implied))
    text = f"{base}: {said}."
    return text if len(text) <= MAX_ENTRY_CHARS else text[: MAX_ENTRY_CHARS - 1].rstrip() + "…"


def _cards(
    root: MemoryRoot,
    diff: ProbeDiff,
    probes: dict[str, Probe],
    identity: dict[str, Any],
    commit: str | None,
    when: datetime,
) -> tuple[list[PendingReview], list[str], list[str]]:
    """(new cards, ids already queued or decided, notes) for the diff's regressions."""
    existing = [r for r in list_reviews(root) if r.pending.probe is not None]
    month = when.strftime("%Y-%m")
    # Every file name in the queue, genuine or not: a card never takes a planted file's id.
    taken_ids = {p.stem for p in root.area_dir("pending").glob("*.json")}
    by_entry: dict[str, list[ProbeRow]] = {}
    for row in diff.rows:
        if row.a is not None and row.b is not None:
            by_entry.setdefault(probes[row.probe].entry, []).append(row)
    cards: list[PendingReview] = []
    already: list[str] = []
    notes: list[str] = []
    n = 0
    fell = set(diff.receipt.fell) if diff.receipt else set(by_entry)
    for entry, rows in by_entry.items():
        bad = [r for r in rows if r.worse and r.witness()]
        if not bad or entry not in fell:
            continue  # no regression, or one the repeats do not bear out
        pairs = _pairs(bad)
        answers = {p.after for p in pairs} | {p.before for p in pairs}
        dup = next(
            (
                r
                for r in existing
                if r.pending.probe is not None
                and r.pending.probe.entry == entry
                and (
                    (
                        r.status in ("pending", "rejected")
                        and (r.pending.probe.model_a, r.pending.probe.model_b)
                        == (diff.model_a, diff.model_b)
                    )
                    or {x for p in r.pending.probe.pairs for x in (p.before, p.after)} == answers
                )
            ),
            None,
        )
        if dup is not None:
            already.append(dup.id)
            continue
        try:
            entry_text = resolve_entry(identity, entry)
        except ValueError as exc:
            notes.append(f"no card for {entry!r}: {exc}")
            continue
        section = probes[bad[0].probe].section
        n += 1
        while f"rev-{month}-probe-{n}" in taken_ids:
            n += 1
        card = ProbeCard(
            model_a=diff.model_a,
            model_b=diff.model_b,
            entry=entry,
            entry_text=entry_text,
            regressed=len(bad),
            of=len(rows),
            canon_commit=bad[0].b.canon_commit if bad[0].b else commit,
            pairs=pairs,
        )
        cards.append(
            PendingReview(
                id=f"rev-{month}-probe-{n}",
                month=month,
                diff=CanonDiff(
                    section=section,  # one of SECTIONS, checked by probe_file
                    op="replace",
                    old_text=entry_text,
                    text=restatement(entry_text, [probes[r.probe].implies for r in bad]),
                ),
                hypothesis="",
                evidence_ids=[x for p in pairs for x in (p.before, p.after)],
                rationale=card.title()
                + ". "
                + " ".join(f"{p.probe}: {p.why}." for p in pairs if p.why),
                created=when,
                probe=card,
            )
        )
    return cards, already, notes


def _pairs(rows: list[ProbeRow]) -> list[ProbeAnswerPair]:
    """Each worse probe's witnesses: A honouring it, B not."""
    out = []
    for r in rows:
        seen = r.witness()
        if seen is None:
            continue
        good, bad = seen
        out.append(
            ProbeAnswerPair(
                probe=r.probe,
                before=good.evidence_id,
                after=bad.evidence_id,
                verdict="undecided" if bad.verdict.status == "undecided" else "breaks",
                why=bad.verdict.why(),
            )
        )
    return out


def _hold_card(
    root: MemoryRoot, diff: ProbeDiff, when: datetime, taken: set[str]
) -> PendingReview | None:
    """One card that holds the upgrade: approving it records in Canon that the human
    moved to model B with these figures; rejecting it keeps model A (Canon unchanged).
    Not queued again for the same pair while one is pending or was decided."""
    r = diff.receipt
    if r is None or not r.held or r.overall is None:
        return None
    for review in list_reviews(root):
        card = review.pending.probe
        if card is not None and card.hold and (card.model_a, card.model_b) == (
            diff.model_a,
            diff.model_b,
        ):
            diff.already_queued.append(review.id)
            return None
    pairs = _pairs([row for row in diff.rows if row.worse])
    if not pairs:
        return None
    month = when.strftime("%Y-%m")
    n = 1
    while f"rev-{month}-probe-{n}" in taken:
        n += 1
    o = r.overall
    text = (
        f"I run on {diff.model_b}: the human moved me to it from {diff.model_a} on "
        f"{when:%Y-%m-%d}, with Canon adherence at {o.b:.0f}% (was {o.a:.0f}%)."
    )
    card = ProbeCard(
        model_a=diff.model_a,
        model_b=diff.model_b,
        entry="overall",
        entry_text=f"adherence to Canon across {o.probes} probes",
        regressed=len(pairs),
        of=o.probes,
        canon_commit=diff.rows[0].b.canon_commit if diff.rows and diff.rows[0].b else None,
        pairs=pairs,
        hold=True,
    )
    return PendingReview(
        id=f"rev-{month}-probe-{n}",
        month=month,
        diff=CanonDiff(section="self_understanding", op="add", text=text),
        hypothesis="",
        evidence_ids=[x for p in pairs for x in (p.before, p.after)],
        rationale=(
            f"{card.title()}. {o.line()}. Approve: move to {diff.model_b} (recorded in "
            f"Canon). Reject: keep {diff.model_a}."
        ),
        created=when,
        probe=card,
    )


def diff_probes(
    root: MemoryRoot,
    model_a: str | None = None,
    model_b: str | None = None,
    *,
    judge: Judge | None = None,
    queue: bool = True,
    now: datetime | None = None,
) -> ProbeDiff:
    """Compare two models' latest answers; queue a card per entry B reads differently."""
    probes_file, identity, commit = committed_probes(root)
    runs = latest_runs(root)
    a, b = pick_models(list(runs), model_a, model_b)
    rows: list[ProbeRow] = []
    notes: list[str] = []
    by_entry: dict[str, list[tuple[list[bool], list[bool]]]] = {}
    for probe in probes_file.active():
        try:
            entry_text = resolve_entry(identity, probe.entry)
        except ValueError as exc:
            notes.append(f"probe {probe.key}: {exc} (edit canon/probes.yaml)")
            continue
        views = [
            [_view(ans, probe, entry_text, judge) for ans in runs[m].get(probe.key, [])]
            for m in (a, b)
        ]
        rows.append(
            ProbeRow(
                probe=probe.key,
                entry=probe.entry,
                entry_text=entry_text,
                implies=probe.implies,
                a=views[0][-1] if views[0] else None,
                b=views[1][-1] if views[1] else None,
                a_all=[v for v in views[0] if v is not None],
                b_all=[v for v in views[1] if v is not None],
            )
        )
        honoured = [[v is not None and v.verdict.status == "honours" for v in vs] for vs in views]
        by_entry.setdefault(probe.entry, []).append((honoured[0], honoured[1]))
    result = ProbeDiff(
        model_a=a,
        model_b=b,
        judge=judge.name if judge else None,
        rows=rows,
        continuity=continuity(a, b, rows),
        notes=notes,
        receipt=receipt(a, b, (_client(runs[a]), _client(runs[b])), by_entry),
    )
    if not queue:
        return result
    when = now or local_now()
    # Two diffs at once must not both see "not queued yet" and queue the same card.
    with lock_file(human_lock_dir(root) / "probe-diff.lock"):
        cards, already, card_notes = _cards(
            root, result, {p.key: p for p in probes_file.probes}, identity, commit, when
        )
        result.already_queued = already
        result.notes += card_notes
        taken = {p.stem for p in root.area_dir("pending").glob("*.json")} | {c.id for c in cards}
        hold = _hold_card(root, result, when, taken)
        if hold is not None:
            cards.append(hold)
            result.hold = hold.id
        if cards:
            result.record_id, result.queued = queue_cards(root, result, cards)
    return result


def queue_cards(
    root: MemoryRoot, diff: ProbeDiff, cards: list[PendingReview]
) -> tuple[str, list[str]]:
    """Write the cards to the pending queue with their provenance records."""
    writer = Writer(root, ACTOR)
    c = diff.continuity
    record = writer.append(
        "job",
        f"probe diff {diff.model_a} -> {diff.model_b}: {len(cards)} card(s) queued; "
        f"{c.kept} of {c.honoured_a} honoured probes kept",
        data={
            "job": "probe-diff",
            "model_a": diff.model_a,
            "model_b": diff.model_b,
            "judge": diff.judge,
            "continuity": c.model_dump(mode="json"),
            "reviews": [card.id for card in cards],
        },
    )
    for card in cards:
        # The review-queued record goes before the file (review provenance's contract).
        queue_pending(writer, card.id, dump(card), by="probe", run=record.id)
    return record.id, [card.id for card in cards]
