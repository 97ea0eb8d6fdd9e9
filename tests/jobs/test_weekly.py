"""Weekly proposals (the rules floor, weakening, idempotence, its own week); no job writes Canon."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.errors import WriteDenied
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.jobs.weekly import proposal_id, run_weekly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.store import NARROWING
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import START, at, live_through, pending, proposals, state


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_more_contradiction_than_support_weakens_then_retires(root: MemoryRoot) -> None:
    hyp = add_hypothesis(root, "the user wants long explanations", ts=at(START, 8))
    live_through(root, 3, supports={hyp.id: [0]}, contradicts={hyp.id: [1, 2]})
    steps = [
        (r.data["previous"], r.data["hypothesis"]["state"])
        for r in EvidenceLog(root).iter_all()
        if r.kind == "hypothesis-state"
    ]
    # One contradicting day is not enough to weaken; the second is (distinct days count).
    assert steps == [("emerging", "emerging"), ("emerging", "emerging"), ("emerging", "weakening")]
    live_through_more = START + timedelta(days=3)
    Writer(root, "session").append(
        "friction", "too long again", contradicts=hyp.id, ts=at(live_through_more, 10)
    )
    run_nightly(root, live_through_more, now=at(live_through_more + timedelta(days=1), 3))
    assert state(root, hyp.id).state == "retired"
    assert proposals(root) == []


def test_weekly_and_monthly_are_idempotent(root: MemoryRoot) -> None:
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(START, 8))
    live_through(root, 14, supports={hyp.id: [3, 4, 5, 6, 10]})
    runner = CliRunner()
    sunday = (START + timedelta(days=13)).isoformat()
    again = runner.invoke(cli, ["run", "weekly", "--date", sunday])
    assert again.exit_code == 0
    prop_id = f"prop-{sunday}-{hyp.id}"
    assert again.output == (
        f"weekly week ending {sunday}: already done (nothing changed) (reflector: rules)\n"
        f"{prop_id}: add to habits: Give one answer, not a menu.\n"
        f"  evidence: {', '.join(proposals(root)[0].evidence_ids)}\n"
    )
    first = runner.invoke(cli, ["run", "monthly", "--date", "2026-11-01"])
    assert first.output == (
        "monthly proposals of 2026-10: done\n"
        "rev-2026-10-1: add to habits: Give one answer, not a menu.\n"
        "next: evolving-agent review list\n"
    )
    second = runner.invoke(cli, ["run", "monthly", "--date", "2026-11-01"])
    assert second.output.startswith("monthly proposals of 2026-10: already done (nothing changed)")
    # A later weekly run does not propose the same hypothesis again.
    next_sunday = START + timedelta(days=20)
    assert run_weekly(root, next_sunday, now=at(next_sunday, 23)).plan.proposals == []
    jobs = [r.data["job"] for r in EvidenceLog(root).iter_all() if r.kind == "job"]
    assert jobs.count("weekly") == 3 and jobs.count("monthly") == 1
    assert len(pending(root)) == 1


def test_jobs_cannot_write_canon(root: MemoryRoot) -> None:
    for actor in ("nightly", "weekly", "monthly"):
        with pytest.raises(WriteDenied):
            Writer(root, actor).write("canon", "identity.yaml", "name: Someone else\n")
    denied = [r for r in EvidenceLog(root).iter_all() if r.kind == "write-denied"]
    assert [r.actor for r in denied] == ["nightly", "weekly", "monthly"]
    assert len(list(git.Repo(root.path).iter_commits())) == 1  # only the init commit
    assert "Someone else" not in (root.canon / "identity.yaml").read_text()


def test_weekly_reads_only_its_week(root: MemoryRoot) -> None:
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(START, 8))
    live_through(root, 7, supports={hyp.id: [0, 1, 2, 3, 4]})
    sunday = START + timedelta(days=13)
    (root.evidence / f"{START - timedelta(days=1)}.jsonl").mkdir()  # unreadable, out of window
    result = run_weekly(root, sunday, now=at(sunday, 23))
    assert result.status == "done"
    data = json.loads((root.state / "runs" / f"weekly-{sunday}.json").read_text())
    assert data["phase"] == "done"


def test_a_proposal_id_is_its_week_and_hypothesis_and_a_narrowing_says_so() -> None:
    # One id rule for the reflection's proposals, the retirements and the narrowings:
    # review/glance.py reads the week back from characters 5 to 15.
    pid = proposal_id(date(2026, 11, 8), "h-3f2a")
    assert pid == "prop-2026-11-08-h-3f2a" and pid[5:15] == "2026-11-08"
    assert proposal_id(date(2026, 11, 8), "h-3f2a", NARROWING) == f"{pid}-narrowing"
