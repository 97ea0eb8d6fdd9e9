"""Hypotheses: qualitative states, changed only by evidence, folded from Evidence.

A hypothesis has an id, a text and one of five states — ``emerging``, ``live``,
``weakening``, ``split``, ``retired`` — and deliberately no numeric score: scores get
optimised instead of beliefs.  Every change is an Evidence record carrying a full
*snapshot* of the hypothesis (state, the days it was supported / contradicted on, and
the ids of the events that did it), so the register is a fold over Evidence: the last
snapshot of each id wins.

The nightly job must not read history, so the register is also cached in
``today/hypotheses.json``.  The nightly job and the human (``hypothesis add``) are the
only ones who may write Today, and each updates the cache in the same step as the
Evidence record; :func:`check_register` proves the cache equals the fold.

The state rules (deterministic, shared by every reflector; a model may only *read*
untagged events as supporting or contradicting, never set a state):

* a new hypothesis is ``emerging``;
* more contradicting events than supporting ones → ``weakening``; a further
  contradicting day while ``weakening`` → ``retired`` (terminal; later events are
  ignored);
* contradicted as often as supported → ``split`` (the evidence is divided);
* supported on at least two distinct days and more often than contradicted → ``live``;
* otherwise the state stays as it is.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, timedelta
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolving_agent.errors import InvalidInput, NotFound
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot

HypothesisState = Literal["emerging", "live", "weakening", "split", "retired"]
STATES: tuple[str, ...] = get_args(HypothesisState)

REGISTER_FILE = "hypotheses.json"

# The rules floor: supported on this many distinct days inside this many days.
FLOOR_DAYS = 5
FLOOR_SPAN = 14


class Hypothesis(BaseModel):
    """One hypothesis as of its last change.  JSON-able; no score, by design."""

    model_config = ConfigDict(extra="forbid")

    id: str
    text: str = Field(min_length=1)
    state: HypothesisState = "emerging"
    created: date
    updated: date  # day of the evidence behind the last change
    supported_on: list[date] = Field(default_factory=list)
    contradicted_on: list[date] = Field(default_factory=list)
    supports: list[str] = Field(default_factory=list)  # evidence ids
    contradicts: list[str] = Field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.state != "retired"


class StateChange(BaseModel):
    """One step of a hypothesis's history, for ``hypothesis show``."""

    evidence_id: str
    day: date
    state: HypothesisState
    previous: HypothesisState | None
    reason: str


class HypothesisDetail(BaseModel):
    hypothesis: Hypothesis
    history: list[StateChange]


class RegisterFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(1, le=1)
    hypotheses: list[Hypothesis] = Field(default_factory=list)


def hypothesis_id(text: str) -> str:
    """Ids come from the text, so the same belief cannot be registered twice."""
    norm = " ".join(text.lower().split())
    return "h-" + hashlib.sha256(norm.encode()).hexdigest()[:8]


# -- the state rules -----------------------------------------------------------------


def advance(
    h: Hypothesis, day: date, supports: list[str], contradicts: list[str]
) -> tuple[Hypothesis, str] | None:
    """Apply one day's evidence.  Returns (new snapshot, reason) or None if nothing new."""
    if not h.active:
        return None
    new_s = [i for i in supports if i not in h.supports]
    new_c = [i for i in contradicts if i not in h.contradicts]
    if not new_s and not new_c:
        return None
    sup = h.supports + new_s
    con = h.contradicts + new_c
    sup_days = sorted(set(h.supported_on) | ({day} if new_s else set()))
    con_days = sorted(set(h.contradicted_on) | ({day} if new_c else set()))
    state: str = h.state
    if len(con) > len(sup):
        if h.state == "weakening" and new_c:
            state, reason = "retired", "contradicted again while weakening"
        else:
            state, reason = "weakening", "contradicted more often than supported"
    elif con and len(con) == len(sup):
        state, reason = "split", "contradicted as often as supported"
    elif len(sup_days) >= 2 and len(sup) > len(con):
        state, reason = "live", "supported on more than one day, more often than contradicted"
    else:
        reason = "new evidence, state unchanged"
    snap = h.model_copy(
        update={
            "state": state,
            "updated": day,
            "supports": sup,
            "contradicts": con,
            "supported_on": sup_days,
            "contradicted_on": con_days,
        }
    )
    return snap, reason


def meets_floor(h: Hypothesis) -> bool:
    """Supported on ≥5 distinct days within 14 and never contradicted (the rules floor)."""
    if not h.active or h.contradicts or h.contradicted_on:
        return False
    days = sorted(set(h.supported_on))
    span = timedelta(days=FLOOR_SPAN - 1)
    return any(
        days[i + FLOOR_DAYS - 1] - days[i] <= span for i in range(len(days) - FLOOR_DAYS + 1)
    )


# -- the fold and the cache ------------------------------------------------------------


def snapshot_data(h: Hypothesis, **extra: Any) -> dict[str, Any]:
    return {"hypothesis": h.model_dump(mode="json"), **extra}


def snapshot_of(rec: EvidenceRecord) -> Hypothesis | None:
    """The hypothesis snapshot a ``hypothesis`` / ``hypothesis-state`` record carries."""
    if rec.kind not in ("hypothesis", "hypothesis-state"):
        return None
    try:
        return Hypothesis.model_validate(rec.data.get("hypothesis"))
    except ValidationError:
        return None


def fold(records: Any) -> dict[str, Hypothesis]:
    """The register as a fold over Evidence records: the last snapshot of each id wins."""
    out: dict[str, Hypothesis] = {}
    for rec in records:
        snap = snapshot_of(rec)
        if snap is not None:
            out[snap.id] = snap
    return out


def fold_root(root: MemoryRoot) -> dict[str, Hypothesis]:
    return fold(EvidenceLog(root).iter_all())


def parse_register(text: str | None, *, file: str = REGISTER_FILE) -> dict[str, Hypothesis]:
    if not text:
        return {}
    try:
        reg = RegisterFile.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InvalidInput(
            f"{'.'.join(map(str, first['loc']))}: {first['msg']}", file=file
        ) from None
    return {h.id: h for h in reg.hypotheses}


def dump_register(reg: dict[str, Hypothesis]) -> bytes:
    body = RegisterFile(hypotheses=list(reg.values())).model_dump(mode="json")
    return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode()


def read_register(reader: ScopedReader) -> dict[str, Hypothesis]:
    """The cached register from Today, through a scoped reader (nightly or session)."""
    return parse_register(
        reader.read_text("today", REGISTER_FILE), file=str(reader.root.today / REGISTER_FILE)
    )


def merge_into_register(writer: Writer, snaps: list[Hypothesis]) -> None:
    """Replace the given snapshots in Today's cache, under the Today lock."""

    def apply(old: bytes | None) -> bytes:
        reg = parse_register(old.decode() if old else None)
        for s in snaps:
            reg[s.id] = s
        return dump_register(reg)

    writer.update("today", REGISTER_FILE, apply)


def check_register(root: MemoryRoot) -> list[str]:
    """Differences between Today's cache and the fold over Evidence (empty = agree)."""
    cached = read_register(ScopedReader(root, "human"))
    folded = fold_root(root)
    problems = []
    for hid in sorted(set(cached) | set(folded)):
        a, b = cached.get(hid), folded.get(hid)
        if a is None:
            problems.append(f"{hid}: in Evidence but missing from today/{REGISTER_FILE}")
        elif b is None:
            problems.append(f"{hid}: in today/{REGISTER_FILE} but not in Evidence")
        elif a != b:
            problems.append(f"{hid}: today/{REGISTER_FILE} disagrees with Evidence")
    return problems


def rebuild_register(root: MemoryRoot) -> dict[str, Hypothesis]:
    """Rewrite Today's cache from the fold (the human's repair after a crash or an edit)."""
    folded = fold_root(root)
    Writer(root, "human").write("today", REGISTER_FILE, dump_register(folded))
    return folded


# -- the user-facing operations -----------------------------------------------------------


def add_hypothesis(
    root: MemoryRoot, text: str, *, actor: str = "human", ts: Any = None
) -> Hypothesis:
    """Register a new hypothesis (state ``emerging``): an Evidence record, then the cache."""
    require_root(root)
    text = " ".join(text.split())
    if not text:
        raise InvalidInput("hypothesis text is empty: state the belief to test")
    hid = hypothesis_id(text)
    writer = Writer(root, actor)
    if not writer.policy.may_write(actor, "today"):
        # Refuse before anything lands in Evidence: the record and the cache go together.
        writer.write("today", REGISTER_FILE, b"")  # raises WriteDenied and records it
    if hid in read_register(ScopedReader(root, "human")):
        raise InvalidInput(f"hypothesis {hid} already exists: {text}")
    from evolving_agent.memory.evidence import now

    when = ts or now()
    day = when.astimezone().date() if when.tzinfo else when.date()
    h = Hypothesis(id=hid, text=text, created=day, updated=day)
    writer.append("hypothesis", f"new hypothesis {hid}: {text}", data=snapshot_data(h), ts=when)
    merge_into_register(writer, [h])
    return h


def list_hypotheses(root: MemoryRoot, *, from_evidence: bool = False) -> list[Hypothesis]:
    """All hypotheses, oldest first.

    By default read from Today's register through the *session* read scope, so an
    assistant-facing caller (MCP) never touches Evidence; ``from_evidence=True``
    recomputes the fold over Evidence (what the human's ``hypothesis list`` shows).
    """
    require_root(root)
    if from_evidence:
        return list(fold_root(root).values())
    return list(read_register(ScopedReader(root, "session")).values())


def show_hypothesis(root: MemoryRoot, hid: str) -> HypothesisDetail:
    """One hypothesis with its history of state changes, from Evidence."""
    require_root(root)
    current: Hypothesis | None = None
    history: list[StateChange] = []
    for rec in EvidenceLog(root).iter_all():
        snap = snapshot_of(rec)
        if snap is None or snap.id != hid:
            continue
        previous = current.state if current is not None else None
        if previous != snap.state:
            history.append(
                StateChange(
                    evidence_id=rec.id,
                    day=snap.updated,
                    state=snap.state,
                    previous=previous,
                    reason=str(rec.data.get("reason", "added")),
                )
            )
        current = snap
    if current is None:
        raise NotFound(f"no hypothesis with id {hid!r} (see 'evolving-agent hypothesis list')")
    return HypothesisDetail(hypothesis=current, history=history)


# -- one day's evidence against the register -------------------------------------------


def day_links(
    friction: list[EvidenceRecord], readings: list[tuple[str, str, str]]
) -> dict[str, tuple[list[str], list[str]]]:
    """Which events support / contradict which hypothesis on one day.

    ``friction`` gives the explicit ``--supports/--contradicts`` tags; ``readings`` are
    (event id, hypothesis id, "supports"|"contradicts") from a model reflector's reading
    of untagged events.
    """
    links: dict[str, tuple[list[str], list[str]]] = {}
    for rec in friction:
        if rec.supports:
            links.setdefault(rec.supports, ([], []))[0].append(rec.id)
        if rec.contradicts:
            links.setdefault(rec.contradicts, ([], []))[1].append(rec.id)
    for event, hid, relation in readings:
        pair = links.setdefault(hid, ([], []))
        (pair[0] if relation == "supports" else pair[1]).append(event)
    return links


def apply_day(
    register: dict[str, Hypothesis],
    day: date,
    links: dict[str, tuple[list[str], list[str]]],
) -> dict[str, tuple[Hypothesis, str]]:
    """New snapshots (with reasons) for every hypothesis the day's evidence touched."""
    changes: dict[str, tuple[Hypothesis, str]] = {}
    for hid, (sups, cons) in links.items():
        h = register.get(hid)
        if h is None:
            continue  # a tag naming an unknown hypothesis changes nothing
        step = advance(h, day, sups, cons)
        if step is not None:
            changes[hid] = step
    return changes
