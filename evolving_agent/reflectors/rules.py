"""The ``rules`` reflector: deterministic, offline, the default.  Documented behaviour
(docs/cycle.md states the same rules for users):

Nightly
  1. Apply the day's tagged friction to the register with the shared state rules
     (``memory/hypotheses.py``); the rules reflector reads no untagged event as evidence.
  2. Raise: an untagged friction event of the day that is *similar* to untagged friction
     of another day in the last 7 raises one ``emerging`` hypothesis (origin
     ``nightly``) citing those events, in the friction's own words.  Similar = after
     normalising (lower case, letters and digits only, stop words and words under 3
     letters dropped, a crude suffix stem), the two events share at least 2 words and
     at least a quarter of the words of both together (Jaccard ≥ 0.25).
  3. Choose the hypothesis among the carriable ones (not retired, not superseded by a
     split), in this order: not yet on its way to Canon (no proposal, not in Canon)
     first; then not "tired" (its last 3 carries all held, or its last 2 untested);
     then touched today (or raised today); then by state — split, weakening,
     emerging, live; then the oldest.  None carriable: quote the day's first untagged
     friction as a watchpoint (a question if yesterday was a watchpoint); no friction
     either: a quiet day — nothing is written, nothing invented.
  4. Choose the type from a preference list for (state, today's signal) — the first
     not used in the last three carries, else the first that differs from yesterday's,
     else the next type after yesterday's in the fixed order of the nine.  ``release``
     and ``refusal`` of a high-stakes hypothesis need contradiction on ≥ 2 distinct days.
  5. Words.  Line 1 is the instruction: the type's framing + trigger + counter-move
     ("Try it once today. When about to list alternatives: give one recommendation.").
     The type frames, never inverts: every type but ``release`` carries the
     counter-move.  Line 2 grounds it in the latest friction on the hypothesis (a short
     sanitised quote).  Line 3, only for high stakes: what is at stake.  The carry text
     reads right on the morning it applies ("today", never "tomorrow").

Weekly
  Every candidate (the promotion floor, ``memory/hypotheses.meets_floor``) is proposed
  as a habit: the counter-move (with its trigger) when it has one, else the claim.
"""

from __future__ import annotations

import re

from evolving_agent.memory.hypotheses import (
    Hypothesis,
    apply_day,
    day_key,
    day_links,
    hypothesis_id,
    sanitise,
)
from evolving_agent.memory.today import CARRY_TYPES
from evolving_agent.reflectors.base import (
    NewHypothesis,
    NightlyContext,
    NightlyReflection,
    ProposalDraft,
    Reflector,
    WeeklyContext,
    WeeklyReflection,
    check_meaning,
)

# (state, signal) -> preferred carry types, best first.
PREFERENCES: dict[tuple[str, str], tuple[str, ...]] = {
    ("emerging", "supported"): ("experiment", "practice", "watchpoint"),
    ("emerging", "contradicted"): ("question", "watchpoint", "experiment"),
    ("emerging", "quiet"): ("watchpoint", "experiment", "question"),
    ("live", "supported"): ("rule-for-tomorrow", "vow", "practice"),
    ("live", "contradicted"): ("repair", "question", "watchpoint"),
    ("live", "quiet"): ("vow", "practice", "rule-for-tomorrow"),
    ("weakening", "supported"): ("watchpoint", "experiment", "question"),
    ("weakening", "contradicted"): ("release", "question", "watchpoint"),
    ("weakening", "quiet"): ("question", "watchpoint", "release"),
    ("split", "supported"): ("watchpoint", "question", "experiment"),
    ("split", "contradicted"): ("question", "watchpoint", "experiment"),
    ("split", "quiet"): ("question", "experiment", "watchpoint"),
}

STATE_RANK = {"split": 0, "weakening": 1, "emerging": 2, "live": 3}

# How each type frames the instruction (line 1) and names itself in the carry.
FRAMES: dict[str, tuple[str, str]] = {
    "vow": ("Keep this all day", "Vow for today"),
    "experiment": ("Try it once today and notice what happens", "Experiment for today"),
    "watchpoint": ("Watch for the moment", "Watchpoint for today"),
    "refusal": ("Refuse the old pull", "Refusal for today"),
    "rule-for-tomorrow": ("Rule for today, checked before each answer", "Rule for today"),
    "question": ("Ask the user once whether this is what they want", "Question for today"),
    "repair": ("Make the last slip right at the first chance", "Repair for today"),
    "practice": ("Rehearse it on purpose", "Practice for today"),
    "release": ("Stop leaning on this today", "Release for today"),
}

_STOP = frozenset(
    "the and for with that this was were are but not you your they them then than from "
    "have has had into about just what when which who would could should there their "
    "its it's i'm did does done been being also only very some any all one too out "
    "again asked user users".split()
)


def words(text: str) -> frozenset[str]:
    """Normalised content words: the similarity basis for raising (documented above)."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if len(w) < 3 or w in _STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if len(w) > len(suffix) + 3 and w.endswith(suffix):
                w = w[: -len(suffix)]
                break
        out.add(w)
    return frozenset(out)


def similar(a: str, b: str) -> bool:
    wa, wb = words(a), words(b)
    shared = wa & wb
    return len(shared) >= 2 and 4 * len(shared) >= len(wa | wb)


def choose_type(
    state: str, signal: str, previous: str | None, recent: list[str], *, protect: bool = False
) -> str:
    """The carry type; ``protect`` (high stakes, contradicted on < 2 days) rules out
    ``release`` and ``refusal``."""
    banned = {"release", "refusal"} if protect else set()
    prefs = [
        t
        for t in PREFERENCES.get((state, signal), ("watchpoint", "question", "experiment"))
        if t not in banned
    ]
    for t in prefs:
        if t not in recent[-3:] and t != previous:
            return t
    for t in prefs:
        if t != previous:
            return t
    i = CARRY_TYPES.index(previous) if previous in CARRY_TYPES else -1
    for step in range(1, len(CARRY_TYPES) + 1):
        t = CARRY_TYPES[(i + step) % len(CARRY_TYPES)]
        if t != previous and t not in banned:
            return t
    raise AssertionError("nine types always leave one")  # pragma: no cover


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].upper() + text[1:] + "."


def instruction(h: Hypothesis) -> str:
    """Trigger + counter-move, as one executable sentence (never the bare claim as an
    order: a claim phrased as a failure would become an order to fail).  The human's
    own words are quoted when they would trip a meaning check ("at least once")."""
    claim = sanitise(h.text, 120)
    if h.when and h.do:
        return _guarded(f"when {h.when}: {h.do}", f"when “{h.when}”: “{h.do}”")
    if h.do:
        return _guarded(f"when it comes up: {h.do}", f"when it comes up: “{h.do}”")
    if h.when:
        return _sentence(f"when {h.when}: stop, and do what was asked instead")
    return _sentence(f"when it comes up, check whether this holds: “{claim}”")


def _guarded(plain: str, quoted: str) -> str:
    try:
        check_meaning(plain)
    except ValueError:
        return _sentence(quoted)
    return _sentence(plain)


def bias_lines(h: Hypothesis, ctype: str) -> list[str]:
    frame, _ = FRAMES[ctype]
    if ctype == "release":
        claim = sanitise(h.text, 100)
        days = len(set(h.contradicted_on))
        first = f"{frame}: “{claim}”; contradicted on {days} days, so do what is asked instead."
    else:
        first = f"{frame}. {instruction(h)}"
    if h.last_friction:
        second = f"Grounding, {h.last_friction_day}: “{h.last_friction}”"
    else:
        second = "No friction on it yet: this is a test, not a verdict."
    lines = [first, second]
    if h.stakes == "high":
        lines.append(
            f"At stake: hard to undo or seen by others (“{sanitise(h.text, 90)}”); "
            "when unsure, stop and ask first."
        )
    return lines


def carry_text(h: Hypothesis, ctype: str) -> str:
    _, label = FRAMES[ctype]
    if ctype == "release":
        return f"{label}: stop leaning on “{sanitise(h.text, 120)}”."
    return f"{label}. {instruction(h)}"


def raise_from(context: NightlyContext, known: set[str]) -> NewHypothesis | None:
    """The first untagged event of the day that recurs (similar on another day ≤ 7).

    Another day is another :func:`day_key` (UTC date of the instant), not another day
    file: a note written a minute earlier under another ``TZ`` is not a recurrence."""
    recent = context.recent_untagged
    for ev in context.untagged:
        key = day_key(ev)
        matches = [n for n in recent if n.counts_on != key and similar(n.text, ev.text)]
        if not matches:
            continue
        first = min(matches, key=lambda n: (n.day, n.id))
        text = "This recurs: " + sanitise(first.text, 180)
        if hypothesis_id(text) in known:
            continue
        return NewHypothesis(
            text=text,
            when=f"about to repeat “{sanitise(ev.text, 60)}”",
            cites=[n.id for n in sorted(matches, key=lambda n: (n.day, n.id))] + [ev.id],
        )
    return None


class RulesReflector(Reflector):
    name = "rules"

    def nightly(self, *, context: NightlyContext, feedback: str | None = None) -> NightlyReflection:
        register = context.register
        friction = context.friction
        changes = apply_day(register, context.day, day_links(friction, []), friction)
        current = {hid: changes[hid][0] if hid in changes else h for hid, h in register.items()}
        new = raise_from(context, set(register))
        raised = context.raised(new) if new else None
        pool = [h for h in current.values() if h.carriable]
        if raised is not None:
            pool.append(raised)
        prev = context.previous_carry
        prev_type = prev.type if prev else None
        if not pool:
            untagged = context.untagged
            if not untagged:
                return NightlyReflection()  # a quiet day: invent nothing
            ctype = "question" if prev_type == "watchpoint" else "watchpoint"
            quote = sanitise(untagged[0].text, 160)
            return NightlyReflection(
                carry_type=ctype,  # one of the nine
                carry_text=f"{FRAMES[ctype][1]}: notice whether this repeats: “{quote}”.",
                bias=(
                    f"{FRAMES[ctype][0]}. When this starts to happen again, stop and do what "
                    f"was asked instead: “{quote}”\n"
                    "No hypothesis covers it yet; if it recurs on another day, the nightly "
                    "job raises one."
                ),
            )
        touched = set(changes) | ({raised.id} if raised else set())
        chosen = min(pool, key=lambda h: self._rank(context, h, touched))
        signal = "quiet"
        if chosen.id in changes:
            old = register[chosen.id]
            new_c = len(chosen.contradicts) > len(old.contradicts)
            signal = "contradicted" if new_c else "supported"
        elif raised is not None and chosen.id == raised.id:
            signal = "supported"
        protect = chosen.stakes == "high" and len(set(chosen.contradicted_on)) < 2
        ctype = choose_type(chosen.state, signal, prev_type, context.recent_types, protect=protect)
        return NightlyReflection(
            raise_hypothesis=new,
            hypothesis=chosen.id,
            carry_type=ctype,  # one of the nine
            carry_text=carry_text(chosen, ctype),
            bias="\n".join(bias_lines(chosen, ctype)),
        )

    @staticmethod
    def _rank(
        context: NightlyContext, h: Hypothesis, touched: set[str]
    ) -> tuple[bool, bool, bool, int, str, str]:
        streak: list[str] = []  # the latest nights in a row that carried ``h``
        for o in reversed(context.outcomes):
            if o.hypothesis != h.id:
                break
            streak.append(o.outcome)
        tired = streak[:3] == ["held"] * 3 or streak[:2] == ["untested"] * 2
        return (
            h.settled,
            tired,
            h.id not in touched,
            STATE_RANK.get(h.state, 9),
            h.created.isoformat(),
            h.id,
        )

    def weekly(self, *, context: WeeklyContext, feedback: str | None = None) -> WeeklyReflection:
        drafts = []
        for h in context.candidates:
            days = h.recorded_support or h.supported_on
            first, last = min(days), max(days)
            text = instruction(h) if h.do else _sentence(sanitise(h.text, 280))
            drafts.append(
                ProposalDraft(
                    hypothesis=h.id,
                    section="habits",
                    text=text[:290],
                    rationale=(
                        f"Supported on {len(set(days))} distinct days from "
                        f"{first} to {last}, contradicted on {len(set(h.contradicted_on))} "
                        f"(hypothesis {h.id}, state {h.state})."
                    ),
                )
            )
        return WeeklyReflection(proposals=drafts)
