"""What a valid answer is: every meaning check of a reflector's answer, in one place.

A reflector's answer parses into an answer model (:mod:`~evolving_agent.reflectors.answers`:
its fields and their shape); what it *means* is judged here, in the context it answers
(:mod:`~evolving_agent.reflectors.context`).  A check raises :class:`ReflectorError`
naming the first thing that fails; the job asks the reflector again with that reason,
then falls back to the rules reflector (:mod:`~evolving_agent.reflectors.fallback`).
The nightly job calls :func:`check_nightly` (its
first step: :func:`check_words`, what each line may say), the weekly job
:func:`check_weekly`.  It lives with the reflectors, not in
``jobs/``, because the rules reflector words its own lines by the same rules (and
``reflectors`` never imports ``jobs``).
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

from evolving_agent.memory.base.instruction import reads_as_instruction
from evolving_agent.memory.ops.carry import Story, fitting_types
from evolving_agent.memory.ops.hypotheses import (
    Hypothesis,
    apply_day,
    day_key,
    day_links,
    duplicate_of,
    hypothesis_id,
)
from evolving_agent.reflectors.answers import NightlyReflection, WeeklyReflection
from evolving_agent.reflectors.base import ReflectorError
from evolving_agent.reflectors.context import NightlyContext, UntaggedNote
from evolving_agent.reflectors.framing import trigger_forms

# -- what a line may say -------------------------------------------------------------------

# A self-description in any person: "I am…", "You tend to…", "The assistant is…",
# "It is too…".  A bias is an instruction for the day, never a portrait.
_SELF_DESCRIPTION = re.compile(
    r"^\W*(?:"
    r"(?:i|we)\s+(?:am|are|was|were|feel|tend|have\s+become|always|never|usually|often|seem"
    r"|have\s+been|had\s+been|can\s+be|could\s+be)"
    r"|i['’](?:m|ve)|we['’](?:re|ve)|you['’](?:re|ve)"
    r"|you\s+(?:are|were|tend|have\s+become|have\s+been|had\s+been|always|never|usually"
    r"|often|seem)"
    r"|(?:(?:the|this|our|my)\s+)?(?:assistant|agent|model|ai|claude)\s+"
    r"(?:is|was|tends|has\s+become|has\s+been|always|never|usually|often|seems|feels|can\s+be)"
    r"|(?:it|he|she|they)\s+(?:is|are|tends|tend|seems|seem)\s+(?:a|an|too|someone|very|quite)"
    r")\b",
    re.I,
)
# A portrait of a named third person: "Kai tends to be cautious", "Mira is too verbose".
_NAMED_PORTRAIT = re.compile(
    r"^\W*[A-Z][\w'’-]{1,30}\s+(?:tends|seems|feels|always|never|usually|often|has\s+become"
    r"|has\s+been|can\s+be|is\s+(?:too|very|quite|rather|always|often|usually|never|a|an"
    r"|someone|cautious|careful|verbose|slow|hasty|prone))\b"
)
# Japanese: "私は…傾向がある", "あなたは…だ", "アシスタントは…" — a sentence about who
# someone is, not what to do.
_JA_PORTRAIT = re.compile(
    r"^\W*(?:私|わたし|僕|ぼく|俺|自分|我々|私たち|あなた|君|アシスタント|エージェント|モデル|AI)"
    r"(?:は|が|って)"
    r"|(?:傾向が(?:ある|あります)|しがち|がちだ|がちです|な性格|なタイプ|という性質)"
)
# Japanese quotas and counts: "最低3つ", "少なくとも", "3つ記録", "毎回…記録".
_JA_QUOTA = re.compile(
    r"(?:最低|少なくとも|最少|ノルマ|以上の(?:反省|自己批判|失敗|ミス))"
    r"|[0-9０-９一二三四五六七八九十]+\s*(?:つ|個|件|回|点)(?:以上)?(?:の)?"
    r"(?:反省|自己批判|失敗|ミス|摩擦|批判|振り返り|記録|書|挙げ|メモ)"
    r"|(?:すべて|全て|毎回|毎日|逐一|一つ残らず)の?(?:失敗|ミス|反省|摩擦)(?:を|も)?"
    r"(?:記録|書|メモ|挙げ)"
)
# A quota or a count of self-criticism: the killed design (docs/left-out.md), also as
# "3 or more", "3+", "five new slips", or friction logged twice / after every answer.
_COUNT = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|several|multiple)"
_FAULTS = r"(?:friction|self[- ]critic\w*|criticisms?|mistakes|negations|complaints|failures|slips)"
_QUOTA = re.compile(
    r"\b(?:at\s+least|no\s+fewer\s+than|no\s+less\s+than|a\s+minimum\s+of|quota|target\s+of)\b"
    r"|\b(?:count|number\s+of|tally)\b[^.]{0,40}?"
    r"\b(?:friction|self[- ]critic\w*|criticism\w*|mistakes?|negations?|failures?|slips?)"
    r"|\b" + _COUNT + r"\s*(?:\+|or\s+more|and\s+up|plus)?\s+"
    r"(?:(?:more|new|honest|fresh|separate|distinct|of\s+(?:your|my|the|our))\s+)?"
    + _FAULTS
    + r"|\b(?:log|record|note|write\s+down|report|list)\b[^.]{0,30}?\b"
    r"(?:friction|self[- ]critic\w*|mistakes?|slips?)\b[^.]{0,40}?"
    r"\b(?:twice|thrice|\d+\s+times|after\s+every|after\s+each|every\s+(?:answer|reply|hour|turn)"
    r"|per\s+(?:answer|reply|hour|turn|session|day))\b"
    # "Write five reflections tonight", "Note down every slip, however small".
    r"|\b(?:write|log|record|note|jot|list|collect|produce|give)\b(?:\s+down)?[^.]{0,20}?\b"
    r"(?:" + _COUNT + r"|every|each|all)\b[^.]{0,20}?\b"
    r"(?:reflections?|self[- ]critic\w*|criticisms?|mistakes?|slips?|failures?|frictions?"
    r"|errors?|faults?|lessons?)\b",
    re.I,
)
_QUOTED = re.compile(r"“[^”]*”")
_JA_QUOTED = re.compile(r"「[^」]*」")
# A number used as a grade: "confidence: 0.8", "score 4", "4/5", "7 out of 10".
_SCORE = re.compile(
    r"\b(score|confidence|certainty|rating)\s*(of|:|=|is)?\s*\d"
    r"|\b\d+(\.\d+)?\s*(/|out\s+of)\s*(5|10|100)\b",
    re.I,
)


def check_no_score(text: str) -> str:
    if _SCORE.search(text):
        raise ValueError("no numeric scores or confidence figures, by design")
    return text


def check_meaning(line: str) -> str:
    """Refuse a self-description (any person), a quota / count of self-criticism, a score.

    A quotation in curly quotes (“…”, how grounding quotes the day's friction) is the
    user's or the session's words, not the instruction, and is not judged.
    """
    bare = _QUOTED.sub("“…”", line)
    bare = _JA_QUOTED.sub("「…」", bare)
    if _SELF_DESCRIPTION.match(bare) or _NAMED_PORTRAIT.match(bare) or _JA_PORTRAIT.search(bare):
        raise ValueError(
            "the bias is an executable instruction for the day, not a self-description"
        )
    if _QUOTA.search(bare) or _JA_QUOTA.search(bare):
        raise ValueError("no quota and no count of friction or self-criticism, by design")
    check_no_score(bare)
    return line


def check_words(ref: NightlyReflection) -> None:
    """What every line a nightly answer writes may say (:func:`check_meaning`), in the
    order of the answer's fields: the raised hypothesis, the carry text, the bias."""
    new = ref.raise_hypothesis
    lines: list[tuple[str, str | None]] = []
    if new is not None:
        lines += [(f"raise_hypothesis.{k}", getattr(new, k)) for k in ("text", "when", "do")]
    lines.append(("carry_text", ref.carry_text))
    lines += [("bias", ln) for ln in (ref.bias or "").splitlines()]
    for where, text in lines:
        if text is not None:
            try:
                check_meaning(text)
            except ValueError as exc:
                raise ReflectorError(f"{where}: {exc}") from None


def check_weekly(ref: WeeklyReflection, candidates: set[str]) -> None:
    """A weekly answer: one proposal at most per candidate, none for any other
    hypothesis, and no score in a proposal's words."""
    seen: set[str] = set()
    for i, d in enumerate(ref.proposals):
        for name in ("text", "rationale"):
            try:
                check_no_score(getattr(d, name))
            except ValueError as exc:
                raise ReflectorError(f"proposals.{i}.{name}: {exc}") from None
        if d.hypothesis not in candidates:
            raise ReflectorError(f"proposal for {d.hypothesis!r}, which is not a candidate")
        if d.hypothesis in seen:
            raise ReflectorError(f"two proposals for {d.hypothesis!r}")
        seen.add(d.hypothesis)


# -- a nightly answer in its context --------------------------------------------------------


def check_nightly(ref: NightlyReflection, ctx: NightlyContext, day: date) -> None:
    """The meaning checks of a nightly answer: raise ReflectorError naming the first
    that fails (the reflector is asked again, then the rules reflector answers)."""
    check_words(ref)
    register = ctx.register
    untagged = {r.id for r in ctx.untagged}
    recent_ids = {n.id: n for n in ctx.recent_untagged}
    note_keys = {n.id: n.counts_on for n in ctx.recent_untagged}
    prev = ctx.previous_carry
    given = (ref.bias is not None, ref.carry_type is not None, ref.carry_text is not None)
    if any(given) and not all(given):
        raise ReflectorError("bias, carry_type and carry_text come together (or none)")
    readings = [(x.event, x.hypothesis, x.relation) for x in ref.readings]
    after = apply_day(register, day, day_links(ctx.friction, readings), ctx.friction, note_keys)
    carriable = [
        after[hid][0] if hid in after else h
        for hid, h in register.items()
        if (after[hid][0] if hid in after else h).carriable
    ]
    # An empty answer (a quiet day) is refused while there is something to say: a
    # hypothesis with a type other than yesterday's, or friction no reading or raise
    # explains (friction that reads as an instruction is never something to say).
    explained = {r.event for r in ref.readings}
    explained |= set(ref.raise_hypothesis.cites) if ref.raise_hypothesis else set()
    unexplained = [
        r for r in ctx.untagged if r.id not in explained and not reads_as_instruction(r.text)
    ]
    y_type = prev.type if prev else None
    sayable = any(
        t != y_type for h in carriable if h.ready for t in fitting_types(Story(h))
    )
    if ref.empty() and ctx.friction and (unexplained or sayable):
        raise ReflectorError("an empty answer on a day with friction")
    if prev is not None and ref.carry_type == prev.type:
        raise ReflectorError(f"carry type '{ref.carry_type}' repeats yesterday's")
    raised = _check_raise(ref, ctx, register, untagged, recent_ids)
    _check_obeys_no_friction(ref, ctx, register)
    for r in ref.readings:
        if r.event not in untagged and r.event not in recent_ids:
            raise ReflectorError(f"reading cites {r.event!r}, not an untagged friction event")
        if r.hypothesis not in register:
            raise ReflectorError(f"reading names unknown hypothesis {r.hypothesis!r}")
    # Only a hypothesis the carry may cite obliges it to cite one: a session's own
    # hypothesis not yet backed on two days is listed, never carried.
    if ref.complete() and ref.hypothesis is None and sayable:
        raise ReflectorError("the carry cites no hypothesis while active ones exist")
    if ref.hypothesis is None:
        if ref.carry_text and "tomorrow" in ref.carry_text.lower():
            raise ReflectorError("the carry is read at boot on the day it applies: no 'tomorrow'")
        return
    if ref.carry_type is None:
        raise ReflectorError("a chosen hypothesis needs a carry")
    h = after[ref.hypothesis][0] if ref.hypothesis in after else register.get(ref.hypothesis)
    if h is None and raised is not None and raised.id == ref.hypothesis:
        h = raised
    if h is None or not h.carriable:
        raise ReflectorError(f"'{ref.hypothesis}' is not an active hypothesis")
    if not h.ready:
        raise ReflectorError(
            f"'{ref.hypothesis}' was written by the session and is not backed by friction "
            "on 2 distinct days (nor adopted by the human): it is listed, never carried"
        )
    if h.origin != "human" and any(
        reads_as_instruction(t) for t in (h.text, h.when or "", h.do or "") if t
    ):
        raise ReflectorError(
            f"'{ref.hypothesis}' was raised from friction that reads as an instruction to the "
            "assistant: it is listed for the human, never carried"
        )
    old = register.get(h.id)
    story = Story(
        h,
        supported_today=old is None or len(h.supports) > len(old.supports),
        contradicted_today=old is not None and len(h.contradicts) > len(old.contradicts),
    )
    fits = fitting_types(story)
    if ref.carry_type not in fits:
        raise ReflectorError(
            f"a '{ref.carry_type}' carry does not fit {h.id} ({h.state}, stakes {h.stakes});"
            f" types that fit it today: {', '.join(fits) or 'none'}"
        )
    _check_words(ref, h, ctx, register)


def _check_raise(
    ref: NightlyReflection,
    ctx: NightlyContext,
    register: dict[str, Hypothesis],
    untagged: set[str],
    recent: dict[str, UntaggedNote],
) -> Hypothesis | None:
    """A raised hypothesis must cite untagged friction from ≥ 2 distinct days within 7."""
    new = ref.raise_hypothesis
    if new is None:
        return None
    days = set()  # counted by day_key: a TZ switch cannot make one minute two days
    today = {r.id: day_key(r) for r in ctx.untagged}
    for eid in new.cites:
        if eid in untagged:
            days.add(today.get(eid, ctx.day))
        elif eid in recent:
            days.add(recent[eid].counts_on)
        else:
            raise ReflectorError(f"a raised hypothesis cites {eid!r}, not recent untagged friction")
    if len(days) < 2:
        raise ReflectorError("a raised hypothesis needs untagged friction on 2 distinct days")
    if hypothesis_id(new.text) in register or duplicate_of(new.text, register) is not None:
        raise ReflectorError("the raised hypothesis already exists")
    return ctx.raised(new)


COVER = 0.6  # share of the anchor's n-grams line 1 must hold to say it in other words


def covers(line: str, anchor: str) -> bool:
    """``line`` says ``anchor`` (a claim or a trigger) in its own words: it holds most
    of the anchor's character n-grams (``memory/base/similarity.py``: any language, case,
    width and look-alikes folded).  A model may word the instruction; it may not drop
    what the instruction is about."""
    from evolving_agent.memory.base.similarity import MIN_SHARED, grams

    ga, gl = grams(anchor), grams(line)
    shared = len(ga & gl)
    return bool(ga) and shared >= min(MIN_SHARED, len(ga)) and shared >= COVER * len(ga)


# Words that, leading into the counter-move in the same clause, turn it around.
_NEGATION = re.compile(r"\b(?:not|never|no|don['’]t|stop|quit|refuse|resist|avoid|against)\b")


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .")


def _check_words(
    ref: NightlyReflection, h: Hypothesis, ctx: NightlyContext, register: dict[str, Hypothesis]
) -> None:
    """The meaning checks that need the hypothesis: direction, stakes, boot-time wording."""
    assert ref.carry_type is not None and ref.bias is not None and ref.carry_text is not None
    when, do = h.shape()
    first = _norm(ref.bias.splitlines()[0]) if ref.bias.strip() else ""
    if not do and ref.carry_type != "release":
        # The positive check: line 1 is an instruction built from this hypothesis — its
        # trigger, or (no trigger either) its claim quoted — never free prose.
        anchor = when or h.text
        # a raised pattern's trigger is said in the morning's language (reflectors/framing)
        forms = trigger_forms(anchor) if when else [anchor]
        if not any(_norm(a)[:60] in first or covers(first, a) for a in forms):
            raise ReflectorError(
                "the bias's first line is an instruction built from the hypothesis: it must "
                f"say its {'trigger' if when else 'claim'} (its words may be reworded) "
                f"({anchor[:60]!r})"
            )
    if do and ref.carry_type != "release":
        at = first.find(_norm(do))
        if at < 0:
            raise ReflectorError(
                f"a '{ref.carry_type}' carry frames the counter-move, never drops or inverts "
                f"it: the bias's first line must contain it ({do!r})"
            )
        # The few words leading into it in the same clause ("do not …", "refuse the pull
        # to …"); "instead of a menu, give one answer" negates the menu, not the move.
        clause = " ".join(re.split(r"[.;:!?,]", first[:at])[-1].split()[-4:])
        if _NEGATION.search(clause):
            raise ReflectorError(
                f"the bias negates the counter-move ({clause.strip()!r} … {do!r}): a "
                f"'{ref.carry_type}' carry frames it, never inverts it"
            )
    if ref.carry_type in ("release", "refusal") and h.stakes == "high":
        # Distinct days by day_key (UTC date of each record's instant), as the fold counts.
        cons = set(h.contradicted_on)
        keys = {r.id: day_key(r) for r in ctx.friction}
        keys.update({n.id: n.counts_on for n in ctx.recent_untagged})
        cons.update(keys[r.id] for r in ctx.friction if r.contradicts == h.id)
        for r in ref.readings:
            if r.hypothesis == h.id and r.relation == "contradicts":
                cons.add(keys.get(r.event, ctx.day))
        if len(cons) < 2:
            raise ReflectorError(
                f"'{ref.carry_type}' of a high-stakes hypothesis needs contradiction on 2 "
                "distinct days"
            )
    if "tomorrow" in ref.carry_text.lower():
        raise ReflectorError("the carry is read at boot on the day it applies: no 'tomorrow'")
    if h.stakes == "high" and len(ref.bias.splitlines()) < 3:
        raise ReflectorError("a high-stakes bias has a third line saying what is at stake")


_QUOTES = re.compile(r"“[^”]*”|「[^」]*」|\"[^\"]*\"")
SHINGLE = 24  # characters of friction that may not appear in an instruction


@lru_cache(maxsize=4096)  # the same friction is checked against every answer of a night
def _shingles(text: str) -> frozenset[str]:
    from evolving_agent.memory.base.similarity import key

    k = key(text)
    return frozenset(k[i : i + SHINGLE] for i in range(max(0, len(k) - SHINGLE + 1)))


def _check_obeys_no_friction(
    ref: NightlyReflection, ctx: NightlyContext, register: dict[str, Hypothesis]
) -> None:
    """Friction is quoted, never obeyed: no run of its words (24 normalised characters)
    may stand outside quotation marks in the instruction line, the carry text, or a
    raised hypothesis's trigger / counter-move — unless the words are the hypothesis's
    own trigger or counter-move (the human's, or the session's once friction backed it)."""
    bad: set[str] = set()
    commands: set[str] = set()  # friction that reads as an instruction: not even quoted
    for text in [r.text for r in ctx.friction] + [n.text for n in ctx.recent_untagged]:
        bad |= _shingles(text)
        if reads_as_instruction(text):
            commands |= _shingles(text)
    if commands and _shingles(" ".join(filter(None, (ref.bias, ref.carry_text)))) & commands:
        raise ReflectorError(
            "the bias quotes friction that reads as an instruction to the assistant: such "
            "friction is never grounding"
        )
    if not bad:
        return
    h = register.get(ref.hypothesis or "")
    own: set[str] = set()
    if h is not None:
        for part in (*h.shape(), h.text if h.origin == "human" else None):
            if part:
                own |= _shingles(part)
    bad -= own
    parts: list[tuple[str, str]] = []
    if ref.bias:
        parts.append(("the bias's instruction line", ref.bias.splitlines()[0]))
    if ref.carry_text:
        parts.append(("the carry text", ref.carry_text))
    if ref.raise_hypothesis is not None:
        for name in ("when", "do"):
            value = getattr(ref.raise_hypothesis, name)
            if value:
                parts.append((f"the raised hypothesis's {name}", value))
    for what, text in parts:
        if _shingles(_QUOTES.sub(" ", text)) & bad:
            raise ReflectorError(
                f"{what} repeats friction's words outside a quotation: friction is quoted "
                "as grounding, never obeyed"
            )
