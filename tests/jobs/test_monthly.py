"""The monthly queue: the rules floor, its limit from Canon policy, proposing removals."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import git
import pytest

from evolving_agent.jobs.monthly import held_line, run_monthly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import Hypothesis, add_hypothesis
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import START, at, live_through, pending, proposals, state


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_rules_floor_reaches_the_monthly_queue(root: MemoryRoot) -> None:
    floor = add_hypothesis(root, "give one answer, not a menu", ts=at(START, 8))
    short = add_hypothesis(root, "use tables for comparisons", ts=at(START, 8))
    spoilt = add_hypothesis(root, "skip the greeting", ts=at(START, 8))
    tolerant = add_hypothesis(root, "name the file first", ts=at(START, 8))
    live_through(
        root,
        21,
        supports={
            floor.id: [1, 4, 8, 11, 13],  # 5 distinct days in 2 calendar weeks
            short.id: [1, 4, 8, 11],  # only 4
            spoilt.id: [0, 2, 4, 6, 8, 10],  # 6 days, but contradicted on 2 (a third)
            tolerant.id: [0, 2, 4, 6, 8, 10],  # 6 days, contradicted once: a minority
        },
        contradicts={spoilt.id: [9, 12], tolerant.id: [12]},
    )
    assert state(root, spoilt.id).state == "split"
    props = proposals(root)
    assert {p.hypothesis for p in props} == {floor.id, tolerant.id}
    prop = next(p for p in props if p.hypothesis == floor.id)
    assert prop.diff.section == "habits" and prop.diff.op == "add"
    assert prop.diff.text == "Give one answer, not a menu."
    cited = EvidenceLog(root).find(set(prop.evidence_ids))
    assert len(cited) == 5 and all(r.supports == floor.id for r in cited.values())
    head = git.Repo(root.path).head.commit.hexsha
    result = run_monthly(root, date(2026, 11, 1), now=at(date(2026, 11, 1), 4))
    queue = [r for r in pending(root) if r.hypothesis == floor.id]
    assert len(result.plan.reviews) == len(pending(root)) == 2
    assert queue[0].hypothesis == floor.id
    assert queue[0].proposals == [prop.id]
    assert queue[0].evidence_ids == prop.evidence_ids
    assert git.Repo(root.path).head.commit.hexsha == head  # Canon untouched


def four_supported_habits(root: MemoryRoot) -> list[Hypothesis]:
    """Four hypotheses, each supported on five days of two weeks: four weekly proposals."""
    hyps = [
        add_hypothesis(root, f"habit number {name}", ts=at(START, 8))
        for name in ("one", "two", "three", "four")
    ]
    live_through(root, 14, supports={h.id: [3, 4, 5, 6, 10] for h in hyps})
    assert len(proposals(root)) == 4
    return hyps


def test_monthly_limit_comes_from_canon_policy(root: MemoryRoot) -> None:
    four_supported_habits(root)
    policy = root.canon / "policy.yaml"
    text = policy.read_text().replace("monthly_limit: 3", "monthly_limit: 2")
    assert "monthly_limit: 2" in text
    Writer(root, "human").write("canon", "policy.yaml", text)
    result = run_monthly(root, date(2026, 11, 1), now=at(date(2026, 11, 1), 4))
    assert result.plan.limit == 2
    assert [r.id for r in pending(root)] == ["rev-2026-10-1", "rev-2026-10-2"]
    assert len(result.plan.deferred) == 2 and result.plan.skipped == []
    # Over the limit is not dropped: the two wait for next month's queue.
    later = run_monthly(root, date(2026, 12, 1), now=at(date(2026, 12, 1), 4))
    assert [r.id for r in later.plan.reviews] == ["rev-2026-11-1", "rev-2026-11-2"]
    assert {r.proposals[0] for r in later.plan.reviews} == set(result.plan.deferred)


def test_default_limit_is_three(root: MemoryRoot) -> None:
    hyps = [
        add_hypothesis(root, f"habit number {name}", ts=at(START, 8))
        for name in ("one", "two", "three", "four", "five")
    ]
    live_through(root, 14, supports={h.id: [3, 4, 5, 6, 10] for h in hyps})
    run_monthly(root, date(2026, 11, 1), now=at(date(2026, 11, 1), 4))
    assert len(pending(root)) == 3


def test_a_retired_hypothesis_in_canon_proposes_its_removal(root: MemoryRoot) -> None:
    from evolving_agent.memory.ops.hypotheses import mark_canon

    hyp = add_hypothesis(root, "the user wants long explanations", ts=at(START, 8))
    mark_canon(root, hyp.id, "Explain at length.", "rev-2026-09-1", ts=at(START, 9))
    live_through(root, 7, supports={}, contradicts={hyp.id: [1, 3, 5]})
    assert state(root, hyp.id).state == "retired"
    (prop,) = proposals(root)
    assert prop.hypothesis == hyp.id
    assert (prop.diff.op, prop.diff.old_text) == ("remove", "Explain at length.")
    assert prop.evidence_ids == state(root, hyp.id).contradicts
    result = run_monthly(root, date(2026, 11, 1), now=at(date(2026, 11, 1), 4))
    assert [r.diff.op for r in result.plan.reviews] == ["remove"]


@pytest.mark.slow
def test_a_hypothesis_the_drift_watch_holds_waits_out_of_the_queue(root: MemoryRoot) -> None:
    from evolving_agent.review.hold import acknowledge, holds

    hyps = four_supported_habits(root)
    held = hyps[1]
    # The essay's pendulum on one of them, late in October (still in December's window).
    session = Writer(root, "session")
    swings = [
        session.append(
            "friction",
            "The answer was too long." if i % 2 == 0 else "Not enough information.",
            supports=held.id,
            ts=at(date(2026, 10, 20) + timedelta(days=i), 15),
        ).id
        for i in range(10)
    ]
    result = run_monthly(root, date(2026, 11, 1), now=at(date(2026, 11, 1), 4))
    # Held out, and it takes none of the month's room: the other three are queued.
    assert sorted(r.hypothesis for r in result.plan.reviews) == sorted(
        h.id for h in hyps if h is not held
    )
    assert result.plan.deferred == []
    (kept,) = result.plan.held
    assert kept.hypothesis == held.id
    assert kept.proposals == [p.id for p in proposals(root) if p.hypothesis == held.id]
    assert [(f.kind, f.evidence_ids) for f in kept.flags] == [("pendulum", swings)]
    record = next(
        r for r in EvidenceLog(root).iter_all() if r.kind == "job" and r.data["job"] == "monthly"
    )
    assert record.data["held"][0]["flags"][0]["evidence_ids"] == swings
    assert f"{held.id} held by the drift watch (pendulum: friction swung 9 times" in record.text
    assert f"until 'evolving-agent drift ack {held.id}'" in record.text
    shown = run_cli("--root", str(root.path), "run", "monthly", "--date", "2026-11-01")
    assert f"held: {held_line(kept)}" in shown.output.splitlines()  # the run's report says so
    # Still held a month later until the human looks; then the next run queues it.
    assert held.id in holds(root, until=date(2026, 12, 1))
    acknowledge(root, held.id, by="owner")
    later = run_monthly(root, date(2026, 12, 1), now=at(date(2026, 12, 1), 4))
    assert [r.hypothesis for r in later.plan.reviews] == [held.id] and later.plan.held == []
