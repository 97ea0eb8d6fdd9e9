"""Issue 30's invariants on generated lives: the daily words hold on any life.

Each example is a life from :func:`tests.helpers.lives.generate_life` (twelve languages,
known truth), lived through the real jobs with the rules reflector and graded by
:mod:`tests.helpers.grader`: every "the other way" quote is evidence against the carried
belief (1); tension only between related beliefs (2); a turned low-stakes belief is
released within N + 2 mornings, not ordered again until new support, and the new
preference takes its place (3); a high-stakes rule is never released or weakened (4's
bias half); a grounding older than 7 days says its age (5); a raised pattern without a
counter-move is only a watchpoint naming it, and an injected instruction is never
carried or quoted (6); the bias does not swing between a pendulum's sides (10's bias
half); every morning is framed in its owner's language.  Hypothesis draws the seeds:
20 lives, and 200 more in four quarters.
Every counter-example it shrank to is kept below as a plain regression test.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.grader import all_invariants, grade
from tests.helpers.lives import describe, generate_life, live_life
from tests.helpers.roots import fresh_root

SEEDS = st.integers(min_value=0, max_value=2**31 - 1)
SETTINGS = dict(
    deadline=None,  # a life is six to eight weeks of real jobs
    derandomize=True,  # the same lives on every run: a failure is a seed to keep
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def violations(seed: int, tmp: pytest.TempPathFactory) -> list[str]:
    life = generate_life(seed)
    lived = live_life(life, fresh_root(tmp.mktemp(f"life-{seed}") / "memory"))
    return all_invariants(grade(lived), lived)


def check(seed: int, tmp: pytest.TempPathFactory) -> None:
    bad = violations(seed, tmp)
    assert not bad, describe(generate_life(seed)) + "\n" + "\n".join(bad[:5])


@settings(max_examples=20, **SETTINGS)  # type: ignore[arg-type]
@given(seed=SEEDS)
def test_the_invariants_hold_on_twenty_generated_lives(
    seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    check(seed, tmp_path_factory)


# The 200 lives are four tests of 50 (a few minutes of one core each would otherwise be
# one worker's alone; conftest's SPLIT hands this file's tests out one by one).  Each
# quarter draws its own derandomized seeds; ``seed * SHARDS + shard`` keeps the four
# quarters' lives apart.
SHARDS = 4


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=200 // SHARDS, **SETTINGS)  # type: ignore[arg-type]
@given(seed=SEEDS)
def test_the_invariants_hold_on_two_hundred_generated_lives(
    shard: int, seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    check(seed * SHARDS + shard, tmp_path_factory)


# The counter-examples Hypothesis shrank to (each a seed: the life is the example),
# with what each showed before its fix.
COUNTER_EXAMPLES = {
    0: "inv 1/2: a new preference 'in tension' with a high-stakes rule by day alternation "
    "alone, quoting the rule's friction as 'the other way'; then inv 3: the turned "
    "preference released only in a downtime catch-up nobody booted",
    1: "inv 1/2: two unrelated beliefs alternating by chance held in tension, each quoting "
    "the other's friction; inv 3: a turned preference left in split, never released",
    2: "inv 10: after the tagged pendulum's swing its two sides carried on alternate "
    "mornings; inv 5: 8-11 day old quotes unlabelled",
    3: "inv 6: a raised pattern carried as experiment / vow with 'stop, and choose what the "
    "user asked for instead'; inv 3: release in a catch-up",
    4: "inv 2: a safety rule in tension with a raised pattern; inv 6: an injected "
    "instruction (Thai) raised and quoted as grounding",
    18: "inv 3: the old preference released, retired the next day, and the new preference "
    "not carried in the next 6 mornings",
    36: "inv 10 (the grader's own): a reversal's old and new preference read as a pendulum "
    "swing; following a change of mind is no swing",
    159: "inv 10: the tagged pendulum's other side carried the morning after, through the "
    "fallback choice that skipped the no-swing rule",
    163: "inv 10: the same, in another life (Russian, shared trigger)",
    91: "inv 3: the new preference not carried in the 6 mornings after the release — a "
    "downtime after the release used up the successor's turn (SUCCESSION_DAYS counted "
    "calendar days; now carried mornings, carry.mornings_since)",
    80328281: "inv 3: a turned Japanese preference not released within N + 2 mornings — "
    "it had reached the 40 % share cap, which held the release back (a release is owed "
    "once and is no pull: now exempt from the cap and from yesterday's relation)",
    9519: "inv 1: 'the other way' quoted an untagged Hindi note about something else "
    "(“उत्तर से पहले योजना लिखी; उपयोगकर्ता ने छोड़ दी”) read as support of 'the user wants "
    "short answers' for sharing 'user' and 'answer' — similarity now discounts that "
    "vocabulary in every language, not only English (similarity.content_grams)",
    # Found by bench_words over seeds 1000..1029 (this session):
    1001: "inv 1/2: two raised Korean patterns (a forgotten changelog, a plan the user "
    "skipped) held in tension for sharing the generic raised-pattern trigger, one quoted "
    "as the other's 'other way' — that trigger now relates nothing (carry._own_trigger)",
    1024: "inv 1/2: the same, in a Hebrew/Korean/German life",
    # Found by the 200-life search on a clean-clone CI run:
    140279: "inv 3: the new preference (a Hebrew 'the user wants every detail') had been "
    "carried 4 of the 7 mornings before the old one was released, so the share cap held "
    "it back for the 6 mornings after — a release now owes its successor one morning "
    "whatever its share (carry.choose's owed)",
    # Found by a 200-life search over another seed stream (the 200 lives split in four):
    54658: "inv 3: a turned Japanese preference was released on 24 March and four days of "
    "downtime followed; their catch-up nightlies carried its successor on 25 and 27 March, "
    "mornings nobody booted, and those carries paid what the release owed it and used up "
    "the succession — a catch-up's carry is now kept as not seen (CarryRecord.seen) and "
    "counts for neither",
}


@pytest.mark.parametrize("seed", sorted(COUNTER_EXAMPLES))
def test_a_counter_example_hypothesis_found_stays_fixed(
    seed: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    check(seed, tmp_path_factory)
