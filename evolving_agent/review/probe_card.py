"""What a probe card shows beyond its diff: what each probe asked, what the earlier and the
newer model answered, and where the card came from.

A probe card (``probe diff``) cites Evidence ids only; this module reads them back: each
answer's ``probe`` record (model, probe run, text), the probe's prompt from
``canon/probes.yaml`` (checked against the sha256 the answer recorded, so a prompt
rewritten since is named as such), and the card's ``review-queued`` provenance with the
``probe diff`` job record it points to.  ``review show`` and the review page print it.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from pydantic import ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.yamlio import parse_yaml
from evolving_agent.memory.canon.probe_file import Probe, ProbesFile
from evolving_agent.memory.evidence.evidence import EvidenceRecord
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record
from evolving_agent.review.models import ProbeCard
from evolving_agent.review.provenance import TraceIndex
from evolving_agent.review.store import Review, cited_evidence

PROBES_FILE = "probes.yaml"


@record(frozen=True)
class Answer:
    """One model's answer to one probe, as its Evidence record holds it."""

    evidence_id: str
    model: str
    run: str  # the probe run it belongs to
    ts: datetime | None
    text: str
    error: str | None
    found: bool  # False when the record is not in Evidence


@record(frozen=True)
class ProbePair:
    probe: str
    prompt: str | None  # None when the probe is no longer in probes.yaml
    prompt_changed: bool  # probes.yaml now asks something else than the models were asked
    implies: str | None
    verdict: str  # of the newer model: breaks | undecided
    why: str
    before: Answer
    after: Answer


@record(frozen=True)
class ProbeCardView:
    card: ProbeCard
    pairs: list[ProbePair]
    queued_record: str | None  # the review-queued Evidence record
    queued_at: datetime | None
    diff_record: str | None  # the probe diff job record it names
    diff_text: str

    @property
    def runs(self) -> list[tuple[str, str]]:
        """(model, probe run) of every answer cited, earlier model first."""
        seen = [(a.model, a.run) for p in self.pairs for a in (p.before, p.after) if a.found]
        return sorted(dict.fromkeys(seen), key=lambda mr: mr[0] != self.card.model_a)

    def to_json(self) -> dict[str, object]:
        return {
            "queued_record": self.queued_record,
            "diff_record": self.diff_record,
            "runs": [{"model": m, "run": r} for m, r in self.runs],
            "pairs": [
                {
                    "probe": p.probe,
                    "prompt": p.prompt,
                    "prompt_changed": p.prompt_changed,
                    "verdict": p.verdict,
                    "why": p.why,
                    "before": _answer_json(p.before),
                    "after": _answer_json(p.after),
                }
                for p in self.pairs
            ],
        }


def _answer_json(a: Answer) -> dict[str, object]:
    return {"id": a.evidence_id, "model": a.model, "run": a.run, "text": a.text, "error": a.error}


def _probes(root: MemoryRoot) -> dict[str, Probe]:
    path = root.canon / PROBES_FILE
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"), file=path)
        return {p.key: p for p in ProbesFile.model_validate(data).probes}
    except (OSError, UnicodeDecodeError, InvalidInput, ValidationError):
        return {}  # the answers still show; the prompt is named as unknown


def _answer(eid: str, rec: EvidenceRecord | None, model: str) -> Answer:
    if rec is None:
        return Answer(eid, model, "?", None, "(not found in Evidence)", None, False)
    d = rec.data
    return Answer(
        evidence_id=eid,
        model=str(d.get("model", model)),
        run=str(d.get("run", "?")),
        ts=rec.ts,
        text=str(d.get("answer", "")),
        error=str(d["error"]) if d.get("error") else None,
        found=True,
    )


def probe_card_view(
    root: MemoryRoot, review: Review, index: TraceIndex | None = None
) -> ProbeCardView | None:
    """The probe card of ``review`` read back from Evidence; None for other reviews."""
    card = review.pending.probe
    if card is None:
        return None
    found = cited_evidence(root, [x for p in card.pairs for x in (p.before, p.after)])
    probes = _probes(root)
    pairs = []
    for p in card.pairs:
        probe = probes.get(p.probe)
        after = found.get(p.after)
        asked = str(after.data.get("prompt_sha256", "")) if after else ""
        pairs.append(
            ProbePair(
                probe=p.probe,
                prompt=probe.prompt if probe else None,
                prompt_changed=bool(
                    probe and asked and hashlib.sha256(probe.prompt.encode()).hexdigest() != asked
                ),
                implies=probe.implies if probe else None,
                verdict=p.verdict,
                why=p.why,
                before=_answer(p.before, found.get(p.before), card.model_a),
                after=_answer(p.after, after, card.model_b),
            )
        )
    trace = (index or TraceIndex.scan(root)).check(root, review.id)
    queued = trace.record
    run = str(queued.data.get("run", "")) if queued else ""
    job = cited_evidence(root, [run]).get(run) if run else None
    return ProbeCardView(
        card=card,
        pairs=pairs,
        queued_record=queued.id if queued else None,
        queued_at=queued.ts if queued else None,
        diff_record=run or None,
        diff_text=job.text if job else "",
    )
