"""Which hypothesis is carried into today, and as which of the nine types.

One table (:data:`TYPE_TABLE`, stated for users in docs/cycle.md) says which types fit
a hypothesis, from *its own* story: its state, stakes, whether the day's evidence
touched it, whether it has a counter-move.  The rules reflector chooses with it and the
nightly job checks every reflector's answer against it.

Fair carry (:func:`eligible`, :func:`choose`): over any 14 mornings with at least 3
carriable hypotheses none is carried on more than 5 (under 40 %); a hypothesis is not
carried two mornings running while another can be; one not carried for 13 mornings
comes first; a weakening one is released before it may retire; one whose evidence
swings against yesterday's (:func:`in_tension`, the pendulum) waits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from evolving_agent.memory.ops.hypotheses import Hypothesis

WINDOW = 14  # mornings the fairness rule looks at
MAX_SHARE = 5  # at most this many of any WINDOW mornings for one hypothesis (< 40 %)
MIN_POOL = 3  # the share cap applies when at least this many are carriable
TENSION_DAYS = 14  # how far back the pendulum check looks


@dataclass(frozen=True)
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


Fit = Callable[[Story], bool]

# type → (fits when, in words for docs/cycle.md, the predicate).  Order = preference:
# the first fitting type this hypothesis used least recently wins.
TYPE_TABLE: tuple[tuple[str, str, Fit], ...] = (
    (
        "release",
        "weakening (contradicted on more days than supported), low stakes",
        lambda s: s.h.state == "weakening" and not s.high,
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
        "low stakes, and its evidence divides (split) or swings against another's, or it is "
        "weakening, or emerging and contradicted",
        lambda s: not s.high
        and (
            s.h.state in ("split", "weakening")
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
    """The types that fit, in table order."""
    return [t for t, _, fits in TYPE_TABLE if fits(story)]


@dataclass(frozen=True)
class CarryNote:
    """One past morning's carry (what fairness reads)."""

    day: date  # the morning it was for
    hypothesis: str | None
    type: str


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
    if story.h.state == "weakening" and story.h.released is None and "release" in fits:
        return "release"  # released at least once before it may retire
    order = {t: i for i, t in enumerate(fits)}
    return min(fits, key=lambda t: (used.get(t, date.min), order[t]))


def in_tension(a: Hypothesis, b: Hypothesis, day: date) -> bool:
    """The pendulum: over the last :data:`TENSION_DAYS` days, in the span where both
    were supported, each on ≥ 3 days, never on the same day, and they took turns day
    to day (a, b, a, b …: at least three swings, nearly every step one), as when "too
    long" and "not enough information" take turns."""
    return interleaved(set(a.supported_on), set(b.supported_on), day)


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


def taking_turns(a: Hypothesis, b: Hypothesis, morning: date) -> bool:
    """The pendulum starting: over the last 4 days each was supported only on days the
    other was not, and they took turns (a, b, a).  Too early to hold either from Canon,
    enough not to swing back to ``a`` the morning after ``b``."""
    since = morning - timedelta(days=4)
    sa = {d for d in a.supported_on if since <= d < morning}
    sb = {d for d in b.supported_on if since <= d < morning}
    if not sa or not sb or sa & sb:
        return False
    labels = [d in sa for d in sorted(sa | sb)]
    return sum(1 for x, y in zip(labels, labels[1:], strict=False) if x != y) >= 2


def tensions(pool: list[Hypothesis], day: date) -> dict[str, list[str]]:
    """Each hypothesis's tension partners (ids, sorted) among ``pool``."""
    out: dict[str, list[str]] = {h.id: [] for h in pool}
    for i, a in enumerate(pool):
        for b in pool[i + 1 :]:
            if in_tension(a, b, day):
                out[a.id].append(b.id)
                out[b.id].append(a.id)
    return {k: sorted(v) for k, v in out.items()}


@dataclass(frozen=True)
class Choice:
    hypothesis: Hypothesis
    type: str


def eligible(
    stories: list[Story], history: list[CarryNote], morning: date, yesterday: CarryNote | None
) -> list[Choice]:
    """The candidates fairness allows today, each with its type (unordered)."""
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
        if len(pool) >= MIN_POOL and counts.get(s.h.id, 0) >= MAX_SHARE:
            continue
        if (
            y_hyp is not None
            and y_hyp.id != s.h.id
            and (in_tension(s.h, y_hyp, morning) or taking_turns(s.h, y_hyp, morning))
        ):
            continue  # no swing between two pulls on consecutive mornings
        t = type_for(s, history, y_type)
        if t is not None:
            out.append(Choice(s.h, t))
    if len(out) > 1 and y_hyp is not None:
        out = [c for c in out if c.hypothesis.id != y_hyp.id] or out
    return out


_STATE_RANK = {"weakening": 0, "split": 1, "emerging": 2, "live": 3}


def choose(
    stories: list[Story],
    history: list[CarryNote],
    morning: date,
    yesterday: CarryNote | None,
) -> Choice | None:
    """The carry for ``morning`` (see the module docstring for the order)."""
    options = eligible(stories, history, morning, yesterday)
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
        unreleased = h.state == "weakening" and h.released is None
        return (
            not unreleased,
            not overdue,
            h.settled,
            h.id not in touched,
            seen or date.min,
            _STATE_RANK.get(h.state, 9),
            h.created,
            h.id,
        )

    return min(options, key=rank)
