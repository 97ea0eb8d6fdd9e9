"""The ``rules`` reflector: deterministic, offline, the default.  Documented behaviour:

Nightly
  1. Apply the day's tagged friction to the register with the shared state rules
     (``jobs/hypotheses.py``); the rules reflector reads no untagged event.
  2. Choose the hypothesis: one contradicted today, else one supported today, else the
     one carried yesterday (if still active), else the first active one in the order
     live, emerging, split, weakening.  No active hypothesis: quote the day's first
     untagged friction as a watchpoint (a question if yesterday was a watchpoint); no
     friction either: a quiet day — nothing is written, nothing invented.
  3. Choose the type from a preference list for (state, today's signal) — the first
     not used in the last three carries, else the first that differs from yesterday's,
     else the next type after yesterday's in the fixed order of the nine.
  4. Bias and carry text come from fixed templates per type.

Weekly
  Every candidate (supported on ≥ 5 distinct days within 14, never contradicted) is
  proposed as a habit: the hypothesis text, added to ``habits``.
"""

from __future__ import annotations

from evolving_agent.jobs.hypotheses import Hypothesis, apply_day, day_links
from evolving_agent.memory.today import CARRY_TYPES
from evolving_agent.reflectors.base import (
    NightlyContext,
    NightlyReflection,
    ProposalDraft,
    Reflector,
    WeeklyContext,
    WeeklyReflection,
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
    ("weakening", "contradicted"): ("release", "refusal", "question"),
    ("weakening", "quiet"): ("question", "watchpoint", "release"),
    ("split", "supported"): ("watchpoint", "question", "experiment"),
    ("split", "contradicted"): ("question", "watchpoint", "release"),
    ("split", "quiet"): ("question", "experiment", "watchpoint"),
}

STATE_ORDER = ("live", "emerging", "split", "weakening")

# type -> (bias template, carry template); {h} is the hypothesis text.
TEMPLATES: dict[str, tuple[str, str]] = {
    "vow": (
        "Keep this all day: {h}\nWhen about to answer against it, stop and rewrite the answer.",
        "Keep it tomorrow: {h}",
    ),
    "experiment": (
        "Try this today: {h}\nWhen about to answer the usual way, stop and test it once instead.",
        "Try it tomorrow: {h}",
    ),
    "watchpoint": (
        "Watch for the moment this matters: {h}\nWhen it comes, stop and log what happened.",
        "Watch for it tomorrow: {h}",
    ),
    "refusal": (
        "Refuse the pull against this: {h}\nWhen about to give in to it, stop and say no plainly.",
        "Refuse it tomorrow: {h}",
    ),
    "rule-for-tomorrow": (
        "Rule for today: {h}\nBefore sending each answer, check it against this rule and fix it.",
        "Enforce it tomorrow: {h}",
    ),
    "question": (
        "Ask the user once today whether this holds: {h}\nLog the answer as friction on it.",
        "Ask the user tomorrow: {h}",
    ),
    "release": (
        "Stop acting on this today: {h}\nWhen about to rely on it, do what was asked instead.",
        "Stop doing it tomorrow: {h}",
    ),
    "repair": (
        "Make one slip right today: {h}\nWhen the chance comes, fix the answer that broke it.",
        "Repair it tomorrow: {h}",
    ),
    "practice": (
        "Rehearse this on purpose today: {h}\nWhen about to answer, apply it deliberately.",
        "Practise it tomorrow: {h}",
    ),
}


def choose_type(state: str, signal: str, previous: str | None, recent: list[str]) -> str:
    prefs = PREFERENCES.get((state, signal), ("watchpoint", "question", "experiment"))
    for t in prefs:
        if t not in recent[-3:] and t != previous:
            return t
    for t in prefs:
        if t != previous:
            return t
    i = CARRY_TYPES.index(previous) if previous in CARRY_TYPES else -1
    return CARRY_TYPES[(i + 1) % len(CARRY_TYPES)]


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split()).rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class RulesReflector(Reflector):
    name = "rules"

    def nightly(self, *, context: NightlyContext, feedback: str | None = None) -> NightlyReflection:
        register = context.register
        friction = context.friction
        changes = apply_day(register, context.day, day_links(friction, []))
        current = {hid: changes[hid][0] if hid in changes else h for hid, h in register.items()}
        active = [h for h in current.values() if h.active]
        prev = context.previous_carry
        prev_type = prev.type if prev else None
        if not active:
            untagged = [r for r in friction if not r.supports and not r.contradicts]
            if not untagged:
                return NightlyReflection()  # a quiet day: invent nothing
            ctype = "question" if prev_type == "watchpoint" else "watchpoint"
            quote = _clip(untagged[0].text, 160)
            return self._reflection(None, ctype, f"a repeat of: “{quote}”")
        chosen = self._choose(context, active, changes)
        signal = "quiet"
        if chosen.id in changes:
            old = register[chosen.id]
            new_c = len(chosen.contradicts) > len(old.contradicts)
            signal = "contradicted" if new_c else "supported"
        ctype = choose_type(chosen.state, signal, prev_type, context.recent_types)
        return self._reflection(chosen.id, ctype, _clip(chosen.text))

    @staticmethod
    def _choose(
        context: NightlyContext,
        active: list[Hypothesis],
        changes: dict[str, tuple[Hypothesis, str]],
    ) -> Hypothesis:
        register = context.register
        touched = [h for h in active if h.id in changes]
        contradicted = [h for h in touched if len(h.contradicts) > len(register[h.id].contradicts)]
        if contradicted:
            return contradicted[0]
        if touched:
            return touched[0]
        prev = context.previous_carry
        for h in active:
            if prev is not None and h.id == prev.hypothesis:
                return h
        return sorted(active, key=lambda h: STATE_ORDER.index(h.state))[0]

    @staticmethod
    def _reflection(hid: str | None, ctype: str, text: str) -> NightlyReflection:
        bias, carry = TEMPLATES[ctype]
        return NightlyReflection.model_validate(
            {
                "hypothesis": hid,
                "carry_type": ctype,
                "carry_text": carry.format(h=text),
                "bias": bias.format(h=text),
            }
        )

    def weekly(self, *, context: WeeklyContext, feedback: str | None = None) -> WeeklyReflection:
        drafts = []
        for h in context.candidates:
            first, last = min(h.supported_on), max(h.supported_on)
            drafts.append(
                ProposalDraft(
                    hypothesis=h.id,
                    section="habits",
                    text=_clip(h.text[:1].upper() + h.text[1:], 290),
                    rationale=(
                        f"Supported on distinct days from {first} to {last}, never contradicted "
                        f"(hypothesis {h.id}, state {h.state})."
                    ),
                )
            )
        return WeeklyReflection(proposals=drafts)
