"""The monthly queue: the rules floor, its limit from Canon policy, proposing removals."""

from __future__ import annotations

import json
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
    assert prop.evidence_ids == list(state(root, hyp.id).contradicts)
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


@pytest.mark.parametrize(
    ("claim", "in_canon"),
    [
        # fullwidth letter, Cyrillic "о" for Latin "o", doubled space, no full stop
        ("give one answer, not a menu", "Ｇive оne answer,  not a menu"),
        # a zero-width space and an ideographic full stop
        ("選択肢ではなく一つの答えを出す", "選択肢ではなく\u200b一つの答えを出す。"),
    ],
)
def test_no_card_is_queued_for_an_entry_already_in_canon(
    root: MemoryRoot, claim: str, in_canon: str
) -> None:
    """Invariant 9: the entry is in Canon already (the owner wrote it, in another
    spelling): the proposal queues no card, and the run says why it skipped it."""
    from tests.helpers.review import IDENTITY, set_identity

    set_identity(
        root, IDENTITY.replace("  - Say what I know", f"  - {in_canon}\n  - Say what I know")
    )
    h = add_hypothesis(root, claim, ts=at(START, 8))
    live_through(root, 14, supports={h.id: [1, 4, 8, 11, 13]})
    (prop,) = proposals(root)
    result = run_monthly(root, date(2026, 11, 1), now=at(date(2026, 11, 1), 4))
    assert result.plan.reviews == [] and pending(root) == []
    assert result.plan.skipped == [prop.id]


HIGH_RULE = ("Before a destructive command I ask first", "about to run rm -rf",
             "stop and ask before running it")  # fmt: skip
SPANISH_PUSHBACK = (
    "el usuario dijo que no hacía falta preguntar por rm -rf en su propio directorio "
    "temporal de compilación reproducible"
)


def _narrowed(root: MemoryRoot) -> tuple[Hypothesis, list[str]]:
    """A high-stakes rule supported for two weeks and contradicted on three days by
    long Spanish pushback: the weekly job's narrowing, queued by the monthly job."""
    rule = add_hypothesis(root, HIGH_RULE[0], when=HIGH_RULE[1], do=HIGH_RULE[2],
                          stakes="high", ts=at(START, 8))  # fmt: skip
    session = Writer(root, "session")
    against = [
        session.append("friction", f"{SPANISH_PUSHBACK} (día {i})", contradicts=rule.id,
                       ts=at(START + timedelta(days=i), 16)).id
        for i in (3, 9, 12)
    ]  # fmt: skip
    live_through(root, 14, supports={rule.id: [1, 4, 8, 11, 13]})
    run_monthly(root, date(2026, 11, 1), now=at(date(2026, 11, 1), 4))
    return rule, against


def test_a_narrowing_card_asks_the_owner_to_word_it_and_carries_no_friction(
    root: MemoryRoot,
) -> None:
    """Invariant 4: the proposed entry is the rule as it stands, whole — no quoted
    pushback, nothing cut mid-word — and approving it unworded is refused (exit 4,
    nothing written); worded by the owner, it is approved."""
    from evolving_agent.review.actions import edit_text, record_edit

    rule, against = _narrowed(root)
    (card,) = [r for r in pending(root) if r.proposals[0].endswith("-narrowing")]
    assert card.diff.text == f"When {HIGH_RULE[1]}: {HIGH_RULE[2]}"
    assert not any(w in card.diff.text for w in ("usuario", "compilación", "…", "("))
    assert "usuario" not in card.rationale and set(against) <= set(card.evidence_ids)
    head = git.Repo(root.path).head.commit.hexsha
    out = run_cli("--root", str(root.path), "review", "approve", card.id, "--yes")
    assert out.exit_code == 4, out.output
    assert "nobody has worded the narrower rule yet" in out.output
    assert f"review edit {card.id}" in out.output
    assert git.Repo(root.path).head.commit.hexsha == head
    assert not (root.area_dir("decisions") / f"{card.id}.json").exists()
    worded = "When about to run rm -rf outside my own build directory: stop and ask first"
    record_edit(root, card.id, edit_text(root, card.id).replace(card.diff.text, worded),
                editor="owner")  # fmt: skip
    ok = run_cli("--root", str(root.path), "review", "approve", card.id, "--yes")
    assert ok.exit_code == 0, ok.output
    assert worded in (root.canon / "identity.yaml").read_text()


def test_a_narrowing_of_a_rule_already_in_canon_narrows_that_entry(root: MemoryRoot) -> None:
    """The rule is in Canon's values in the owner's spelling: the card replaces that
    entry (once worded) instead of adding a second copy to habits."""
    from tests.helpers.review import IDENTITY, set_identity

    entry = f"When {HIGH_RULE[1]}:  {HIGH_RULE[2]}."  # the owner's spacing and full stop
    quoted = json.dumps(entry, ensure_ascii=False)
    set_identity(
        root, IDENTITY.replace("  - Say what I know", f"  - {quoted}\n  - Say what I know")
    )
    _narrowed(root)
    (card,) = [r for r in pending(root) if r.proposals[0].endswith("-narrowing")]
    assert (card.diff.section, card.diff.op, card.diff.old_text) == ("values", "replace", entry)
