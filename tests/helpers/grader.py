"""The strict grader of a morning, against a generated life's known truth.

A **glad** morning (issue 30) is one the owner would boot with gladly:

* one actionable instruction tied to a trigger (a release says what to stop leaning on);
* grounded in an event at most 7 days old, or labelled with its age;
* its type fits the evidence: a release only for a contradicted low-stakes belief; never
  a question about a belief with steady support;
* no self-description, quota or score; readable (nothing cut mid-word, no mojibake) and
  in the owner's language: the framing around the quotes holds no English word when the
  owner wrote the belief in another language;
* no instruction from friction: an injected instruction is never carried or quoted;
* every "the other way" quote is an event against the carried belief (or for its real
  opposite); tension only between related beliefs;
* a turned low-stakes belief is released within N + 2 mornings, not ordered again until
  new support, and the new preference is carried soon after;
* a raised pattern without a counter-move is carried only as a watchpoint naming it;
* the bias does not swing between the two sides of a pendulum.

:func:`grade` returns each fresh morning's failures by class; the ``invariant_*``
functions return a life's violations of issue 30's invariants 1, 2, 3, 5, 6 and 10
(bias half), and of readability in the owner's language, as readable lines, for the
property tests.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from evolving_agent.memory.base.similarity import key as norm_key
from evolving_agent.memory.ops.hypotheses import quote
from evolving_agent.reflectors import framing
from tests.helpers.lives import Event, Life, Lived, Morning

MAX_AGE = 7
CLASSES = (
    "no-instruction",
    "old-grounding-unlabelled",
    "other-way-not-against",
    "tension-unrelated",
    "question-on-steady",
    "release-unfit",
    "turn-not-released",
    "ordered-after-turn",
    "new-preference-not-carried",
    "pattern-not-watchpoint",
    "pattern-generic",
    "injection-in-bias",
    "self-description",
    "unreadable",
    "pendulum-swing",
    "high-stakes-weakened",
    "framing-not-owner-language",
)

# A date's age label, in any language: a parenthesis right after it holding a number
# (checked against the real age: "(12 days ago)", "（12 日前）", "(hace 12 días)").
_LABEL = r"(\s*[(（][^)）\d]*(\d+)[^)）]*[)）])?"


def _marks(key: str) -> list[tuple[str, str]]:
    """Each language's words before a dated quote (``Grounding, ``; ``the other way, ``)
    and between its date and its quote (``: ``), from the product's phrase table (where
    to look; whether the morning is in the owner's language is checked apart)."""
    out = []
    for lang in framing.languages():
        before, _, after = framing.words(lang)[key].partition("{date}")
        before = re.split(r"[:：]", before)[-1].lstrip()
        out.append((before, after.partition("{quote}")[0]))
    return out


_GROUND = re.compile(
    "(?:" + "|".join(re.escape(b) for b, _ in _marks("grounding")) + r")(\d{4}-\d{2}-\d{2})"
    + _LABEL
)
_OTHER = re.compile(
    "(?:" + "|".join(re.escape(b) for b, _ in _marks("divides")) + r")(\d{4}-\d{2}-\d{2})"
    + _LABEL + "(?:" + "|".join(re.escape(a) for _, a in _marks("divides")) + r")“([^”]*)”"
)
_WHEN = tuple(sorted(framing.when_words()))
# English framing words no other owner's morning should hold outside quotes and the
# owner's own words (none of them is a word of Spanish, French or German).
_ENGLISH = frozenset(
    "the when today this what with before grounding evidence divides happens leaning "
    "stake watch keep rule try other way ago latest against pattern quoted below starts "
    "again catch".split()
)
_SELF = re.compile(r"\b\d+\s*%|\bscore\b|\b\d+ of \d+\b|\bquota\b|\bI am\b|\bI tend\b", re.I)
_GENERIC = "stop, and choose what the user asked for instead"


@dataclass
class Graded:
    morning: date
    hypothesis: str | None
    type: str | None
    bias: str
    failures: list[str] = field(default_factory=list)

    @property
    def glad(self) -> bool:
        return not self.failures


@dataclass
class Report:
    life: Life
    mornings: list[Graded]
    notes: list[str] = field(default_factory=list)  # life-level findings, readable

    @property
    def fresh(self) -> int:
        return len(self.mornings)

    @property
    def glad(self) -> int:
        return sum(1 for g in self.mornings if g.glad)

    def counts(self) -> Counter[str]:
        return Counter(f for g in self.mornings for f in set(g.failures))

    def failing(self, cls: str) -> list[Graded]:
        return [g for g in self.mornings if cls in g.failures]


def _match(text: str) -> str:
    return norm_key(text.rstrip("…"))


def _events_quoted(life: Life, day: date, quoted: str) -> list[Event]:
    """The events of ``day`` whose grounding quote starts with ``quoted``."""
    want = _match(quoted)
    i = (day - life.start).days
    return [e for e in life.events_on(i) if norm_key(quote(e.text)).startswith(want)]


def _about(life: Life, h: Any) -> str:
    """What a hypothesis of the register is about, in the truth's terms: a spec's id,
    or for a raised one the pattern / pendulum side / injection it quotes."""
    if life.spec(h.id) is not None:
        return str(h.id)
    k = norm_key(h.text)
    for e in life.events:
        if e.about and norm_key(quote(e.text, 160))[:30] in k:
            return f"{e.about}:{e.side}" if e.side else e.about
    return f"raised:{h.id}"


def related(life: Life, a: str, b: str) -> bool:
    """Whether two truth keys may be in tension (a real relation)."""
    if frozenset({a, b}) in life.truth.related:
        return True
    return {a, b} == {"pendulum:a", "pendulum:b"}


def _injected(life: Life, text: str) -> bool:
    """An injected instruction's words (any 16 normalised characters of it) in ``text``."""
    k = norm_key(text)
    for inj in life.truth.injections:
        ik = norm_key(inj)
        if any(ik[i : i + 16] in k for i in range(0, max(1, len(ik) - 15), 4)):
            return True
    return False


def _fresh_after(lived: Lived, day: date) -> list[Morning]:
    return sorted(
        (m for m in lived.mornings.values() if m.day > day and m.bias and not m.stale),
        key=lambda m: m.day,
    )


def grade(lived: Lived) -> Report:
    life = lived.life
    n = life.truth.n_turn
    fresh = sorted(lived.fresh(), key=lambda m: m.day)
    out = {m.day: Graded(m.day, m.hypothesis, m.carry_type, m.bias or "") for m in fresh}
    rep = Report(life, list(out.values()))

    for m in fresh:
        g = out[m.day]
        lines = (m.bias or "").splitlines()
        first = lines[0] if lines else ""
        rest = "\n".join(lines[1:])
        h = m.register.get(m.hypothesis or "")
        spec = life.spec(m.hypothesis or "")
        # one actionable instruction tied to a trigger
        trigger = h.when if h is not None else None
        if m.carry_type != "release" and not (
            any(w in first.lower() for w in _WHEN)
            or (trigger and norm_key(trigger) in norm_key(first))
        ):
            g.failures.append("no-instruction")
        # the age of each grounding
        for found in (*_GROUND.finditer(rest), *_OTHER.finditer(rest)):
            age = (m.day - date.fromisoformat(found.group(1))).days
            if age > MAX_AGE and (not found.group(2) or int(found.group(3)) != age):
                g.failures.append("old-grounding-unlabelled")
        # "the other way"
        for found in _OTHER.finditer(rest):
            day, text = date.fromisoformat(found.group(1)), found.group(4)
            evs = _events_quoted(life, day, text)
            ok = any(
                e.contradicts == m.hypothesis
                or (
                    e.supports is not None
                    and m.hypothesis is not None
                    and related(life, e.supports, m.hypothesis)
                )
                or (h is not None and e.about is not None and e.side is not None
                    and _about(life, h) not in ("", f"{e.about}:{e.side}")
                    and related(life, _about(life, h), f"{e.about}:{e.side}"))
                for e in evs
            )
            if not ok:
                g.failures.append("other-way-not-against")
        # tension with an unrelated belief
        if h is not None:
            for p in h.tension:
                other = m.register.get(p)
                if other is not None and not related(life, _about(life, h), _about(life, other)):
                    g.failures.append("tension-unrelated")
                    break
        # the type fits the evidence
        if h is not None and m.carry_type == "question" and not h.contradicted_on:
            if not h.tension or "tension-unrelated" in g.failures:
                g.failures.append("question-on-steady")
        if m.carry_type == "release" and (
            h is None or h.stakes == "high" or not h.contradicted_on
            or (spec is not None and spec.role not in ("reverses",)
                and len(set(h.contradicted_on)) <= len(set(h.supported_on)))
        ):
            g.failures.append("release-unfit")
        if h is not None and h.stakes == "high" and h.state not in ("emerging", "live"):
            g.failures.append("high-stakes-weakened")
        # raised patterns
        if h is not None and h.origin == "nightly" and not h.shape()[1]:
            about = _about(life, h)
            if about == "injection" or _injected(life, h.text):
                pass  # counted below, as an injection in the bias
            elif m.carry_type not in ("watchpoint", "question"):
                g.failures.append("pattern-not-watchpoint")
            elif _GENERIC in first:
                g.failures.append("pattern-generic")
        if _injected(life, m.bias or ""):
            g.failures.append("injection-in-bias")
        if _SELF.search(first):
            g.failures.append("self-description")
        if "\ufffd" in first or re.search(r"\w…", first):
            g.failures.append("unreadable")
        if not _in_owner_language(life, m, spec):
            g.failures.append("framing-not-owner-language")

    # invariant 3: a turned low-stakes belief is released, then not ordered again, and
    # the new preference takes its place
    for s in life.hypotheses:
        if s.stakes != "low":
            continue
        turned = [t.index for t in life.truth.days if s.id in t.turned]
        if not turned:
            continue
        t0 = life.day(turned[0])
        window = _fresh_after(lived, t0)[: n + 2]
        released = next(
            (m for m in _fresh_after(lived, t0 - timedelta(days=n + 2))
             if m.hypothesis == s.id and m.carry_type == "release"),
            None,
        )
        if window and len(window) == n + 2 and (released is None or released.day > window[-1].day):
            out[window[-1].day].failures.append("turn-not-released")
        support_days = sorted({life.day(e.day) for e in life.events if e.supports == s.id})
        for m in _fresh_after(lived, t0):
            if m.hypothesis != s.id or m.carry_type == "release":
                continue
            since = released.day if released else t0
            if not any(since <= d < m.day for d in support_days):
                out[m.day].failures.append("ordered-after-turn")
        if released is not None and s.opposite:
            after = _fresh_after(lived, released.day - timedelta(days=1))[: n + 3]
            if len(after) == n + 3 and not any(m.hypothesis == s.opposite for m in after):
                out[after[-1].day].failures.append("new-preference-not-carried")

    # invariant 10 (bias half): no swing between the two sides of a pendulum
    def pull(m: Morning) -> str | None:
        up = life.truth.untagged_pendulum
        if up is not None:
            a, b = (norm_key(x) for x in up)
            k = norm_key(m.bias or "")
            if (a in k) != (b in k):
                return "pa" if a in k else "pb"
        for pair in _pendulums(life):
            if m.hypothesis in pair:
                if m.carry_type in ("question", "release"):
                    return None  # shows the swing, does not follow it
                return m.hypothesis
        return None

    pulls = [(m.day, pull(m)) for m in fresh]
    for (d1, a), (d2, b) in zip(pulls, pulls[1:], strict=False):
        if a and b and a != b and (d2 - d1).days == 1 and _opposed(life, a, b):
            out[d2].failures.append("pendulum-swing")
    return rep


_QUOTE = re.compile(r"“[^”]*”|「[^」]*」|\[[^\]]*\]")  # quotes; a withheld note's brackets
_COMMAND = re.compile(r"evolving-agent hypothesis propose h-[0-9a-f]+ --do")


def owner_language(life: Life, m: Morning, spec: Any) -> str | None:
    """The language the owner wrote this morning's belief in: the hypothesis's (a spec),
    else the friction it quotes (a raised pattern, a moment no hypothesis covers)."""
    if spec is not None:
        return str(spec.lang)
    k = norm_key(m.bias or "")
    found = [e for e in life.events if norm_key(quote(e.text, 60))[:20] in k]
    return found[0].lang if found else None


def _in_owner_language(life: Life, m: Morning, spec: Any) -> bool:
    """Readable in the owner's language: with the quotes and the owner's own words (the
    hypothesis's claim, trigger, counter-move) taken out, what is left — the framing —
    holds no English word for an owner who wrote in another language (an owner writing
    in another script: no Latin word at all; commands and ids aside)."""
    lang = owner_language(life, m, spec)
    if lang in (None, "en"):
        return True
    rest = _COMMAND.sub(" ", _QUOTE.sub(" ", m.bias or ""))
    if spec is not None:
        for own in sorted((spec.claim, spec.when, spec.do), key=len, reverse=True):
            rest = rest.replace(own, " ")
    latin = re.findall(r"[A-Za-z]{3,}", rest)
    if lang in ("es", "fr", "de"):
        return not any(w.lower() in _ENGLISH for w in latin)
    return not latin


def _pendulums(life: Life) -> list[frozenset[str]]:
    """The tagged pendulums: related pairs whose support takes turns (a reversal's old
    and new preference are opposites too, but following a change of mind is no swing)."""
    out = []
    for pair in life.truth.related:
        specs = [life.spec(x) for x in pair]
        if all(s is not None and s.role == "pendulum" for s in specs):
            out.append(pair)
    return out


def _opposed(life: Life, a: str, b: str) -> bool:
    return {a, b} == {"pa", "pb"} or frozenset({a, b}) in _pendulums(life)


# -- the invariants as readable violations -------------------------------------------


def _lines(rep: Report, classes: tuple[str, ...], invariant: str) -> list[str]:
    return [
        f"inv {invariant} [{c}] {g.morning} {g.type} {g.hypothesis}: {g.bias!r}"
        for g in rep.mornings
        for c in classes
        if c in g.failures
    ]


def invariant_1(rep: Report) -> list[str]:
    return _lines(rep, ("other-way-not-against",), "1")


def invariant_2(rep: Report, lived: Lived) -> list[str]:
    """No tension between unrelated beliefs in any morning's register."""
    life = lived.life
    out = []
    for m in lived.mornings.values():
        for h in m.register.values():
            for p in h.tension:
                other = m.register.get(p)
                if other is not None and not related(life, _about(life, h), _about(life, other)):
                    out.append(f"inv 2 {m.day}: {h.id} ({h.text!r}) in tension with {p} "
                               f"({other.text!r})")
    return out


def invariant_3(rep: Report) -> list[str]:
    return _lines(
        rep, ("turn-not-released", "ordered-after-turn", "new-preference-not-carried"), "3"
    )


def invariant_5(rep: Report) -> list[str]:
    return _lines(rep, ("old-grounding-unlabelled",), "5")


def invariant_6(rep: Report) -> list[str]:
    return _lines(rep, ("pattern-not-watchpoint", "pattern-generic", "injection-in-bias"), "6")


def invariant_10(rep: Report) -> list[str]:
    return _lines(rep, ("pendulum-swing",), "10")


def invariant_high(rep: Report, lived: Lived) -> list[str]:
    """A high-stakes rule is never released or weakened (invariant 4's bias half)."""
    out = _lines(rep, ("high-stakes-weakened",), "4")
    for g in rep.mornings:
        s = lived.life.spec(g.hypothesis or "")
        if s is not None and s.stakes == "high" and g.type in ("release", "refusal", "question",
                                                              "experiment"):
            out.append(f"inv 4 {g.morning}: high-stakes {s.id} carried as {g.type}")
    return out


def invariant_readable(rep: Report) -> list[str]:
    """Every morning is framed in its owner's language (the glad morning's readability)."""
    return _lines(rep, ("framing-not-owner-language",), "readable")


def all_invariants(rep: Report, lived: Lived) -> list[str]:
    return [
        *invariant_1(rep), *invariant_2(rep, lived), *invariant_3(rep), *invariant_5(rep),
        *invariant_6(rep), *invariant_10(rep), *invariant_high(rep, lived),
        *invariant_readable(rep),
    ]  # fmt: skip
