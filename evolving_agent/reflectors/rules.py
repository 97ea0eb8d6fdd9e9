"""The ``rules`` reflector: deterministic, offline, the default.  Documented behaviour
(docs/cycle.md states the same rules for users):

Nightly
  1. Apply the day's tagged friction to the register with the shared state rules
     (``memory/ops/hypotheses.py``).
  2. Read untagged friction: an untagged event *similar* (``memory/base/similarity.py``:
     normalised character n-grams, any language) to a hypothesis the nightly job
     raised, or to the claim of any other hypothesis, counts as its support (a
     ``reading``).  So a pattern recurring after it was raised supports it instead of
     raising a duplicate.
  3. Raise: an untagged event of the day still unexplained that is similar to untagged
     friction of another day in the last 7 raises one ``emerging`` hypothesis (origin
     ``nightly``) citing those events.  Its claim names the pattern by quoting its first
     occurrence (“A pattern that recurs: …”); its trigger is the moment it starts again;
     it has no counter-move, so no friction word ever becomes an instruction.
  4. Choose the hypothesis and its type with ``memory/ops/carry.py``: the type table (types
     that fit the hypothesis's own story; never yesterday's type) and the fairness rule.
     None carriable: watch for the day's first untagged friction (quoted in line 2 only);
     no friction either: a quiet day — nothing is written, nothing invented.
  5. Words.  Line 1 is the instruction: the type's framing + trigger + counter-move
     ("Try it once today and notice what happens. When about to list alternatives: give
     one recommendation.").  Without a counter-move it names the moment and says to stop
     and choose what the user asked for instead.  ``release`` says to stop leaning on
     the claim.  Line 2 grounds it in the latest friction on the hypothesis, quoted as
     written (commands intact).  Line 3, only for high stakes: what is at stake.

Weekly
  Every candidate (the promotion floor, ``memory/hypotheses.meets_floor``) is proposed
  as a habit: the counter-move (with its trigger) when it has one, else the claim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, timedelta

from evolving_agent.memory.base.instruction import reads_as_instruction, withheld_note
from evolving_agent.memory.base.opposites import opposite_complaints
from evolving_agent.memory.base.similarity import similar
from evolving_agent.memory.ops.carry import (
    CarryNote,
    Choice,
    Story,
    choose,
    fitting_types,
    related,
)
from evolving_agent.memory.ops.hypotheses import (
    Hypothesis,
    apply_day,
    day_key,
    day_links,
    hypothesis_id,
    quote,
    sanitise,
)
from evolving_agent.reflectors.answer_check import check_meaning
from evolving_agent.reflectors.answers import (
    NewHypothesis,
    NightlyReflection,
    ProposalDraft,
    Reading,
    WeeklyReflection,
)
from evolving_agent.reflectors.base import Reflector
from evolving_agent.reflectors.context import NightlyContext, WeeklyContext
from evolving_agent.reflectors.framing import Words, words, words_for

# How each type frames the instruction (line 1) and names itself in the carry, in
# English; a morning is framed in its owner's language (``reflectors/framing.py``, the
# phrase table ``data/words/framing.yaml``, English as fallback).
FRAMES: dict[str, tuple[str, str]] = {
    "vow": ("Keep this all day", "Vow for today"),
    "experiment": ("Try it once today and notice what happens", "Experiment for today"),
    "watchpoint": ("Watch for the moment", "Watchpoint for today"),
    "refusal": ("Refuse the old pull against this", "Refusal for today"),
    "rule-for-tomorrow": ("Rule for today, checked before each answer", "Rule for today"),
    "question": ("Ask the user once whether this is what they want", "Question for today"),
    "repair": ("Make the last slip right at the first chance", "Repair for today"),
    "practice": ("Rehearse it on purpose", "Practice for today"),
    "release": ("Stop leaning on this today", "Release for today"),
}
# A high-stakes rule is framed firmly: no "try it once", no "ask whether".
FIRM_FRAMES: dict[str, str] = {
    "vow": "Keep this all day, without exception",
    "rule-for-tomorrow": "Rule for today, checked before every command",
    "watchpoint": "Watch for the moment; this rule holds every time",
}
RAISED_TRIGGER = "the pattern quoted below starts again"
STOP_AND_CHOOSE = "stop, and choose what the user asked for instead"


def similar_text(a: str, b: str) -> bool:
    """Similarity for raising and reading (see ``memory/base/similarity.py``)."""
    return similar(a, b)


def _sentence(text: str, w: Words | None = None, key: str | None = None) -> str:
    """One sentence in ``w``'s language; ``key``: the template it was made from (one that
    opens with the owner's words is not capitalised)."""
    w = w or words(None)
    return w.sentence(text, capital=key is None or w.leads(key))


def pattern_words(h: Hypothesis, limit: int = 90) -> str:
    """The moment a raised pattern names: the first occurrence its claim quotes."""
    m = re.search(r"[“\"](.*)[”\"]", h.text)
    return clip(quote(m.group(1) if m else h.text, 400), limit)


def hypothesis_words(h: Hypothesis) -> Words:
    """The framing of a morning about ``h``: the language of its own words (for a raised
    pattern, of the friction it names)."""
    if h.origin == "nightly" and not h.do:
        return words_for(pattern_words(h, 400))
    return words_for(h.text, h.when if h.when != RAISED_TRIGGER else None, h.do)


def instruction(h: Hypothesis, w: Words | None = None) -> str:
    """Trigger + counter-move, as one executable sentence (never the bare claim as an
    order: a claim phrased as a failure would become an order to fail).  The human's
    own words are quoted when they would trip a meaning check ("at least once").

    A raised pattern without a counter-move is only watched for, by name: nothing in
    the friction says what to do instead (for an omission the fix is to add what was
    missing, for a complaint something else), so the session is asked to propose one."""
    w = w or hypothesis_words(h)
    when, do = h.shape()
    if h.origin == "nightly" and not do:
        trigger = w["raised_trigger"] if when in (None, RAISED_TRIGGER) else when
        return _sentence(
            w.fmt("raised", when=trigger, quote=f"“{pattern_words(h)}”",
                  command=f"evolving-agent hypothesis propose {h.id} --do"),
            w,
            "raised",
        )
    stop = w["stop_choose"]
    if when and do:
        return _guarded(w.fmt("when_do", when=when, do=do),
                        w.fmt("when_do", when=f"“{when}”", do=f"“{do}”"), w, "when_do")
    if do:
        return _guarded(w.fmt("when_up", do=do), w.fmt("when_up", do=f"“{do}”"), w)
    if when:
        return _guarded(w.fmt("when_do", when=when, do=stop),
                        w.fmt("when_do", when=f"“{when}”", do=stop), w, "when_do")
    claim = quote(h.text, 120)
    if is_pattern(h):
        return _sentence(w.fmt("pattern_claim", quote=f"“{claim}”", stop=stop), w)
    return _sentence(w.fmt("check_claim", quote=f"“{claim}”"), w)


_SELF = re.compile(
    r"^\W*(?:i|i['’]m|i['’]ve|my|me|私|わたし|僕|ぼく|俺|自分)(?:\b|[はがのも])", re.I
)


def is_pattern(h: Hypothesis) -> bool:
    """A claim about the assistant's own recurring move ("I add flexibility nobody
    asked for", a raised pattern) — stop it when it starts — rather than a belief about
    the user or the work, which is checked when it comes up."""
    return h.origin == "nightly" or bool(_SELF.match(h.text))


def _guarded(plain: str, quoted: str, w: Words | None = None, key: str | None = None) -> str:
    try:
        check_meaning(plain)
    except ValueError:
        return _sentence(quoted, w, key)
    return _sentence(plain, w, key)


def frame(h: Hypothesis, ctype: str, w: Words | None = None) -> str:
    w = w or hypothesis_words(h)
    firm = w.firm(ctype) if h.stakes == "high" else None
    return firm or w.frame(ctype)


MAX_FRESH_DAYS = 7  # a grounding older than this says how old it is


def dated(day: date | None, morning: date | None, w: Words | None = None) -> str:
    """A grounding's date, with its age when it is more than a week old on the morning
    it is read ("2027-03-04 (12 days ago)", in the morning's language): an old quote is
    never served as fresh."""
    w = w or words(None)
    if day is None:
        return w["earlier_day"]
    if morning is not None and (morning - day).days > MAX_FRESH_DAYS:
        return w.fmt("ago", date=day, days=(morning - day).days)
    return str(day)


def quoted(
    text: str | None,
    limit: int | None = None,
    evidence: Sequence[str] | None = None,
    day: date | None = None,
) -> str:
    """A friction quote for the bias, or the note that withholds it: friction that
    reads as an instruction to the assistant is never grounding (the note names the
    latest event behind it, ``evidence[-1]``, and its day, for ``evidence show``)."""
    if text and reads_as_instruction(text):
        return withheld_note(evidence[-1] if evidence else None, day)
    return f"“{clip(text or '', limit) if limit else text or ''}”"


def grounding(
    h: Hypothesis, register: dict[str, Hypothesis], morning: date | None = None,
    w: Words | None = None,
) -> str:
    """Line 2: the latest friction on the hypothesis, quoted as written, dated (with its
    age past a week).  When its evidence divides both sides are quoted, so the bias
    shows the swing instead of following it — the other side is always evidence
    *against* this belief: a contradiction of it (a split), or the latest support of a
    :func:`memory.carry.related` belief it swings against (its opposite); never another
    belief's evidence merely dated nearby.  A high-stakes rule is grounded in the
    latest case for it."""
    w = w or hypothesis_words(h)
    partner = next(
        (register[t] for t in h.tension if t in register and related(h, register[t])), None
    )
    other = (
        (partner.last_for, partner.last_for_day) if partner and partner.last_for else None
    ) or ((h.last_against, h.last_against_day) if h.state == "split" and h.last_against else None)
    if other and h.last_for and h.stakes == "low":
        other_ids = partner.supports if partner and partner.last_for else h.contradicts
        return w.fmt(
            "grounding", date=dated(h.last_for_day, morning, w),
            quote=quoted(h.last_for, 100, h.supports, h.last_for_day),
        ) + w.fmt(
            "divides", date=dated(other[1], morning, w),
            quote=quoted(other[0], 100, other_ids, other[1]),
        )
    if h.state == "weakening" and h.last_against:
        return w.fmt(
            "grounding", date=dated(h.last_against_day, morning, w),
            quote=quoted(h.last_against, None, h.contradicts, h.last_against_day),
        )
    if h.state != "weakening" and h.last_for:
        latest = w["latest"] if h.origin == "nightly" else ""
        return w.fmt(
            "grounding", date=dated(h.last_for_day, morning, w),
            quote=latest + quoted(h.last_for, None, h.supports, h.last_for_day),
        )
    if h.last_friction:
        return w.fmt(
            "grounding", date=dated(h.last_friction_day, morning, w),
            quote=quoted(h.last_friction, None, h.supports + h.contradicts,
                         h.last_friction_day),
        )
    return w["no_friction"]


def clip(text: str, limit: int = 100) -> str:
    """At most ``limit`` characters, cut at a word's end where the script has spaces."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def bias_lines(
    h: Hypothesis,
    ctype: str,
    register: dict[str, Hypothesis] | None = None,
    morning: date | None = None,
) -> list[str]:
    w = hypothesis_words(h)
    if ctype == "release":
        claim = quote(h.text, 100)
        days = len(set(h.contradicted_on))
        first = w.fmt("release_line", frame=w.frame("release"), quote=f"“{claim}”", days=days)
    else:
        first = w.then(frame(h, ctype, w), instruction(h, w))
    second = grounding(h, register or {}, morning, w)
    lines = [first, second]
    if h.stakes == "high":
        narrowing = w["narrowing"] if h.contradicted_on else ""
        lines.append(w.fmt("at_stake", quote=f"“{quote(h.text, 90)}”") + narrowing)
    return lines


def carry_text(h: Hypothesis, ctype: str) -> str:
    w = hypothesis_words(h)
    label = w.label(ctype)
    if ctype == "release":
        return w.fmt("release_carry", label=label, quote=f"“{quote(h.text, 120)}”")
    return w.then(label, instruction(h, w))


def _pattern_texts(h: Hypothesis) -> list[str]:
    """The words an untagged event is compared with to count as this hypothesis's support."""
    texts = [h.text]
    if h.origin == "nightly" and h.last_for:
        texts.append(h.last_for)  # its latest support: a contradiction never widens it
    return texts


def read_untagged(context: NightlyContext, pool: list[Hypothesis]) -> list[Reading]:
    """Untagged events of the day similar to an active hypothesis: its support."""
    out = []
    for ev in context.untagged:
        for h in pool:
            if any(similar_text(ev.text, t) for t in _pattern_texts(h)):
                out.append(Reading(event=ev.id, hypothesis=h.id, relation="supports"))
                break
    return out


def raise_from(
    context: NightlyContext,
    known: set[str],
    explained: set[str] | None = None,
    pendulum: list[Reading] | None = None,
    patterns: list[Hypothesis] | None = None,
) -> NewHypothesis | None:
    """The first unexplained untagged event of the day that recurs (similar on another
    day ≤ 7).  Another day is another :func:`day_key` (UTC date of the instant), not
    another day file: a note written a minute earlier under another ``TZ`` is not a
    recurrence.

    The pendulum: an event that complains the opposite way from a raised pattern
    (``memory/base/opposites.py``, any language: "too long" one day, "not enough
    information" the next) is not a new pattern but the other side of that one (of
    every one it opposes: the same complaint may be raised once per language): its
    events are read as *contradicting* it (appended to ``pendulum``), so the pattern
    splits instead of the bias swinging.  Days that merely alternate relate nothing."""
    recent = context.recent_untagged
    for ev in context.untagged:
        if explained and ev.id in explained:
            continue
        key = day_key(ev)
        matches = [n for n in recent if n.counts_on != key and similar_text(n.text, ev.text)]
        against = [
            h
            for h in patterns or []
            if h.stakes == "low" and opposite_complaints(ev.text, h.last_for or h.text)
        ]
        if against and pendulum is not None:
            # the other side of every pattern it opposes (the same complaint may have
            # been raised once per language)
            for h in against:
                for eid in [n.id for n in matches] + [ev.id]:
                    pendulum.append(Reading(event=eid, hypothesis=h.id, relation="contradicts"))
            continue
        if not matches:
            continue
        first = min(matches, key=lambda n: (n.day, n.id))
        text = f"A pattern that recurs: “{quote(first.text, 160)}”"
        if hypothesis_id(text) in known:
            continue
        return NewHypothesis(
            text=text,
            when=RAISED_TRIGGER,
            cites=[n.id for n in sorted(matches, key=lambda n: (n.day, n.id))] + [ev.id],
        )
    return None


def note_keys(context: NightlyContext) -> dict[str, date]:
    """The day each recent untagged note counts on (a reading may cite one)."""
    return {n.id: n.counts_on for n in context.recent_untagged}


def history(context: NightlyContext) -> list[CarryNote]:
    """The carries of past mornings, oldest first (from Today's nightly state)."""
    notes = [CarryNote(c.day, c.hypothesis, c.type, c.seen) for c in context.carries]
    prev = context.previous_carry
    if prev is not None:
        morning = prev.date or context.day
        if not any(n.day == morning for n in notes):
            notes.append(CarryNote(morning, prev.hypothesis, prev.type))
    return notes


def addresses_assistant(h: Hypothesis) -> bool:
    """A pattern raised from (or a session's hypothesis worded as) friction that reads as
    an instruction to the assistant: listed for the human, never carried."""
    if h.origin == "human":
        return False
    return any(reads_as_instruction(t) for t in (h.text, h.when or "", h.do or "") if t)


def stories(
    current: dict[str, Hypothesis], changes: dict[str, tuple[Hypothesis, str]],
    register: dict[str, Hypothesis],
) -> list[Story]:
    out = []
    for hid, h in current.items():
        if not h.ready or addresses_assistant(h):
            continue
        sup = con = False
        if hid in changes and hid in register:
            old = register[hid]
            sup = len(h.supports) > len(old.supports)
            con = len(h.contradicts) > len(old.contradicts)
        out.append(Story(h, supported_today=sup, contradicted_today=con))
    return out


def pick(
    pool: list[Story], context: NightlyContext, register: dict[str, Hypothesis] | None = None
) -> Choice | None:
    """Fair choice first; if fairness leaves nothing, any fitting type but yesterday's.
    ``register``: the day's register, retired ones included (a belief released and
    retired since still hands its place to a related one)."""
    morning = context.day + timedelta(days=1)
    past = history(context)
    prev = context.previous_carry
    yesterday = CarryNote(prev.date or context.day, prev.hypothesis, prev.type) if prev else None
    released = [h for h in (register or {}).values() if h.released] if register else None
    got = choose(pool, past, morning, yesterday, released)
    if got is not None:
        return got
    y_type = prev.type if prev else None
    y_hyp = next((s.h for s in pool if prev and s.h.id == prev.hypothesis), None)
    # Still no swing where it can be helped: one related to yesterday's comes last
    # (unless yesterday released it); if only such ones fit, one is carried all the same.
    order = sorted(
        pool,
        key=lambda s: (
            y_hyp is not None and y_type != "release" and s.h.id != y_hyp.id
            and related(s.h, y_hyp),
            s.h.created,
            s.h.id,
        ),
    )
    for s in order:
        for t in fitting_types(s):
            if t != y_type:
                return Choice(s.h, t)
    return None


class RulesReflector(Reflector):
    name = "rules"

    def nightly(self, *, context: NightlyContext, feedback: str | None = None) -> NightlyReflection:
        register = context.register
        friction = context.friction
        tagged = apply_day(register, context.day, day_links(friction, []), friction)
        after = {hid: tagged[hid][0] if hid in tagged else h for hid, h in register.items()}
        readings = read_untagged(context, [h for h in after.values() if h.carriable])
        links = day_links(friction, [(r.event, r.hypothesis, r.relation) for r in readings])
        changes = apply_day(register, context.day, links, friction)
        current = {hid: changes[hid][0] if hid in changes else h for hid, h in register.items()}
        swing: list[Reading] = []
        patterns = [h for h in current.values() if h.carriable and h.origin == "nightly"]
        new = raise_from(context, set(register), {r.event for r in readings}, swing, patterns)
        if swing:
            readings = readings + swing
            links = day_links(friction, [(r.event, r.hypothesis, r.relation) for r in readings])
            changes = apply_day(register, context.day, links, friction, note_keys(context))
            current = {
                hid: changes[hid][0] if hid in changes else h for hid, h in register.items()
            }
        raised = context.raised(new) if new else None
        pool = stories(current, changes, register)
        if raised is not None and not addresses_assistant(raised):
            pool.append(Story(raised, supported_today=True))
        choice = pick(pool, context, current) if pool else None
        if choice is None:
            # The day's friction no hypothesis explains (a reading of it as evidence —
            # the other side of a pendulum — is an explanation: quoting it alone would
            # follow the swing), and never friction that reads as an instruction.
            explained = {r.event for r in readings} | set(new.cites if new else [])
            untagged = [
                r
                for r in context.untagged
                if r.id not in explained and not reads_as_instruction(r.text)
            ]
            if not untagged:
                return NightlyReflection(readings=readings, raise_hypothesis=new)
            prev = context.previous_carry
            ctype = "question" if prev and prev.type == "watchpoint" else "watchpoint"
            w = words_for(untagged[0].text)
            quoted = f"“{quote(untagged[0].text, 110)}”"
            earlier = [
                n
                for n in context.recent_untagged
                if n.counts_on != day_key(untagged[0]) and not reads_as_instruction(n.text)
            ]
            if earlier:  # the last unexplained moment before: the swing shows, not followed
                last = max(earlier, key=lambda n: (n.day, n.id))
                quoted += w.fmt("and_on", date=last.day, quote=f"“{quote(last.text, 80)}”")
            return NightlyReflection(
                readings=readings,
                raise_hypothesis=new,
                carry_type=ctype,  # one of the nine
                carry_text=w.fmt("moment_carry", label=w.label(ctype)),
                bias=(
                    w.then(w.frame(ctype), w.fmt("moment", stop=w["stop_choose"])) + "\n"
                    + w.fmt("moment_grounding", date=context.day, quote=quoted)
                ),
            )
        chosen, ctype = choice.hypothesis, choice.type
        return NightlyReflection(
            readings=readings,
            raise_hypothesis=new,
            hypothesis=chosen.id,
            carry_type=ctype,  # one of the nine
            carry_text=carry_text(chosen, ctype),
            bias="\n".join(bias_lines(chosen, ctype, current, context.day + timedelta(days=1))),
        )


    def weekly(self, *, context: WeeklyContext, feedback: str | None = None) -> WeeklyReflection:
        drafts = []
        for h in context.candidates:
            days = h.recorded_support or h.supported_on
            first, last = min(days), max(days)
            text = instruction(h) if h.do else _sentence(sanitise(h.text, 280), hypothesis_words(h))
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
