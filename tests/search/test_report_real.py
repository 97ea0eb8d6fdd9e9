"""``search report`` on a real run: the tsp-example agent on the bundled TSP example."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.report import load_run
from evolving_agent.search.report_render import write_report
from evolving_agent.search.runner import run_search
from tests.helpers.search import PY, TSP


def test_report_of_a_real_forget_team_run_on_the_bundled_example(tmp_path: Path) -> None:
    run = tmp_path / "run"
    summary = run_search(
        SearchConfig(
            candidate=TSP / "candidate",
            task=TSP / "task.md",
            score_cmd=f"{PY} {TSP / 'score.py'}",
            minimize=True,
            agent="tsp-example",
            policy="forget-team",
            agents=2,
            rounds=2,
            turns=6,
            seed=1,
            out=run,
            workdir=tmp_path,
        )
    )

    result = CliRunner().invoke(cli, ["search", "report", str(run)])

    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "run: policy forget-team, 6 turns, 1 forget"
    assert lines[1].startswith("best ") and "(lower is better; gain " in lines[1]
    assert lines[2:] == [
        f"plot:     {run / 'report.png'}",
        f"markdown: {run / 'report.md'}",
        f"page:     {run / 'report.html'}",
    ]
    data = (run / "report.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1430, 550)
    report = load_run(run)
    # The tsp-example agent reports tokens and no dollars.
    assert report.spend.kind == "tokens"
    assert report.team.values[0] == summary.seed_score
    assert report.team.values[-1] == summary.best_score
    assert [(f.round, f.at_turn, f.reason) for f in report.forgets] == [(2, 4, "rounds")]
    # 3 turns per agent, split over 2 rounds with the remainder first.
    assert [(r.round, r.turns) for r in report.rounds] == [(1, 4), (2, 2)]
    assert sum(r.empty for r in report.rounds) == summary.empty_turns
    assert [c.label for c in report.agent_curves] == ["agent 1", "agent 2"]
    # The seed is the one commit of round 1's repository: the naive index-order solver.
    assert report.diff.note.startswith("1 file(s) differ from the seed commit ")
    assert report.diff.text is not None
    assert '-CONSTRUCTION = "index"\n' in report.diff.text
    md = (run / "report.md").read_text()
    assert "| policy | forget-team |" in md and "| spend axis | tokens (input + output) |" in md
    assert "| 2 | 4 | rounds |" in md
    page = (run / "report.html").read_text()
    assert "data:image/png;base64," in page and "CONSTRUCTION" in page


def test_report_of_a_plateau_forgetting_run_agrees_with_the_run(tmp_path: Path) -> None:
    """Rounds end early on a plateau and hand their turns on: the report counts the rounds
    that ran, says how many were planned, and its per-round table is the run's."""
    run = tmp_path / "run"
    summary = run_search(
        SearchConfig(
            candidate=TSP / "candidate",
            task=TSP / "task.md",
            score_cmd=f"{PY} {TSP / 'score.py'}",
            minimize=True,
            agent="tsp-example",
            policy="forget",
            rounds=2,
            turns=12,
            forget_on_plateau=2,
            seed=3,
            out=run,
            workdir=tmp_path,
        )
    )
    report = load_run(run)
    ran = sorted({r.round for r in report.records})
    assert summary.rounds == len(ran) == len(report.rounds) > 2  # more than planned
    assert report.rounds_planned == 2 and report.forget_on_plateau == 2
    # Why each round ended is what the runner wrote, and the next round's forget says so.
    for stats, forget in zip(report.rounds, report.forgets, strict=False):
        assert (
            stats.ended
            == json.loads((run / "rounds" / f"r{stats.round:02d}" / "closed.json").read_text())[
                "reason"
            ]
        )
        assert forget.round == stats.round + 1 and forget.reason == stats.ended
    assert sum(r.turns for r in report.rounds) == summary.turns == 12
    assert report.rounds[-1].end_best == summary.best_score == report.team.values[-1]
    assert report.best_rescored == summary.best_rescored
    md = write_report(run).markdown.read_text()
    assert f"| rounds | {len(ran)} (2 planned; plateau forgetting after 2 turns" in md
    assert "| best re-scored |" in md
    # Each round is one fresh session of the one agent.
    assert report.edits.sessions == len(ran) - sum(
        1 for n in ran if all(r.empty for r in report.records if r.round == n)
    )
