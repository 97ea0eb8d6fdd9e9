"""The simulated month the demo runs, and --help on every command of the jobs."""

from __future__ import annotations

from datetime import date

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.memory.ops.hypotheses import check_register, list_hypotheses
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.models import PendingReview
from tests.helpers.fixtures import LivedMonth


def test_simulated_month_reaches_the_review_queue(lived_month: LivedMonth) -> None:
    # The session's lived month is simulate_month(init_root(...), 2026-10-01, 31).
    root, result, seen = MemoryRoot(lived_month.path), lived_month.result, lived_month.progress
    assert (result.start, result.days) == (date(2026, 10, 1), 31)
    assert len(result.carry_types) == 31
    types = [t for t in result.carry_types if t]
    assert all(a != b for a, b in zip(types, types[1:], strict=False))
    assert result.proposals and result.pending == ["rev-2026-10-1"]
    queued = PendingReview.model_validate_json(
        (root.area_dir("pending") / "rev-2026-10-1.json").read_bytes()
    )
    assert queued.hypothesis == result.hypotheses[0]
    states = {h.id: h.state for h in list_hypotheses(root)}
    assert [states[h] for h in result.hypotheses] == ["live", "retired", "split", "live"]
    assert len(result.raised) == 1 and states[result.raised[0]] == "emerging"
    assert check_register(root) == []
    report = verify_root(root)
    assert report.problems == []
    assert seen[-1] == "2026-10-31 monthly: 1 diff(s) queued for review"


@pytest.mark.parametrize(
    "args",
    [
        ["hypothesis"],
        ["hypothesis", "add"],
        ["hypothesis", "list"],
        ["hypothesis", "show"],
        ["run"],
        ["run", "nightly"],
        ["run", "weekly"],
        ["run", "monthly"],
        ["schedule"],
        ["schedule", "run"],
        ["schedule", "show"],
        ["schedule", "print-cron"],
    ],
)
def test_help(args: list[str]) -> None:
    res = CliRunner().invoke(cli, [*args, "--help"])
    assert res.exit_code == 0
    assert "Usage: cli " + " ".join(args) in res.output
    if len(args) > 1:
        assert "Example" in res.output
