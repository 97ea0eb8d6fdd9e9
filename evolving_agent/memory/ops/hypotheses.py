"""Hypotheses: qualitative states, changed only by evidence, folded from Evidence.

A hypothesis has an id, a claim and one of five states — ``emerging``, ``live``,
``weakening``, ``split``, ``retired`` — and deliberately no numeric score: scores get
optimised instead of beliefs.  It may also have a *shape*: a trigger (``when`` it
matters), a counter-move (what to ``do`` then) and ``stakes`` (``high`` = hard to undo
or seen by others).  It comes from the human, the session or the nightly job
(``origin``).  Every change is an Evidence record carrying a full *snapshot* of the
hypothesis, so the register is a fold over Evidence: the last snapshot of each id wins.

The nightly job must not read history, so the register is also cached in
``today/hypotheses.json``.  The nightly job and the human are the only ones who may
write Today, and each updates the cache in the same step as the Evidence record; a
session may only append a ``hypothesis`` record, which the nightly job adopts into the
cache when it reflects that day.  :func:`check_register` proves the cache equals the
fold (a session's hypothesis not yet adopted is reported as pending, not as damage).

The state rules (deterministic, shared by every reflector; a model may only *read*
untagged events as supporting or contradicting, never set a state).  They count
*distinct days*, never events, so one bad afternoon cannot flip a belief.  A day is
counted by :func:`day_key`, the UTC date of the record's instant, not its day file
(which follows the writer's offset), so changing ``TZ`` cannot make one minute count
as two or three days:

* a new hypothesis is ``emerging``;
* supported on ≥ 2 days and contradicted on ≥ 2 days, the smaller side at least a third
  of the larger → ``split`` (the evidence divides by context);
* **turned**: contradicted on each of its last :data:`TURN_DAYS` distinct evidence days,
  after earlier support (the owner changed their mind: the old support does not
  outvote it) → ``weakening``, whatever the totals;
* otherwise contradicted on ≥ 2 days and on more days than supported → ``weakening``; a
  further contradicting day while ``weakening``, once it was carried as ``release`` →
  ``retired`` (terminal);
* a **high-stakes** hypothesis never weakens, splits or retires on evidence: its
  contradictions are kept as the case for a *narrowing* the human decides (weekly
  proposes it); only the human retires or edits it;
* otherwise supported on ≥ 2 days and on more days than contradicted → ``live``;
* otherwise the state stays as it is.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from datetime import date
from functools import lru_cache
from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolving_agent.errors import InvalidInput, NotFound, first_error
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.base.authority_table import Actor
from evolving_agent.memory.base.bounds import refuse_reflected_day
from evolving_agent.memory.base.redact import redact
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord, recorded_day
from evolving_agent.memory.evidence.evidence import day_key as day_key
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot

HypothesisState = Literal["emerging", "live", "weakening", "split", "retired"]
STATES: tuple[str, ...] = get_args(HypothesisState)
Stakes = Literal["low", "high"]
Origin = Literal["human", "session", "nightly"]

REGISTER_FILE = "hypotheses.json"

# The promotion floor: support *recorded* on this many distinct days, the first and the
# last at least this many days apart, contradicted on fewer than a third as many days.
FLOOR_DAYS = 5
# A turn: the last this-many distinct evidence days all contradicted it, after support.
TURN_DAYS = 3
FLOOR_SPAN_DAYS = 7
UNRESOLVED: tuple[str, ...] = ("emerging", "split", "weakening")


class SessionProposal(BaseModel):
    """A trigger / counter-move the session proposed for a hypothesis (not yet in use)."""

    model_config = ConfigDict(extra="forbid", defer_build=True, frozen=True)

    when: str | None = None
    do: str | None = None
    day: date
    evidence_id: str | None = None


class Hypothesis(BaseModel):
    """One hypothesis as of its last change.  JSON-able; no score, by design.

    Frozen, its sequences tuples and its proposal frozen too: every change is a new
    snapshot (``model_copy``), so one parsed register may be handed to every reader of
    the same text (:func:`parse_register`) and no reader can change what the next one
    reads.  ``model_copy(update=...)`` does not validate: it makes an update's lists
    tuples itself."""

    model_config = ConfigDict(extra="forbid", defer_build=True, frozen=True)

    id: str
    text: str = Field(min_length=1)
    when: str | None = None  # trigger: the moment it matters
    do: str | None = None  # counter-move: what to do then
    stakes: Stakes = "low"
    origin: Origin = "human"
    state: HypothesisState = "emerging"
    created: date
    updated: date  # day of the evidence behind the last change
    supported_on: tuple[date, ...] = ()
    contradicted_on: tuple[date, ...] = ()
    recorded_support: tuple[date, ...] = ()  # days support was appended
    supports: tuple[str, ...] = ()  # evidence ids
    contradicts: tuple[str, ...] = ()
    cites: tuple[str, ...] = ()  # evidence that raised it (origin nightly)
    parent: str | None = None
    children: tuple[str, ...] = ()
    reason: str | None = None  # why the human retired it
    last_friction: str | None = None  # the latest friction quote on it (sanitised)
    last_friction_day: date | None = None
    last_for: str | None = None  # the latest supporting friction quote
    last_for_day: date | None = None
    last_against: str | None = None  # the latest contradicting friction quote
    last_against_day: date | None = None
    proposed: date | None = None  # first seen in a weekly proposal (on its way to Canon)
    canon_text: str | None = None  # the Canon entry it became, once a human approved it
    released: date | None = None  # last carried as ``release`` (a weakening one retires after)
    adopted: bool = False  # the human took on the session's words (``hypothesis edit``)
    proposal: SessionProposal | None = None  # the session's proposed trigger / counter-move
    tension: tuple[str, ...] = ()  # hypotheses its evidence swings against
    narrowing: date | None = None  # a narrowing of this high-stakes rule was proposed

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's copy, an update's lists made tuples (an update is not validated)."""
        if update:
            update = {k: tuple(v) if isinstance(v, list) else v for k, v in update.items()}
        return super().model_copy(update=update, deep=deep)

    @property
    def session_words(self) -> bool:
        """Its claim / trigger / counter-move were written by the session, unadopted."""
        return self.origin == "session" and not self.adopted

    @property
    def ready(self) -> bool:
        """Carriable into the bias: active, not split, and — when the session wrote it —
        backed by friction on 2 distinct days or adopted by the human."""
        if not self.carriable:
            return False
        return not self.session_words or len(set(self.supported_on)) >= 2

    def shape(self) -> tuple[str | None, str | None]:
        """The trigger and counter-move the bias uses: its own, or the session's proposal
        once friction supported the hypothesis on 2 distinct days since it was made."""
        when, do = self.when, self.do
        p = self.proposal
        if p is not None and len({d for d in self.supported_on if d >= p.day}) >= 2:
            when, do = when or p.when, do or p.do
        return when, do

    @property
    def active(self) -> bool:
        return self.state != "retired"

    @property
    def carriable(self) -> bool:
        """Active and not superseded by the children it was split into."""
        return self.active and not self.children

    @property
    def settled(self) -> bool:
        """Already on its way to (or in) Canon: carry prefers the unresolved ones."""
        return self.proposed is not None or self.canon_text is not None


class StateChange(BaseModel):
    """One step of a hypothesis's history, for ``hypothesis show``."""

    model_config = ConfigDict(defer_build=True)

    evidence_id: str
    day: date
    state: HypothesisState
    previous: HypothesisState | None
    reason: str


class HypothesisDetail(BaseModel):
    model_config = ConfigDict(defer_build=True)

    hypothesis: Hypothesis
    history: list[StateChange]


class RegisterFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    hypotheses: list[Hypothesis] = Field(default_factory=list)


def hypothesis_id(text: str) -> str:
    """Ids come from the text, so the same belief cannot be registered twice (and
    :func:`duplicate_of` catches the same words behind invisible characters,
    lookalike letters or other widths)."""
    norm = " ".join(text.lower().split())
    return "h-" + hashlib.sha256(norm.encode()).hexdigest()[:8]


def duplicate_of(text: str, register: dict[str, Hypothesis]) -> Hypothesis | None:
    """An active hypothesis with the same claim once normalised (NFKC, case fold, no
    zero-width or bidi characters, confusables skeleton, spacing ignored)."""
    from evolving_agent.memory.base.similarity import key

    k = key(text)
    for h in register.values():
        if h.active and key(h.text) == k:
            return h
    return None


def pending_session_hypotheses(root: MemoryRoot) -> dict[str, Hypothesis]:
    """Hypotheses sessions added since the last reflected day: in Evidence only, until the
    nightly adopts them (a session may not write Today's register).  Days since the last
    nightly, so the cost does not grow with the history."""
    from evolving_agent.memory.base.bounds import last_reflected_day

    log = EvidenceLog(root)
    last = last_reflected_day(root)
    days = [d for d in log.all_days() if last is None or d > last]
    if not days:
        return {}
    pending = fold(log.iter_range(days[0], days[-1]))
    return {hid: h for hid, h in pending.items() if h.origin == "session"}


_MARKUP = re.compile(r"</?[A-Za-z][^<>\n]{0,60}>|[`]")


@lru_cache(maxsize=4096)  # a nightly quotes the same beliefs and frictions many times over
def quote(text: str, limit: int = 140) -> str:
    """A grounding quote: the friction's words as written — code, paths, flags and
    identifiers intact (``rm -rf node_modules``, ``DROP TABLE audit_log_old``) — minus
    control and format characters, newlines, markup (backticks, HTML-like tags) and
    secrets; curly quotes become straight ones so the quote cannot close early."""
    text = redact(text)
    text = "".join(
        " " if c in "\r\n\t" or unicodedata.category(c) in ("Zl", "Zp") else c
        for c in text
        if unicodedata.category(c) not in ("Cc", "Cf") or c in "\r\n\t"
    )
    text = _MARKUP.sub("", text).replace("“", '"').replace("”", '"')
    text = " ".join(text.split()).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def sanitise(text: str, limit: int = 140) -> str:
    """One line of plain text: no secrets, no newlines, no markup characters, clipped.

    Secrets are masked first: dropping markup characters can break a key apart (``_``
    inside a token) so that the redactor would no longer recognise what is left.
    """
    text = redact(text)
    text = "".join(" " if c in "\r\n\t`*_#<>[]{}|" else c for c in text)
    text = " ".join(text.split()).strip(" .")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# -- the state rules -----------------------------------------------------------------


def judge(
    state: str,
    sup_days: int,
    con_days: int,
    new_con_day: bool,
    *,
    high_stakes: bool = False,
    released: bool = True,
    turned: bool = False,
) -> tuple[str, str]:
    """The state rules on distinct-day counts: (new state, reason).

    ``high_stakes``: never weaken, split or retire — the contradictions are the case for
    a narrowing the human decides.  ``released``: a weakening hypothesis retires on a
    further contradicting day only once it was carried as ``release``.  ``turned``: its
    last :data:`TURN_DAYS` evidence days all contradicted it, after earlier support
    (:func:`has_turned`)."""
    if high_stakes:
        kept = state if state in ("emerging", "live") else "live"
        if new_con_day:
            return kept, (
                f"contradicted on {con_days} day(s): kept as the case for a narrowing the "
                "human decides (a high-stakes rule never weakens in the nightly job)"
            )
        if sup_days >= 2 and sup_days > con_days:
            return "live", f"supported on {sup_days} distinct days, more than contradicted"
        return kept, "new evidence, state unchanged"
    if turned:
        if state == "weakening" and new_con_day and released:
            return "retired", "contradicted on a further day while weakening, after a release"
        return "weakening", (
            f"turned: contradicted on each of its last {TURN_DAYS} distinct evidence days, "
            "after earlier support"
        )
    if sup_days >= 2 and con_days >= 2 and 3 * min(sup_days, con_days) >= max(sup_days, con_days):
        return "split", (
            f"evidence divides by context: supported on {sup_days} days, contradicted on {con_days}"
        )
    if con_days >= 2 and con_days > sup_days:
        if state == "weakening" and new_con_day and released:
            return "retired", "contradicted on a further day while weakening, after a release"
        return "weakening", f"contradicted on {con_days} distinct days, more than supported"
    if sup_days >= 2 and sup_days > con_days:
        return "live", f"supported on {sup_days} distinct days, more than contradicted"
    return state, "new evidence, state unchanged"


def has_turned(sup_days: list[date], con_days: list[date]) -> bool:
    """Its last :data:`TURN_DAYS` distinct evidence days were all contradictions (none of
    them also a support), and some support came before them: a change of mind."""
    both = sorted(set(sup_days) | set(con_days))
    last = both[-TURN_DAYS:]
    if len(last) < TURN_DAYS or any(d in set(sup_days) for d in last):
        return False
    return any(d < last[0] for d in sup_days)


def advance(
    h: Hypothesis,
    day: date,
    supports: list[str],
    contradicts: list[str],
    *,
    recorded: dict[str, date] | None = None,
    quotes: dict[str, str] | None = None,
) -> tuple[Hypothesis, str] | None:
    """Apply one day's evidence.  Returns (new snapshot, reason) or None if nothing new.

    ``recorded`` maps an event id to the day it counts on, its :func:`day_key`
    (default: ``day``); ``quotes`` maps an event id to its text, the latest becoming
    the grounding quote.
    """
    if not h.carriable:
        return None
    new_s = [i for i in supports if i not in h.supports]
    new_c = [i for i in contradicts if i not in h.contradicts]
    if not new_s and not new_c:
        return None
    recorded = recorded or {}
    new_s_days = {recorded.get(i, day) for i in new_s}
    new_c_days = {recorded.get(i, day) for i in new_c}
    sup_days = sorted(set(h.supported_on) | new_s_days)
    con_days = sorted(set(h.contradicted_on) | new_c_days)
    rec_days = sorted(set(h.recorded_support) | new_s_days)
    new_con_day = bool(new_c_days - set(h.contradicted_on))
    state, reason = judge(
        h.state,
        len(sup_days),
        len(con_days),
        new_con_day,
        high_stakes=h.stakes == "high",
        released=h.released is not None,
        turned=has_turned(sup_days, con_days),
    )
    update: dict[str, Any] = {
        "state": state,
        "updated": day,
        "supports": (*h.supports, *new_s),
        "contradicts": (*h.contradicts, *new_c),
        "supported_on": sup_days,
        "contradicted_on": con_days,
        "recorded_support": rec_days,
    }
    found = quotes or {}
    found_quote = next((found[i] for i in reversed(new_s + new_c) if found.get(i)), None)
    if found_quote:
        update.update(last_friction=quote(found_quote), last_friction_day=day)
    for_q = next((found[i] for i in reversed(new_s) if found.get(i)), None)
    if for_q:
        update.update(last_for=quote(for_q), last_for_day=day)
    against_q = next((found[i] for i in reversed(new_c) if found.get(i)), None)
    if against_q:
        update.update(last_against=quote(against_q), last_against_day=day)
    return h.model_copy(update=update), reason


def meets_floor(h: Hypothesis) -> bool:
    """The promotion floor (see docs/cycle.md): live; support *recorded* on ≥ 5 distinct
    days, the first and the last ≥ 7 days apart (two calendar weeks, not five days that
    straddle a Monday); contradicted on fewer than a third as many days."""
    if h.state != "live" or h.children or h.tension:
        return False
    days = set(h.recorded_support)
    return (
        len(days) >= FLOOR_DAYS
        and (max(days) - min(days)).days >= FLOOR_SPAN_DAYS
        and 3 * len(set(h.contradicted_on)) < len(set(h.supported_on))
    )


# -- the fold and the cache ------------------------------------------------------------


def snapshot_data(h: Hypothesis, **extra: Any) -> dict[str, Any]:
    return {"hypothesis": h.model_dump(mode="json"), **extra}


def snapshot_of(rec: EvidenceRecord) -> Hypothesis | None:
    """The hypothesis snapshot a ``hypothesis`` / ``hypothesis-state`` record carries
    (none for a withdrawal: :func:`withdrawn_by`)."""
    if rec.kind not in ("hypothesis", "hypothesis-state") or rec.data.get("withdrawn"):
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
        gone = withdrawn_by(rec)
        if gone is not None:
            out.pop(gone, None)
    return out


def withdrawn_by(rec: EvidenceRecord) -> str | None:
    """The hypothesis a record withdraws: one a nightly run raised, taken back when that
    run was redone (jobs/redo.py) — as if it had never been raised."""
    if rec.kind != "hypothesis-state" or not rec.data.get("withdrawn"):
        return None
    return str(rec.data["withdrawn"])


def fold_root(root: MemoryRoot) -> dict[str, Hypothesis]:
    return fold(EvidenceLog(root).iter_all())


def parse_register(text: str | None, *, file: str = REGISTER_FILE) -> dict[str, Hypothesis]:
    if not text:
        return {}
    try:
        hypotheses = _parsed_register(text)
    except ValidationError as exc:
        raise InvalidInput(first_error(exc), file=file) from None
    return {h.id: h for h in hypotheses}


# A nightly run reads the register it wrote the night before several times over (its
# context, the merge under the lock, the human's list): the same text, validated once.
@lru_cache(maxsize=16)
def _parsed_register(text: str) -> tuple[Hypothesis, ...]:
    return tuple(RegisterFile.model_validate_json(text).hypotheses)


def dump_register(reg: dict[str, Hypothesis]) -> bytes:
    # pydantic's serializer writes what json.dumps(indent=2, ensure_ascii=False) wrote,
    # byte for byte, without the pure-Python encoder that indent forces on json.dumps
    register = RegisterFile(hypotheses=list(reg.values()))
    return register.model_dump_json(indent=2).encode() + b"\n"


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
    """Differences between Today's cache and the fold over Evidence (empty = agree).

    A hypothesis a session added is in Evidence before the nightly job adopts it into
    the cache; that is pending, not a disagreement, and is not reported.
    """
    cached = read_register(ScopedReader(root, "human"))
    folded = fold_root(root)
    problems = []
    for hid in sorted(set(cached) | set(folded)):
        a, b = cached.get(hid), folded.get(hid)
        if a is None and b is not None and b.origin == "session" and b.updated == b.created:
            continue
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


SHAPE_LIMIT = 120  # characters of a trigger or counter-move: a bias line stays short


def _clean(text: str | None, what: str, limit: int = 300) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    if not text:
        raise InvalidInput(f"the {what} is empty: leave the option out or say what it is")
    if len(text) > limit:
        raise InvalidInput(f"the {what} is {len(text)} characters; keep it under {limit}")
    # Evidence masks secrets on append; Today's cache must hold the same masked text.
    return redact(text)


def _day_of(ts: Any) -> tuple[Any, date]:
    from evolving_agent.memory.evidence.evidence import now

    when = ts or now()
    return when, (when.astimezone().date() if when.tzinfo else when.date())


def add_hypothesis(
    root: MemoryRoot,
    text: str,
    *,
    when: str | None = None,
    do: str | None = None,
    stakes: str = "low",
    actor: Actor = "human",
    ts: Any = None,
    parent: str | None = None,
) -> Hypothesis:
    """Register a new hypothesis (state ``emerging``).

    As ``human``: an Evidence record, then Today's cache.  As ``session`` (the
    assistant noticing something): only the Evidence record, since a session may not
    write Today; the nightly job adopts it when it reflects that day.
    """
    require_root(root)
    claim = _clean(text, "hypothesis text") or ""
    if stakes not in get_args(Stakes):
        raise InvalidInput(f"unknown stakes {stakes!r} (valid: low, high)")
    if actor not in ("human", "session"):
        raise InvalidInput("only the human or a session adds hypotheses by hand")
    hid = hypothesis_id(claim)
    writer = Writer(root, actor)
    reader = ScopedReader(root, actor)
    # A session's hypothesis added since the last nightly waits in Evidence, not yet in
    # the cache: a look-alike of it is the same belief too.
    known = read_register(reader)
    pending = {k: v for k, v in pending_session_hypotheses(root).items() if k not in known}
    adopt = " (a session's, waiting for evidence: 'hypothesis edit {} --adopt' adopts it)"
    if hid in known or hid in pending:
        note = adopt.format(hid) if hid in pending else ""
        raise InvalidInput(f"hypothesis {hid} already exists{note}: {claim}")
    same = duplicate_of(claim, {**pending, **known})
    if same is not None:
        note = adopt.format(same.id) if same.id in pending else ""
        raise InvalidInput(
            f"hypothesis {same.id} already says this{note} (the same words once invisible "
            f"characters, lookalike letters and widths are normalised): {same.text}"
        )
    stamp, day = _day_of(ts)
    if actor == "session":
        # The nightly adopts a session's hypothesis when it reflects that day: on a day
        # already reflected it would wait for good.
        refuse_reflected_day(root, stamp)
    h = Hypothesis(
        id=hid,
        text=claim,
        when=_clean(when, "trigger (--when)", SHAPE_LIMIT),
        do=_clean(do, "counter-move (--do)", SHAPE_LIMIT),
        stakes=stakes,  # checked against Stakes above
        origin=actor,  # human or session, checked above
        created=day,
        updated=day,
        parent=parent,
    )
    if actor == "human":
        writer.require_os_write("today", REGISTER_FILE)  # the assistant's OS user may not
    writer.append("hypothesis", f"new hypothesis {hid}: {claim}", data=snapshot_data(h), ts=stamp)
    if actor == "human":
        merge_into_register(writer, [h])
    return h


def _current(root: MemoryRoot, hid: str) -> Hypothesis:
    reg = fold_root(root)
    if hid not in reg:
        raise NotFound(f"no hypothesis with id {hid!r} (see 'evolving-agent hypothesis list')")
    return reg[hid]


def _record_change(root: MemoryRoot, h: Hypothesis, previous: str, reason: str, ts: Any) -> None:
    writer = Writer(root, "human")
    stamp, day = _day_of(ts)
    writer.append(
        "hypothesis-state",
        f"{h.id}: {previous} -> {h.state} ({reason})",
        data=snapshot_data(h, previous=previous, reason=reason, date=day.isoformat()),
        ts=stamp,
    )
    merge_into_register(writer, [h])


def edit_hypothesis(
    root: MemoryRoot,
    hid: str,
    *,
    text: str | None = None,
    when: str | None = None,
    do: str | None = None,
    stakes: str | None = None,
    adopt: bool = False,
    ts: Any = None,
) -> Hypothesis:
    """The human reshapes a hypothesis (claim, trigger, counter-move, stakes); the id and
    the evidence stay.  An empty ``when``/``do`` string clears that part.

    Any edit of a session-written hypothesis adopts it (the human has now read and
    kept its words: it is carriable without waiting for friction).  ``adopt`` takes on
    the session's proposed trigger / counter-move as they are (the ones given here
    win)."""
    require_root(root)
    h = _current(root, hid)
    if not h.active:
        raise InvalidInput(f"hypothesis {hid} is retired; add a new one instead")
    update: dict[str, Any] = {}
    if adopt:
        if h.proposal is None and not h.session_words:
            raise InvalidInput(
                f"hypothesis {hid} has nothing of the session's to adopt (no proposal)"
            )
        if h.proposal is not None:
            if h.proposal.when and when is None:
                update["when"] = h.proposal.when
            if h.proposal.do and do is None:
                update["do"] = h.proposal.do
            update["proposal"] = None
        update["adopted"] = True
    if text is not None:
        update["text"] = _clean(text, "hypothesis text")
    for key, value, what in (("when", when, "trigger (--when)"), ("do", do, "counter-move (--do)")):
        if value is not None:
            update[key] = _clean(value, what, SHAPE_LIMIT) if value.strip() else None
    if stakes is not None:
        if stakes not in get_args(Stakes):
            raise InvalidInput(f"unknown stakes {stakes!r} (valid: low, high)")
        update["stakes"] = stakes
    if not update:
        raise InvalidInput("nothing to change: give TEXT, --when, --do, --stakes or --adopt")
    if h.origin == "session":
        update["adopted"] = True
    new = h.model_copy(update=update)
    changed = ", ".join(sorted(update))
    _record_change(root, new, h.state, f"edited by the human ({changed})", ts)
    return new


def propose_shape(
    root: MemoryRoot,
    hid: str,
    *,
    when: str | None = None,
    do: str | None = None,
    ts: Any = None,
) -> EvidenceRecord:
    """The session proposes a trigger and/or counter-move for a hypothesis.

    Only an Evidence record (a session cannot write Today); the nightly job records it
    on the hypothesis as the session's proposal.  It reaches the bias only once
    friction supports the hypothesis on 2 distinct days from the proposal's day, or
    when the human adopts it (``hypothesis edit ID --adopt``)."""
    require_root(root)
    if when is None and do is None:
        raise InvalidInput("propose at least a trigger (--when) or a counter-move (--do)")
    shape = {
        "when": _clean(when, "trigger (--when)", SHAPE_LIMIT),
        "do": _clean(do, "counter-move (--do)", SHAPE_LIMIT),
    }
    reg = read_register(ScopedReader(root, "session"))
    h = reg.get(hid)
    if h is None:
        raise NotFound(f"no hypothesis with id {hid!r} in today's register (see 'hypothesis list')")
    if not h.carriable:
        raise InvalidInput(f"hypothesis {hid} is retired or split; propose for a live one")
    stamp, _ = _day_of(ts)
    refuse_reflected_day(root, stamp)  # read by the nightly of that day only
    what = "; ".join(f"{k}: {v}" for k, v in shape.items() if v)
    return Writer(root, "session").append(
        "hypothesis-proposal",
        f"session proposes for {hid}: {what}",
        data={"hypothesis": hid, **shape},
        ts=stamp,
    )


def retire_hypothesis(root: MemoryRoot, hid: str, reason: str, *, ts: Any = None) -> Hypothesis:
    """The human retires a hypothesis, saying why (terminal, like an evidence retirement)."""
    require_root(root)
    why = _clean(reason, "reason (--reason)") or ""
    h = _current(root, hid)
    if not h.active:
        raise InvalidInput(f"hypothesis {hid} is already retired")
    new = h.model_copy(update={"state": "retired", "reason": why})
    _record_change(root, new, h.state, f"retired by the human: {why}", ts)
    return new


def split_hypothesis(
    root: MemoryRoot, hid: str, text_a: str, text_b: str, *, ts: Any = None
) -> tuple[Hypothesis, list[Hypothesis]]:
    """Split a hypothesis into two narrower ones.  The evidence stays with the parent
    (state ``split``, no longer carried); the children start ``emerging`` with the
    parent's trigger, counter-move and stakes until the human edits them."""
    require_root(root)
    h = _current(root, hid)
    if not h.carriable:
        raise InvalidInput(f"hypothesis {hid} is retired or already split")
    claims = [_clean(t, "narrower claim") or "" for t in (text_a, text_b)]
    ids = [hypothesis_id(c) for c in claims]
    if len(set(ids)) < 2 or hid in ids:
        raise InvalidInput("the two narrower claims must differ from each other and the parent")
    reg = fold_root(root)
    for c, i in zip(claims, ids, strict=True):
        if i in reg:
            raise InvalidInput(f"hypothesis {i} already exists: {c}")
    children = [
        add_hypothesis(root, c, when=h.when, do=h.do, stakes=h.stakes, ts=ts, parent=hid)
        for c in claims
    ]
    new = h.model_copy(update={"state": "split", "children": ids})
    _record_change(root, new, h.state, f"split by the human into {ids[0]} and {ids[1]}", ts)
    return new, children


def mark_canon(
    root: MemoryRoot, hid: str, canon_text: str | None, review_id: str, *, ts: Any = None
) -> None:
    """After an approval: the hypothesis's Canon entry (None once removed), so a later
    retirement proposes its removal and an edit proposes a replace."""
    reg = fold_root(root)
    h = reg.get(hid)
    if h is None or h.canon_text == canon_text:
        return
    new = h.model_copy(update={"canon_text": canon_text})
    why = f"in Canon after {review_id}" if canon_text else f"out of Canon after {review_id}"
    _record_change(root, new, h.state, why, ts)


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


def _change_day(rec: EvidenceRecord, snap: Hypothesis) -> date:
    """The day a step happened: a human's edit, retirement or split names its own day
    (``data.date``); a job's step is dated by the evidence it reflected."""
    if rec.actor == "human" and isinstance(rec.data.get("date"), str):
        try:
            return date.fromisoformat(rec.data["date"])
        except ValueError:
            pass
    return snap.updated


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
        if previous != snap.state or "reason" in rec.data and "edited" in str(rec.data["reason"]):
            history.append(
                StateChange(
                    evidence_id=rec.id,
                    day=_change_day(rec, snap),
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
    friction: list[EvidenceRecord] | None = None,
    keys: dict[str, date] | None = None,
) -> dict[str, tuple[Hypothesis, str]]:
    """New snapshots (with reasons) for every hypothesis the day's evidence touched.

    Each event counts on its :func:`recorded_day`; ``keys`` gives the day of events
    read from earlier days (a model's reading of last week's untagged friction)."""
    recorded = {**(keys or {}), **{r.id: recorded_day(r) for r in friction or []}}
    quotes = {r.id: r.text for r in friction or []}
    changes: dict[str, tuple[Hypothesis, str]] = {}
    for hid, (sups, cons) in links.items():
        h = register.get(hid)
        if h is None:
            continue  # a tag naming an unknown hypothesis changes nothing
        step = advance(h, day, sups, cons, recorded=recorded, quotes=quotes)
        if step is not None:
            changes[hid] = step
    return changes
