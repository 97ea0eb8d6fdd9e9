"""Pendulums in any language: two related pulls taking turns day to day.

The drift watch used to know opposites from a short English phrase list, so a Chinese
or Japanese pendulum went unseen.  Here nothing reads the words' meaning; a pendulum is
found from structure, in three steps:

1. **Sides.**  Tagged friction gives each hypothesis two sides, *for* (``--supports``)
   and *against* (``--contradicts``), each a set of days with the events on them.
   Untagged friction is grouped into recurring complaints with
   :mod:`evolving_agent.memory.base.similarity` (normalised character n-grams: any script,
   no word boundaries, look-alike letters folded); a complaint that reads like the
   tagged friction of a side joins that side.
2. **A relation.**  Two sides may swing against each other only when something relates
   them — never because their days alternate alone (issue 30, invariant 2):

   * two hypotheses whose triggers overlap (the same ``when`` once normalised, or
     similar at :data:`SAME`), or that one event links (it supports one and
     contradicts the other); one hypothesis whose evidence divides day to day is a
     split, which the state rules and the ``state-flip`` check already name;
   * two untagged complaints (or two different complaints filed on one side of one
     hypothesis) have no tag to relate them, so their turns must be the strict kind,
     *complementary*: every day of the stretch has exactly one of them, consecutive
     days, :data:`UNTAGGED_SWINGS` or more swings (eight days).  Two unrelated
     complaints that recur now and then do not take turns every single day for a
     week.  Complaints that share a frame ("…と言われた") are grouped loosely and then
     looked at again strictly, so opposite complaints in one frame are two sides.
3. **Turns** (:func:`turns`): a stretch of days on which the sides take turns — no day
   with both, each step a swing or a skip over a missing day, at least
   :data:`TAGGED_SWINGS` swings.

Each :class:`Swing` carries the ids of every event on both sides in its stretch, in
order, so the owner can read the very events.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import field
from datetime import date

from evolving_agent.memory.base.similarity import THRESHOLD, key, similar
from evolving_agent.memory.evidence.evidence import EvidenceRecord
from evolving_agent.memory.ops.hypotheses import Hypothesis
from evolving_agent.records import record

TAGGED_SWINGS = 3  # A, B, A, B: three turns of direction
UNTAGGED_SWINGS = 7  # no tag relates them: eight days of strict turns
MAX_GAP = 2  # days between two steps of a stretch (one missing day is skipped over)
MAX_COMPLAINTS = 200  # untagged groups compared (a flood of distinct texts stays cheap)
QUOTE = 60
# An untagged complaint joins a tagged side only when it reads as the same note, not
# merely as related: notes about one tool ("rm -rf", "l'utilisateur a demandé") share
# words across opposite sides.
SAME = 0.6


@record
class Side:
    """One pull: the days it was felt on and the events behind each day."""

    label: str  # how the owner recognises it: "h-… “quote”", "against h-… “…”", "“quote”"
    quote: str
    days: dict[date, list[str]] = field(default_factory=dict)
    hypotheses: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)  # a few of its texts, to compare
    tagged: bool = True
    records: list[EvidenceRecord] = field(default_factory=list)

    def add(self, rec: EvidenceRecord) -> None:
        self.records.append(rec)
        self.days.setdefault(rec.day(), []).append(rec.id)
        if len(self.texts) < 4 and rec.text not in self.texts:
            self.texts.append(rec.text)

    def reads_like(self, text: str, threshold: float = THRESHOLD) -> bool:
        return any(key(t) == key(text) or similar(t, text, threshold) for t in self.texts)


@record(frozen=True)
class Swing:
    """Two related sides taking turns over ``days`` (the stretch)."""

    a: Side
    b: Side
    why: str  # the relation: what makes them two pulls of one thing
    days: list[date]
    evidence_ids: list[str]

    @property
    def swings(self) -> int:
        return sum(
            1
            for x, y in zip(self.days, self.days[1:], strict=False)
            if (x in self.a.days) != (y in self.a.days)
        )

    @property
    def hypotheses(self) -> list[str]:
        return sorted(self.a.hypotheses | self.b.hypotheses)


def clip(text: str, limit: int = QUOTE) -> str:
    """One line, at most ``limit`` characters, never cut inside a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,.;:") + "…"


def turns(a: dict[date, list[str]], b: dict[date, list[str]], need: int, *, strict: bool
          ) -> list[list[date]]:  # fmt: skip
    """Maximal stretches of days on which ``a`` and ``b`` take turns.

    A day with both breaks a stretch (it is not a turn).  Each step is a swing; a step
    that stays on one side is skipped over only when a day is missing between the two
    (``strict``: never — every consecutive day must swing).  A stretch counts with at
    least ``need`` swings and no more skips than swings, from its first swing to its
    last (evidence is missing on some days of a real pendulum; a run of days on one
    side is no turn)."""
    days = sorted(set(a) | set(b))
    found: list[list[date]] = []
    cur: list[date] = []

    def close() -> None:
        # Only from the first swing to the last: a run on one side before the other
        # began (or after it stopped) is no part of the turns.
        at = [i for i in range(len(cur) - 1) if (cur[i] in a) != (cur[i + 1] in a)]
        if not at:
            return
        stretch = cur[at[0] : at[-1] + 2]
        if len(at) >= need and len(at) >= len(stretch) - 1 - len(at):
            found.append(stretch)

    for d in days:
        if d in a and d in b:
            close()
            cur = []
            continue
        if cur:
            prev = cur[-1]
            gap = (d - prev).days
            same = (prev in a) == (d in a)
            if gap > (1 if strict else MAX_GAP) or (same and (strict or gap < 2)):
                close()
                cur = []
        cur.append(d)
    close()
    return found


def _relation(x: Hypothesis, y: Hypothesis, links: set[frozenset[str]],
              sides: dict[tuple[str, bool], Side]) -> str | None:  # fmt: skip
    """What relates two hypotheses (None: nothing — alternation alone is no relation)."""
    if x.when and y.when and (key(x.when) == key(y.when) or similar(x.when, y.when, SAME)):
        return f"the same trigger (“{clip(x.when)}”)"
    if frozenset((x.id, y.id)) in links:
        return "an event supports one and contradicts the other"
    return None


def _complaints(untagged: Iterable[EvidenceRecord], threshold: float = THRESHOLD) -> list[Side]:
    """Recurring complaints: the events grouped by what they say (same key, or similar
    at ``threshold``)."""
    groups: list[Side] = []
    by_key: dict[str, Side] = {}
    for rec in untagged:
        k = key(rec.text)
        side = by_key.get(k) or next((g for g in groups if g.reads_like(rec.text, threshold)), None)
        if side is None:
            if len(groups) >= MAX_COMPLAINTS:
                continue
            quote = clip(rec.text)
            side = Side(label=f"“{quote}”", quote=quote, tagged=False)
            groups.append(side)
        by_key.setdefault(k, side)
        side.add(rec)
    return groups


def find(friction: list[EvidenceRecord], register: dict[str, Hypothesis]) -> list[Swing]:
    """Every pendulum in ``friction`` (ordered by time), tagged or untagged, any language."""
    sides: dict[tuple[str, bool], Side] = {}
    links: set[frozenset[str]] = set()
    untagged: list[EvidenceRecord] = []
    for rec in friction:
        if rec.supports and rec.contradicts and rec.supports != rec.contradicts:
            links.add(frozenset((rec.supports, rec.contradicts)))
        tags = [(h, pro) for h, pro in ((rec.supports, True), (rec.contradicts, False)) if h]
        if not tags:
            untagged.append(rec)
        for hid, pro in tags:
            side = sides.get((hid, pro))
            if side is None:
                quote = clip(rec.text)
                word = f"{hid} “{quote}”" if pro else f"against {hid} “{quote}”"
                side = sides[(hid, pro)] = Side(label=word, quote=quote,
                                                hypotheses={hid})  # fmt: skip
            side.add(rec)
    complaints = []
    for group in _complaints(untagged):
        # An untagged complaint that reads like a side's tagged friction is that side.
        home = next(
            (s for s in sides.values() if any(s.reads_like(t, SAME) for t in group.texts)), None
        )
        if home is None:
            complaints.append(group)
            continue
        for d, ids in group.days.items():
            home.days.setdefault(d, []).extend(ids)
    for group in complaints:  # what the nightly job raised from these events, or read as them
        mine = {i for g in group.days.values() for i in g}
        group.hypotheses = {h.id for h in register.values() if mine & {*h.cites, *h.supports}}
    out: list[Swing] = []

    def check(a: Side, b: Side, why: str, need: int, strict: bool) -> None:
        for stretch in turns(a.days, b.days, need, strict=strict):
            ids = [i for d in stretch for i in (a.days.get(d) or b.days.get(d) or [])]
            out.append(Swing(a, b, why, stretch, ids))

    hids = sorted({h for h, _ in sides})
    for i, x in enumerate(hids):
        for y in hids[i + 1 :]:
            px, py = sides.get((x, True)), sides.get((y, True))
            hx, hy = register.get(x), register.get(y)
            if px is None or py is None or hx is None or hy is None:
                continue
            why = _relation(hx, hy, links, sides)
            if why is not None:
                check(px, py, why, TAGGED_SWINGS, False)
    # Opposite complaints may share a frame ("…と言われた", "the user said …") and so
    # read as related: each group is looked at again at the strict reading (SAME) too.
    fine = [g for c in complaints for g in _complaints(c.records, SAME)]
    for g in fine:
        g.hypotheses = next(c.hypotheses for c in complaints if g.records[0] in c.records)
    untagged_why = "two untagged complaints, exactly one of them every day"
    contexts = [(complaints, untagged_why), (fine, untagged_why)]
    for (hid, pro), side in sorted(sides.items()):
        # Two different complaints both tagged to one side ("too long" and "not enough
        # information", each filed as support of one belief) are two pulls as well.
        inner = _complaints(side.records, SAME)
        for g in inner:
            g.hypotheses = {hid}
        word = "for" if pro else "against"
        contexts.append((inner, f"two different complaints, both tagged {word} {hid}, "
                                "exactly one of them every day"))  # fmt: skip
    for groups, why in contexts:
        recurring = [g for g in groups if len(g.days) >= 3]
        for i, a in enumerate(recurring):
            for b in recurring[i + 1 :]:
                check(a, b, why, UNTAGGED_SWINGS, True)
    seen: set[tuple[str, ...]] = set()
    unique = []
    for sw in sorted(out, key=lambda s: (s.days[0], -len(s.evidence_ids), s.a.label)):
        cited = tuple(sw.evidence_ids)
        if cited not in seen and not any(set(cited) <= set(o) for o in seen):
            seen.add(cited)
            unique.append(sw)
    return unique


def related(x: Hypothesis, y: Hypothesis) -> str | None:
    """What relates two hypotheses by their shape alone (the carry's check)."""
    return _relation(x, y, set(), {})


def group_by_day(seq: Iterable[tuple[date, str]]) -> dict[date, list[str]]:
    out: dict[date, list[str]] = defaultdict(list)
    for d, i in seq:
        out[d].append(i)
    return dict(out)
