"""Which hypothesis is carried into today, and as which of the nine types.

One table (:data:`TYPE_TABLE`, stated for users in docs/cycle.md) says which types fit
a hypothesis, from *its own* story: its state, stakes, whether the day's evidence
touched it, whether it has a counter-move.  The rules reflector chooses with it and the
nightly job checks every reflector's answer against it.

Fair carry (:func:`eligible`, :func:`choose`): over any 14 mornings with at least 3
carriable hypotheses none is carried on more than 5 (under 40 %); a hypothesis is not
carried two mornings running while another can be; one not carried for 13 mornings
comes first; a weakening one is released before it may retire, and a belief related to
it (its opposite, the owner's new preference) comes next; one :func:`related` to
yesterday's (a shared trigger, linking evidence, opposite complaints — never days that
merely alternate) waits a morning, so the bias cannot swing between two opposite pulls.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from evolving_agent.memory.ops.hypotheses import Hypothesis
from evolving_agent.records import record

WINDOW = 14  # mornings the fairness rule looks at
MAX_SHARE = 5  # at most this many of any WINDOW mornings for one hypothesis (< 40 %)
MIN_POOL = 3  # the share cap applies when at least this many are carriable
TENSION_DAYS = 14  # how far back the pendulum check looks
SUCCESSION_DAYS = 4  # carried mornings after a release in which a related belief comes first


@record(frozen=True)
class Story:
    """What the type table reads about one hypothesis on the reflected day."""

    h: Hypothesis
    supported_today: bool = False
    contradicted_today: bool = False

    @property
    def high(self) -> bool:
        return self.h.stakes == "high"

    @property
    def has_move(self) -> bool:
        return self.h.shape()[1] is not None

    @property
    def contradicted(self) -> bool:
        return bool(self.h.contradicted_on)

    @property
    def outweighed(self) -> bool:
        return len(set(self.h.contradicted_on)) > len(set(self.h.supported_on))

    @property
    def raw_pattern(self) -> bool:
        """A pattern the nightly job raised, with no counter-move yet: nothing in the
        friction says what to do instead, so it is only watched for."""
        return self.h.origin == "nightly" and not self.has_move

    @property
    def releasable(self) -> bool:
        """Weakening and not yet released — or supported again since its release (a
        released belief is not ordered again until new support)."""
        h = self.h
        if h.state != "weakening" or self.high:
            return False
        return h.released is None or any(d > h.released for d in h.supported_on)


Fit = Callable[[Story], bool]

# type → (fits when, in words for docs/cycle.md, the predicate).  Order = preference:
# the first fitting type this hypothesis used least recently wins.
TYPE_TABLE: tuple[tuple[str, str, Fit], ...] = (
    (
        "release",
        "weakening (contradicted on more days than supported, or turned: contradicted on "
        "its last 3 evidence days after earlier support), low stakes; once, until new support",
        lambda s: s.releasable,
    ),
    (
        "repair",
        "low stakes, not weakening, with a trigger or counter-move, and the day's friction "
        "showed it again (a slip to make right)",
        lambda s: not s.high
        and s.h.state != "weakening"
        and s.supported_today
        and any(s.h.shape()),
    ),
    (
        "question",
        "low stakes, and its evidence divides (split) or swings against a related belief's, "
        "or it is emerging and contradicted",
        lambda s: not s.high
        and s.h.state != "weakening"
        and (
            s.h.state == "split"
            or bool(s.h.tension)
            or (s.h.state == "emerging" and s.contradicted)
        ),
    ),
    (
        "experiment",
        "emerging (an idea under test), low stakes",
        lambda s: s.h.state == "emerging" and not s.high,
    ),
    (
        "refusal",
        "live with a counter-move, low stakes: refuse the pull it resists",
        lambda s: s.h.state == "live" and s.has_move and not s.high,
    ),
    (
        "rule-for-tomorrow",
        "live with a counter-move, or any high-stakes rule",
        lambda s: s.high or (s.h.state == "live" and s.has_move),
    ),
    (
        "vow",
        "live, or any high-stakes rule",
        lambda s: s.high or s.h.state == "live",
    ),
    (
        "watchpoint",
        "not weakening: watch for the moment it matters",
        lambda s: s.h.state != "weakening",
    ),
    (
        "practice",
        "live or emerging with a counter-move, low stakes",
        lambda s: not s.high and s.has_move and s.h.state in ("live", "emerging"),
    ),
)
FIRM = ("rule-for-tomorrow", "vow", "watchpoint")  # the only types a high-stakes rule gets


def fitting_types(story: Story) -> list[str]:
    """The types that fit, in table order.  A raised pattern without a counter-move
    fits only ``watchpoint`` (naming the pattern), never an experiment or a rule."""
    fits = [t for t, _, fits in TYPE_TABLE if fits(story)]
    if story.raw_pattern:
        return [t for t in fits if t == "watchpoint"]
    return fits


@record(frozen=True)
class CarryNote:
    """One past morning's carry (what fairness reads)."""

    day: date  # the morning it was for
    hypothesis: str | None
    type: str
    seen: bool = True  # false: a catch-up passed over that morning, nobody booted it


def type_for(story: Story, history: list[CarryNote], yesterday: str | None) -> str | None:
    """The fitting type, other than yesterday's, this hypothesis used least recently
    (never used first; ties in table order).  None when only yesterday's type fits."""
    used: dict[str, date] = {}
    for n in history:
        if n.hypothesis == story.h.id:
            used[n.type] = max(n.day, used.get(n.type, n.day))
    fits = [t for t in fitting_types(story) if t != yesterday]
    if not fits:
        return None
    if "release" in fits:
        return "release"  # released at least once before it may retire
    order = {t: i for i, t in enumerate(fits)}
    return min(fits, key=lambda t: (used.get(t, date.min), order[t]))


TRIGGER_OVERLAP = 0.55  # similarity of two triggers that name the same moment


def _own_trigger(h: Hypothesis) -> str | None:
    """A trigger that names a moment: not the one every raised pattern without a
    counter-move shares ("the pattern quoted below starts again"), which relates no two."""
    return None if h.origin == "nightly" and not h.do else h.when


def related(a: Hypothesis, b: Hypothesis) -> bool:
    """Something relates two beliefs, so that their evidence can swing between them:

    * **overlapping triggers** — the same moment (similar ``when``, any language;
      :data:`TRIGGER_OVERLAP`, above what unrelated triggers that share a "when about
      to …" frame reach);
    * **linking evidence** — an event that supports one and contradicts the other;
    * **opposite complaints** — the friction behind one complains the opposite way
      from the friction behind the other ("too long" / "not enough detail",
      :mod:`memory.opposites`, any language).

    Days that merely alternate are never a relation.  A high-stakes rule is in no
    pendulum: its contradictions go to the human as a narrowing."""
    from evolving_agent.memory.base.opposites import opposite_complaints
    from evolving_agent.memory.base.similarity import key, similarity

    if a.id == b.id or a.stakes == "high" or b.stakes == "high":
        return False
    wa, wb = _own_trigger(a), _own_trigger(b)
    if wa and wb and (key(wa) == key(wb) or similarity(wa, wb) >= TRIGGER_OVERLAP):
        return True
    if set(a.supports) & set(b.contradicts) or set(b.supports) & set(a.contradicts):
        return True
    return any(
        opposite_complaints(x, y)
        for x in (a.last_for, a.last_against)
        for y in (b.last_for, b.last_against)
        if x and y and (x is a.last_for) == (y is b.last_for)
    )


def in_tension(a: Hypothesis, b: Hypothesis, day: date) -> bool:
    """The pendulum: two :func:`related` beliefs whose support, over the last
    :data:`TENSION_DAYS` days, in the span where both were supported, each on ≥ 3
    days, never on the same day, took turns day to day (a, b, a, b …: at least three
    swings, nearly every step one), as when "too long" and "not enough information"
    take turns.  Alternation alone, between unrelated beliefs, is a coincidence."""
    return interleaved(set(a.supported_on), set(b.supported_on), day) and related(a, b)


def interleaved(days_a: set[date], days_b: set[date], day: date, least: int = 3) -> bool:
    """Two sets of days that take turns (see :func:`in_tension`); each needs ``least``
    days in the span where both are present (two sparse hypotheses touched on
    different days are not a pendulum)."""
    since = day - timedelta(days=TENSION_DAYS - 1)
    sa = {d for d in days_a if since <= d <= day}
    sb = {d for d in days_b if since <= d <= day}
    if not sa or not sb or sa & sb:
        return False
    # Only the span where both are present: a long history of one before the other began
    # is not evidence against a swing that started since.
    lo, hi = max(min(sa), min(sb)) - timedelta(days=2), min(max(sa), max(sb)) + timedelta(days=2)
    days = sorted(d for d in sa | sb if lo <= d <= hi)
    if min(sum(1 for d in days if d in sa), sum(1 for d in days if d not in sa)) < least:
        return False
    # A swing counts when the two take turns within 2 days: the pendulum is day to day,
    # not two unrelated hypotheses that happen to be touched in different weeks.
    swings = sum(
        1
        for x, y in zip(days, days[1:], strict=False)
        if (x in sa) != (y in sa) and (y - x).days <= 2
    )
    # ... and nearly every step of the union is one: they take turns, not just differ.
    return swings >= 3 and 5 * swings >= 4 * (len(days) - 1)


def tensions(pool: list[Hypothesis], day: date) -> dict[str, list[str]]:
    """Each hypothesis's tension partners (ids, sorted) among ``pool``."""
    out: dict[str, list[str]] = {h.id: [] for h in pool}
    for i, a in enumerate(pool):
        for b in pool[i + 1 :]:
            if in_tension(a, b, day):
                out[a.id].append(b.id)
                out[b.id].append(a.id)
    return {k: sorted(v) for k, v in out.items()}


@record(frozen=True)
class Choice:
    hypothesis: Hypothesis
    type: str


def eligible(
    stories: list[Story],
    history: list[CarryNote],
    morning: date,
    yesterday: CarryNote | None,
    owed: frozenset[str] = frozenset(),
) -> list[Choice]:
    """The candidates fairness allows today, each with its type (unordered).
    ``owed``: new preferences a recent release still owes a morning (not carried since
    the release) — the share cap does not hold them back."""
    recent = [n for n in history if morning - timedelta(days=WINDOW) < n.day < morning]
    counts: dict[str, int] = {}
    for n in recent:
        if n.hypothesis:
            counts[n.hypothesis] = counts.get(n.hypothesis, 0) + 1
    pool = [s for s in stories if s.h.ready]
    by_id = {s.h.id: s.h for s in pool}
    y_type = yesterday.type if yesterday else None
    y_hyp = by_id.get(yesterday.hypothesis or "") if yesterday else None
    out: list[Choice] = []
    for s in pool:
        t = type_for(s, history, y_type)
        if t is None:
            continue
        if t == "release":
            # A turned belief is released promptly: the release is owed once, it is no
            # pull to follow, so neither the share cap nor yesterday's relation holds it.
            out.append(Choice(s.h, t))
            continue
        if s.h.id not in owed and len(pool) >= MIN_POOL and counts.get(s.h.id, 0) >= MAX_SHARE:
            continue
        if (
            y_hyp is not None
            and y_hyp.id != s.h.id
            and y_type != "release"
            and related(s.h, y_hyp)
        ):
            continue  # no swing between two related pulls on consecutive mornings
        out.append(Choice(s.h, t))
    if len(out) > 1 and y_hyp is not None:
        out = [c for c in out if c.hypothesis.id != y_hyp.id] or out
    return out


_STATE_RANK = {"weakening": 0, "split": 1, "emerging": 2, "live": 3}


def mornings_since(history: list[CarryNote], since: date, morning: date) -> int:
    """The mornings carried after ``since`` up to ``morning`` (itself included): the
    succession counts mornings the owner booted with, so a downtime after a release
    does not use up the new preference's turn, nor do the carries a catch-up wrote for it."""
    return 1 + sum(1 for n in history if n.seen and since < n.day < morning)


def choose(
    stories: list[Story],
    history: list[CarryNote],
    morning: date,
    yesterday: CarryNote | None,
    released: list[Hypothesis] | None = None,
) -> Choice | None:
    """The carry for ``morning`` (see the module docstring for the order).
    ``released``: hypotheses released lately, retired since or not (default: the
    released among ``stories``) — a belief related to one comes next."""
    # The new preference takes the released one's place: a belief related to one
    # released in the last few mornings comes next.
    released = [
        h
        for h in (released if released is not None else [s.h for s in stories])
        if h.released and mornings_since(history, h.released, morning) <= SUCCESSION_DAYS
    ]
    # ... even when it was carried often before the release (it had been winning while
    # the old belief turned): the release owes it one morning, whatever its share — a
    # morning the owner boots with, not one a catch-up wrote during a downtime.
    owed = frozenset(
        s.h.id
        for s in stories
        for r in released
        if r.id != s.h.id
        and related(s.h, r)
        and r.released is not None
        and not any(n.seen and n.hypothesis == s.h.id and n.day > r.released for n in history)
    )
    options = eligible(stories, history, morning, yesterday, owed)
    if not options:
        return None
    touched = {s.h.id for s in stories if s.supported_today or s.contradicted_today}
    last: dict[str, date] = {}
    for n in history:
        if n.hypothesis:
            last[n.hypothesis] = max(n.day, last.get(n.hypothesis, n.day))

    def rank(c: Choice) -> tuple[object, ...]:
        h = c.hypothesis
        seen = last.get(h.id)
        overdue = seen is None or (morning - seen).days >= WINDOW - 1
        unreleased = c.type == "release"
        successor = any(related(h, r) for r in released if r.id != h.id)
        return (
            not unreleased,
            not successor,
            not overdue,
            h.settled,
            h.id not in touched,
            seen or date.min,
            _STATE_RANK.get(h.state, 9),
            h.created,
            h.id,
        )

    return min(options, key=rank)
