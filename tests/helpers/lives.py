"""Generated lives with known ground truth, lived through the real jobs.

:func:`generate_life` draws, from one seed and deterministically, an owner who writes
friction in two to four of twelve languages (eight scripts), three to eight hypotheses
with stakes, and six to eight weeks of friction whose *truth* is known day by day:

* beliefs that **hold** (steady support, a rare contradiction at most);
* a genuine **reversal**: a low-stakes preference supported early, contradicted on every
  evidence day from ``reverses_on`` — and the owner's new preference (its opposite),
  registered that day and supported from then on;
* a **tagged pendulum**: two opposite beliefs sharing a trigger whose support takes turns
  day to day for two weeks (a real relation: tension is right there);
* an **unrelated alternating pair**: two beliefs about unrelated things supported on
  alternating days by chance (no relation: tension is wrong there);
* an **untagged pendulum**: two opposite complaints ("too long" / "more detail")
  alternating untagged;
* high-stakes rules, some with contradicting cases (narrowings for the human);
* recurring untagged patterns (a complaint, an omission), some written with look-alike
  characters; injected instructions addressed to the assistant; sarcastic pushback;
  a flood day; downtime (no job runs, friction still recorded); empty days.

:func:`live_life` writes it into a memory root through the real jobs (nightly every day
that is not downtime, with its catch-up; weekly on Sundays; monthly on the 1st) with
the rules reflector and returns each morning's bias and carry.  The grader
(:mod:`tests.helpers.grader`) reads a :class:`Lived` against the :class:`Life`'s truth.

Public API (stable; others build on it): :func:`generate_life`, :class:`Life` (``.events``,
``.truth``, ``.hypotheses``, ``.langs``, ``.start``, ``.days``), :class:`Event`,
:class:`Spec`, :class:`Truth`, :class:`DayTruth`, :func:`live_life`, :class:`Lived`,
:class:`Morning`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from functools import cached_property
from typing import Any, Literal

from evolving_agent.memory.base.similarity import similar
from evolving_agent.memory.ops.hypotheses import hypothesis_id
from tests.helpers.phrases import (
    HIGH,
    INJECTIONS,
    LANGS,
    OBJECTS,
    OPPOSITES,
    PATTERNS,
    SARCASM,
    wording,
)

Role = Literal["holds", "reverses", "new-preference", "pendulum", "alternating", "high"]
EventKind = Literal[
    "support", "contradict", "sarcasm", "pattern", "lookalike", "injection",
    "untagged-pendulum", "flood", "noise",
]  # fmt: skip

# Which languages every generated life may draw from, by script, so each life spans
# scripts (Latin with accents, Cyrillic, Arabic/Hebrew, CJK, Korean, Devanagari/Thai).
_SCRIPT_GROUPS: tuple[tuple[str, ...], ...] = (
    ("es", "fr", "de"),
    ("ru",),
    ("ar", "he"),
    ("zh", "ja"),
    ("ko",),
    ("hi", "th"),
    ("en",),
)


@dataclass(frozen=True)
class Spec:
    """One hypothesis the owner registers: its words, stakes, role and truth."""

    key: str  # the topic
    lang: str
    claim: str
    when: str
    do: str
    stakes: Literal["low", "high"]
    role: Role
    added_on: int = 0  # day index it is registered on (08:00)
    reverses_on: int | None = None  # role "reverses": first contradicted day index
    opposite: str | None = None  # id of its real opposite in this life (if any)

    @cached_property  # asked about 40,000 times a life
    def id(self) -> str:
        return hypothesis_id(self.claim)


@dataclass(frozen=True)
class Event:
    """One friction event: when, its words, its tags (ids), and what it truly is."""

    day: int
    hour: int
    minute: int
    text: str
    lang: str
    kind: EventKind
    supports: str | None = None  # hypothesis id tagged --supports
    contradicts: str | None = None  # hypothesis id tagged --contradicts
    about: str | None = None  # the hypothesis id or pattern key it is truly about
    side: str | None = None  # untagged pendulum: "a" or "b"
    instruction: bool = False  # addresses the assistant as an instruction


@dataclass(frozen=True)
class DayTruth:
    day: date
    index: int
    downtime: bool  # no job ran for this day (its morning is stale)
    empty: bool  # no friction at all
    turned: frozenset[str]  # low-stakes beliefs whose recent evidence has turned
    holds: frozenset[str]  # beliefs the evidence so far backs


@dataclass(frozen=True)
class Truth:
    """What is true of the life as a whole (pairs are frozensets of two ids)."""

    related: frozenset[frozenset[str]]  # real opposites / shared triggers: tension may hold
    unrelated_alternating: frozenset[frozenset[str]]  # take turns by chance only
    untagged_pendulum: tuple[str, str] | None  # the two opposite complaints (texts)
    patterns: dict[str, str]  # pattern key -> its first wording (raised as a watchpoint)
    injections: tuple[str, ...]  # texts that read as instructions to the assistant
    days: tuple[DayTruth, ...]
    n_turn: int = 3  # invariant 3's N: distinct contradicted days that make a turn


@dataclass
class Life:
    seed: int
    start: date
    days: int
    owner: str
    langs: list[str]
    hypotheses: list[Spec]
    events: list[Event]
    truth: Truth
    downtime: frozenset[int] = frozenset()

    def day(self, i: int) -> date:
        return self.start + timedelta(days=i)

    def spec(self, hid: str) -> Spec | None:
        return next((s for s in self.hypotheses if s.id == hid), None)

    def events_on(self, i: int) -> list[Event]:
        return [e for e in self.events if e.day == i]


# -- generation --------------------------------------------------------------------


def _lookalike(text: str, rng: random.Random) -> str:
    """The same words with a look-alike letter, a zero-width space or a fullwidth
    character slipped in (what copy-paste and IMEs do)."""
    swaps = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с"}  # Latin -> Cyrillic
    how = rng.randrange(3)
    if how == 0 and any(c in text for c in swaps):
        c = next(c for c in swaps if c in text)
        return text.replace(c, swaps[c], 1)
    if how == 1 and " " in text:
        return text.replace(" ", " \u200b", 1)
    cut = len(text) // 2
    return text[:cut] + "\u200b" + text[cut:]


def generate_life(seed: int) -> Life:
    """One life, drawn from ``seed`` (the same seed always gives the same life)."""
    rng = random.Random(seed)
    weeks = rng.randint(6, 8)
    days = 7 * weeks
    start = date(2027, 1, 4) + timedelta(weeks=rng.randrange(40))  # a Monday
    groups = rng.sample(_SCRIPT_GROUPS, rng.randint(2, 4))
    langs = [rng.choice(g) for g in groups]
    owner = f"owner-{seed}"

    def lang() -> str:
        return langs[0] if rng.random() < 0.5 else rng.choice(langs)

    specs: list[Spec] = []
    used: set[str] = set()

    def spec(topic: str, role: Role, stakes: str = "low", **kw: object) -> Spec:
        lg = str(kw.pop("lang", None) or lang())
        claim, when, do, _, _ = wording(topic, lg)
        if "when" in kw:
            when = str(kw.pop("when"))
        s = Spec(topic, lg, claim, when, do, "high" if stakes == "high" else "low", role,
                 **kw)  # type: ignore[arg-type]
        used.add(topic)
        return s

    n = rng.randint(3, 8)
    plan: list[str] = []
    # Draw the structures this life has (each at most once), then fill with "holds".
    pool = ["reverses", "pendulum", "alternating", "high", "high2"]
    rng.shuffle(pool)
    for item in pool:
        if len(plan) + (2 if item in ("reverses", "pendulum", "alternating") else 1) > n:
            continue
        if rng.random() < 0.6:
            plan.append(item)
    related: set[frozenset[str]] = set()
    unrelated: set[frozenset[str]] = set()
    pairs_left = ["brief", "ask"]
    rng.shuffle(pairs_left)
    for item in plan:
        if item in ("reverses", "pendulum") and pairs_left:
            a = pairs_left.pop()
            b = OPPOSITES[a]
            lg = lang()
            if item == "reverses":
                r = rng.randint(days // 3, days // 2)
                sb = spec(b, "new-preference", lang=lg, added_on=r)
                sa = spec(a, "reverses", lang=lg, reverses_on=r, opposite=sb.id)
                sb = replace(sb, opposite=sa.id)
            else:
                # Opposites that share their trigger: a real relation the job can see.
                wa = wording(a, lg)
                sb = spec(b, "pendulum", lang=lg, when=wa[1])
                sa = spec(a, "pendulum", lang=lg, opposite=sb.id)
                sb = replace(sb, opposite=sa.id)
            specs += [sa, sb]
            related.add(frozenset({sa.id, sb.id}))
        elif item == "alternating":
            free = [t for t in ("onepick", "tests") if t not in used]
            if len(free) == 2:
                sa, sb = spec(free[0], "alternating"), spec(free[1], "alternating")
                specs += [sa, sb]
                unrelated.add(frozenset({sa.id, sb.id}))
        elif item in ("high", "high2"):
            free = [t for t in ("destruct", "secrets") if t not in used]
            if free:
                specs.append(spec(free[0], "high", "high"))
    for topic in ("onepick", "tests", "brief", "ask"):
        if len(specs) >= n:
            break
        if topic in used or OPPOSITES.get(topic) in used:
            continue
        specs.append(spec(topic, "holds"))
    if len(specs) < 3 and "destruct" not in used:
        specs.append(spec("destruct", "high", "high"))

    # Downtime: 3-7 days without jobs, after the first ten days.
    down: set[int] = set()
    if rng.random() < 0.7:
        d0 = rng.randint(10, days - 10)
        down = set(range(d0, d0 + rng.randint(3, 7)))
    empty = {i for i in range(days) if rng.random() < 0.1}
    flood_day = rng.randrange(days) if rng.random() < 0.5 else None

    events: list[Event] = []
    minute = [0]

    def at(i: int) -> tuple[int, int, int]:
        minute[0] = (minute[0] + 7) % 60
        return i, rng.randint(9, 18), minute[0]

    def note(i: int, text: str) -> str:
        return f"{text} · {rng.choice(OBJECTS)}"

    by_id = {s.id: s for s in specs}
    pend_start = rng.randint(3, max(4, days - 20))
    alt_start = rng.randint(3, max(4, days - 20))
    for i in range(days):
        if i in empty and i != flood_day:
            continue
        for s in specs:
            if i < s.added_on:
                continue
            _, _, _, pro, con = wording(s.key, s.lang)
            sup = con_ = False
            if s.role == "holds":
                sup = rng.random() < 0.45
                con_ = not sup and con is not None and rng.random() < 0.02
            elif s.role == "reverses":
                assert s.reverses_on is not None
                if i < s.reverses_on:
                    sup = rng.random() < 0.5
                else:
                    con_ = rng.random() < 0.55
            elif s.role == "new-preference":
                sup = rng.random() < 0.55
            elif s.role == "pendulum":
                span = range(pend_start, pend_start + 14)
                first = s.opposite is not None and s.id < s.opposite
                if i in span:
                    sup = ((i - pend_start) % 2 == 0) == first
            elif s.role == "alternating":
                span = range(alt_start, alt_start + 14)
                first = min(x.id for x in specs if x.role == "alternating") == s.id
                if i in span:
                    sup = ((i - alt_start) % 2 == 0) == first
                else:
                    sup = rng.random() < 0.15
            elif s.role == "high":
                sup = rng.random() < 0.25
                con_ = not sup and con is not None and rng.random() < 0.08
            if sup:
                text = pro
                kind: EventKind = "support"
                if s.key == "onepick" and rng.random() < 0.2:
                    text, kind = SARCASM[s.lang], "sarcasm"
                events.append(Event(*at(i), note(i, text), s.lang, kind, supports=s.id,
                                    about=s.id))
            if con_ and con:
                events.append(Event(*at(i), note(i, con), s.lang, "contradict",
                                    contradicts=s.id, about=s.id))
    # Untagged: recurring patterns (some as look-alikes), the untagged pendulum,
    # injections, a flood.
    pattern_first: dict[str, str] = {}
    for key in rng.sample(sorted(PATTERNS), rng.randint(0, 2)):
        lg = lang()
        text = PATTERNS[key][lg]
        pattern_first[key] = text
        begin = rng.randint(0, days - 14)
        for i in sorted(rng.sample(range(begin, begin + 14), rng.randint(3, 6))):
            if rng.random() < 0.3:
                events.append(Event(*at(i), _lookalike(text, rng), lg, "lookalike", about=key))
            else:
                events.append(Event(*at(i), text, lg, "pattern", about=key))
    untagged_pendulum: tuple[str, str] | None = None
    if "brief" not in used and "detail" not in used and rng.random() < 0.5:
        lg = lang()
        _, _, _, too_long, more = wording("brief", lg)
        assert more is not None
        untagged_pendulum = (too_long, more)
        begin = rng.randint(0, days - 14)
        for k in range(rng.randint(8, 14)):
            side = "a" if k % 2 == 0 else "b"
            text = too_long if side == "a" else more
            events.append(Event(*at(begin + k), text, lg, "untagged-pendulum", about="pendulum",
                                side=side))
    injections: list[str] = []
    if rng.random() < 0.6:
        lg = rng.choice(langs)
        variant = rng.randrange(2)
        text = INJECTIONS[lg][variant]
        injections.append(text)
        for i in sorted(rng.sample(range(days), rng.randint(2, 4))):
            events.append(Event(*at(i), text, lg, "injection", about="injection",
                                instruction=True))
    if flood_day is not None and specs:
        s = rng.choice([x for x in specs if x.added_on <= flood_day])
        _, _, _, pro, _ = wording(s.key, s.lang)
        for _ in range(rng.randint(30, 60)):
            events.append(Event(*at(flood_day), note(flood_day, pro), s.lang, "flood",
                                supports=s.id, about=s.id))
    events.sort(key=lambda e: (e.day, e.hour, e.minute, e.text))

    truth = Truth(
        related=frozenset(related),
        unrelated_alternating=frozenset(unrelated),
        untagged_pendulum=untagged_pendulum,
        patterns=pattern_first,
        injections=tuple(injections),
        days=tuple(_day_truths(start, days, specs, events, down, by_id)),
    )
    return Life(seed, start, days, owner, langs, specs, events, truth, frozenset(down))


def _day_truths(
    start: date, days: int, specs: list[Spec], events: list[Event], down: set[int],
    by_id: dict[str, Spec],
) -> list[DayTruth]:
    """Per day: which low-stakes beliefs have turned (the last N distinct evidence days
    all contradicted it, after earlier support) and which the evidence so far backs."""
    n = 3
    out = []
    for i in range(days):
        turned, holds = set(), set()
        for s in specs:
            sup = sorted({e.day for e in events if e.day <= i and e.supports == s.id})
            con = sorted({e.day for e in events if e.day <= i and e.contradicts == s.id})
            if s.stakes == "low" and sup and len([d for d in con if d > sup[-1]]) >= n:
                turned.add(s.id)
            elif sup and len(sup) > len(con):
                holds.add(s.id)
        out.append(
            DayTruth(
                day=start + timedelta(days=i),
                index=i,
                downtime=i in down,
                empty=not any(e.day == i for e in events),
                turned=frozenset(turned),
                holds=frozenset(holds),
            )
        )
    return out


def related_texts(a: str, b: str) -> bool:
    """Two friction texts about the same thing (the grader's reading, as the job's)."""
    return similar(a, b)


# -- living it ----------------------------------------------------------------------


@dataclass
class Morning:
    """What the owner boots with on one morning (from the nightly run for the day before)."""

    day: date  # the morning
    bias: str | None  # today/bias.md written for this morning (None: none fresh)
    carry_type: str | None
    hypothesis: str | None
    stale: bool  # no run wrote this morning's bias (downtime, or a quiet day)
    register: dict[str, Any] = field(default_factory=dict)  # id -> Hypothesis, as booted


@dataclass
class Lived:
    life: Life
    root: object  # MemoryRoot (kept loose: helpers import no product types at class level)
    mornings: dict[date, Morning] = field(default_factory=dict)

    def fresh(self) -> list[Morning]:
        return [m for m in self.mornings.values() if m.bias is not None and not m.stale]


def _at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute)).astimezone()


def live_life(life: Life, root: object, *, monthly: bool = True) -> Lived:
    """Live ``life`` in ``root`` (a fresh memory root) through the real jobs and return
    each morning's bias and carry.  Downtime days run no job; the first run after them
    catches up (as a laptop that was off would)."""
    from evolving_agent.jobs.markers import load_marker
    from evolving_agent.jobs.monthly import run_monthly
    from evolving_agent.jobs.nightly import NightlyPlan, run_nightly
    from evolving_agent.jobs.weekly import run_weekly
    from evolving_agent.memory.authority import Writer
    from evolving_agent.memory.ops.hypotheses import add_hypothesis, list_hypotheses
    from evolving_agent.paths import MemoryRoot
    from evolving_agent.reflectors.rules import RulesReflector

    assert isinstance(root, MemoryRoot)
    lived = Lived(life, root)
    session = Writer(root, "session")
    rules = RulesReflector()
    pending_weekly: list[date] = []
    for i in range(life.days):
        day = life.day(i)
        for s in life.hypotheses:
            if s.added_on == i:
                add_hypothesis(root, s.claim, when=s.when, do=s.do, stakes=s.stakes,
                               ts=_at(day, 8))
        for e in life.events_on(i):
            session.append(
                "friction", e.text, session=f"{life.owner}-{day}", supports=e.supports,
                contradicts=e.contradicts, ts=_at(day, e.hour, e.minute),
            )
        nxt = day + timedelta(days=1)
        if day.weekday() == 6:
            pending_weekly.append(day)
        if i in life.downtime:
            lived.mornings[nxt] = Morning(nxt, None, None, None, stale=True)
            continue
        run_nightly(root, day, reflector=rules, now=_at(nxt, 3))
        for week_end in pending_weekly:
            run_weekly(root, week_end, reflector=rules, now=_at(nxt, 3, 30))
        pending_weekly.clear()
        if monthly and nxt.day == 1:
            run_monthly(root, nxt, now=_at(nxt, 4))
        marker = load_marker(root, "nightly", day)
        assert marker is not None and marker.phase == "done", day
        plan = NightlyPlan.model_validate(marker.plan)
        register = {h.id: h for h in list_hypotheses(root)}
        if plan.carry is None:
            lived.mornings[nxt] = Morning(nxt, None, None, None, True, register)
        else:
            lived.mornings[nxt] = Morning(
                nxt, plan.bias, plan.carry.type, plan.carry.hypothesis, False, register
            )
    return lived


def describe(life: Life) -> str:
    """One line per structure: what a failing test prints about its life."""
    lines = [
        f"seed {life.seed}: {life.days} days from {life.start}, languages "
        f"{', '.join(f'{lg} ({LANGS[lg]})' for lg in life.langs)}; downtime "
        f"{sorted(life.downtime) or 'none'}"
    ]
    for s in life.hypotheses:
        extra = f", reverses on day {s.reverses_on}" if s.reverses_on is not None else ""
        extra += f", added day {s.added_on}" if s.added_on else ""
        lines.append(f"  {s.id} [{s.role}, {s.stakes}, {s.lang}{extra}] {s.claim}")
    t = life.truth
    if t.untagged_pendulum:
        lines.append(f"  untagged pendulum: {t.untagged_pendulum}")
    if t.patterns:
        lines.append(f"  patterns: {sorted(t.patterns)}")
    if t.injections:
        lines.append(f"  injections: {t.injections}")
    return "\n".join(lines)


__all__ = [
    "HIGH", "DayTruth", "Event", "Life", "Lived", "Morning", "Spec", "Truth", "describe",
    "generate_life", "live_life", "related_texts",
]  # fmt: skip
