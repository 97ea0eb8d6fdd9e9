"""``search report`` against synthesised run directories shaped like the runner's output."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.errors import InvalidInput, NotFound
from evolving_agent.search.report import (
    best_so_far,
    edit_sizes,
    forget_starts,
    load_run,
    proposal_sizes,
    run_best_steps,
    spend_axis,
    tree_diff,
)
from evolving_agent.search.report_render import _zoomed_ylim, write_report
from evolving_agent.search.rundir import TurnRecord
from tests.helpers.report_runs import (
    SEED_SRC,
    forget_team_log,
    git,
    make_run,
    mark_improved,
    numbered,
    png_size,
    turn,
)


def test_cli_writes_png_markdown_html_and_prints_their_paths(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    result = CliRunner().invoke(cli, ["search", "report", str(run)])
    assert result.exit_code == 0, result.output
    # Newcomer snag: it printed three paths and nothing of what the report found.
    assert result.output == (
        "run-forget-team: policy forget-team, 18 turns, 2 forgets\n"
        "best 700 from a seed of 1000 (lower is better; gain 300, +30.0%)\n"
        f"plot:     {run / 'report.png'}\n"
        f"markdown: {run / 'report.md'}\n"
        f"page:     {run / 'report.html'}\n"
    )
    assert png_size(run / "report.png") == (1430, 550)
    md = (run / "report.md").read_text()
    assert "![best-so-far](report.png)" in md
    page = (run / "report.html").read_text()
    assert "<img alt='best-so-far' src='data:image/png;base64,iVBORw0KGgo" in page
    assert "<h2>Per round</h2>" in page and "two_opt" in page


def test_out_option_writes_elsewhere_and_leaves_run_dir_alone(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    out = tmp_path / "reports" / "a"
    result = CliRunner().invoke(cli, ["search", "report", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.md", "report.png"]
    assert not (run / "report.md").exists()


def test_markdown_has_per_round_gains_empty_counts_and_forget_edit_sizes(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    (run / "rounds" / "r02").mkdir(parents=True)
    (run / "rounds" / "r02" / "closed.json").write_text('{"reason": "plateau"}')
    md = write_report(run).markdown.read_text()
    # round | turns | empty | failed | unscored | denied | failed commands | start | end |
    # gain | gain % | cost | ended by
    assert "| 1 | 6 | 1 | 0 | 0 | 0 | 0 | 1000 | 900 | 100 | +10.0% | $0.0600 | — |" in md
    assert "| 2 | 6 | 2 | 0 | 0 | 0 | 0 | 900 | 700 | 200 | +22.2% | $0.0600 | plateau |" in md
    # 699.8 is within the noise floor of 700: the run kept 700, and so does the report.
    # The turn the scorer gave no number is unscored, not failed: its agent did not fail.
    assert "| 3 | 6 | 0 | 0 | 1 | 0 | 0 | 700 | 700 | 0 | +0.0% | $0.0600 | — |" in md
    # Every session has under 10 non-empty proposals: all are "fresh".  Pooled sizes
    # 30,4 20,6,3 40,12 44,8 50,10,3 60,9,4 -> median 10; the 3 empty turns left out.
    assert "| first 10 of a fresh session | 6 | 15 | 10 |" in md
    assert "| next 10 of the continued session | 0 | 0 | — |" in md
    assert "3 empty turn(s) are left out" in md
    assert "| 2 | 6 | rounds |" in md and "| 3 | 12 | plateau |" in md
    assert "| improvement over seed | 300 (+30.0%) |" in md
    assert "| rounds | 3 of 3 planned |" in md
    assert "| spend axis | cost (USD) |" in md


def test_best_candidate_diff_against_the_seed_commit(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    seed_commit = json.loads((run / "seed.json").read_text())["commit"]
    md = write_report(run).markdown.read_text()
    # Only the seed commit counts, not the later candidate committed on top of it.
    assert f"1 file(s) differ from the seed commit {seed_commit[:12]}." in md
    assert "--- seed/solver.py\n+++ best/solver.py\n" in md
    assert "-    return list(range(len(points)))\n+    order = nearest_neighbour(points)\n" in md
    assert "README.md" not in md.split("```diff")[1]


def test_seed_falls_back_to_the_runs_candidate_directory(tmp_path: Path) -> None:
    cand = tmp_path / "candidate"
    cand.mkdir()
    (cand / "solver.py").write_text(SEED_SRC)
    (cand / "README.md").write_text("TSP solver\n")
    run = make_run(tmp_path, keep_seed=False, candidate=cand)
    report = load_run(run)
    assert report.diff.files_changed == 1
    assert f"the run's --candidate directory {cand}" in report.diff.note


def test_missing_seed_is_reported_not_fatal(tmp_path: Path) -> None:
    run = make_run(tmp_path, keep_seed=False)
    result = CliRunner().invoke(cli, ["search", "report", str(run)])
    assert result.exit_code == 0, result.output
    md = (run / "report.md").read_text()
    assert "the seed candidate is not available" in md
    assert "```diff" not in md


def test_team_and_agent_curves_are_best_so_far_in_the_runs_direction(tmp_path: Path) -> None:
    report = load_run(make_run(tmp_path))
    assert report.team.turns[:4] == [0, 1, 2, 3]
    assert report.team.values == [
        1000,
        950,
        950,
        940,
        900,
        900,
        900,
        850,
        850,
        700,
        700,
        700,
        700,
        700,
        700,
        700,
        700,
        700,
        700,
    ]
    agent1 = report.agent_curves[1]
    assert agent1.label == "agent 2"
    assert agent1.turns == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]
    # The failed turn (score null) at turn 14 keeps the agent's previous best.
    assert agent1.values == [1000, 980, 900, 900, 880, 790, 720, 720, 720, 699.8]
    assert [f.at_turn for f in report.forgets] == [6, 12]


def test_maximising_run_counts_higher_scores_as_gains(tmp_path: Path) -> None:
    recs = [turn(1, 1, 1, 0.5), turn(1, 1, 2, 0.4), turn(2, 1, 3, 0.8, forget="plateau")]
    mark_improved(recs, 0.25, 0.0, minimize=False)
    run = make_run(
        tmp_path,
        recs,
        summary={
            "best_score": 0.8,
            "policy": "forget",
            "turns": 3,
            "cost_usd": 0.03,
            "seed_score": 0.25,
            "direction": "maximize",
        },
    )
    report = load_run(run)
    assert report.team.values == [0.25, 0.5, 0.5, 0.8]
    assert [(r.gain, r.gain_pct) for r in report.rounds] == [
        (0.25, 100.0),
        (pytest.approx(0.3), pytest.approx(60.0)),
    ]
    assert [(f.at_turn, f.reason) for f in report.forgets] == [(2, "plateau")]


def test_spend_axis_falls_back_from_dollars_to_tokens_to_wall_time() -> None:
    paid = [TurnRecord.model_validate(turn(1, 1, i, 1.0, cost=0.5)) for i in (1, 2)]
    assert (spend_axis(paid).kind, spend_axis(paid).cumulative) == ("cost_usd", [0.5, 1.0])
    free = [TurnRecord.model_validate(turn(1, 1, i, 1.0, cost=0.0)) for i in (1, 2)]
    axis = spend_axis(free)
    assert (axis.kind, axis.label, axis.cumulative) == (
        "tokens",
        "tokens (input + output)",
        [1200.0, 2400.0],
    )
    silent = [
        TurnRecord.model_validate(
            turn(1, 1, i, 1.0, cost=0.0, input_tokens=None, output_tokens=0, wall_s=i)
        )
        for i in (1, 2)
    ]
    axis = spend_axis(silent)
    assert (axis.kind, axis.cumulative) == ("wall_s", [1.0, 3.0])
    assert "wall time" in axis.label


def test_forgets_come_from_round_changes_when_the_log_never_mentions_them() -> None:
    raw = [turn(r, 1, i, 1.0) for r, i in ((1, 1), (1, 2), (2, 3), (3, 4))]
    for rec in raw:
        del rec["forget"]
    records = [TurnRecord.model_validate(r) for r in raw]
    assert forget_starts(records) == [(2, "round 2"), (3, "round 3")]
    # A log that records forgets but has none (e.g. `team` over rounds) marks nothing.
    marked = [TurnRecord.model_validate(turn(r, 1, i, 1.0)) for r, i in ((1, 1), (2, 2))]
    assert forget_starts(marked) == []


def test_edit_sizes_are_fresh_proposals_against_the_same_sessions_next_ones() -> None:
    # Session A: 5 proposals and an empty turn; session B (another round): 3 proposals.
    a = [turn(1, 1, i, 1.0, lines=n) for i, n in enumerate([50, 40, 0, 3, 2, 1])]
    a[2] = turn(1, 1, 2, 1.0, empty=True)
    b = [turn(2, 1, 10 + i, 1.0, lines=n) for i, n in enumerate([30, 20, 4])]
    records = [TurnRecord.model_validate(r) for r in numbered(a + b)]
    sizes = [r.lines_changed or 0 for r in records]
    got = edit_sizes(records, sizes, window=2)
    # fresh: A's 50, 40 and B's 30, 20 -> 35; continued: A's 3, 2 and B's 4 -> 3.
    assert (got.fresh_n, got.median_fresh) == (4, 35.0)
    assert (got.continued_n, got.median_continued) == (3, 3.0)
    assert (got.sessions, got.continued_sessions, got.excluded_empty) == (2, 2, 1)
    # A turn that only adopted a visible candidate (own size 0) is no proposal either.
    sizes[0] = 0
    adopted = edit_sizes(records, sizes, window=2)
    assert (adopted.excluded_empty, adopted.pure_adoptions) == (1, 1)
    assert (adopted.fresh_n, adopted.median_fresh) == (4, 25.0)  # 40, 3 | 30, 20


def test_adopting_a_peers_candidate_is_not_an_edit(tmp_path: Path) -> None:
    """Agent 2 copies agent 1's 40-line rewrite and changes one line: one line of its own."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "s.py").write_text("".join(f"x{i} = 0\n" for i in range(40)))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "s.py").write_text("".join(f"y{i} = 1\n" for i in range(40)))
    git(repo, "commit", "-qam", "agent 1 rewrites")
    peer = git(repo, "rev-parse", "HEAD")
    (repo / "s.py").write_text("".join(f"y{i} = 1\n" for i in range(39)) + "y39 = 2\n")
    git(repo, "commit", "-qam", "agent 2 adopts and nudges")
    mine = git(repo, "rev-parse", "HEAD")
    records = [
        TurnRecord.model_validate(r)
        for r in numbered(
            [
                turn(1, 1, 1, 90.0, lines=80, commit=peer, base_commit=base),
                turn(1, 2, 1, 89.0, lines=80, commit=mine, base_commit=base),
            ]
        )
    ]

    def numstat(_round: int, a: str, b: str) -> int | None:
        out = git(repo, "diff", "--numstat", a, b)
        return sum(int(x) + int(y) for x, y, _ in (row.split("\t") for row in out.splitlines()))

    sizes, adopted = proposal_sizes(
        records, minimize=True, share_peers=True, same_repo=False, numstat=numstat
    )
    assert (sizes, adopted) == ([80, 2], 1)  # one line replaced: 1 added + 1 deleted
    alone, none = proposal_sizes(
        records, minimize=True, share_peers=False, same_repo=False, numstat=numstat
    )
    assert (alone, none) == ([80, 80], 0)


def test_best_so_far_ignores_failed_candidates_without_a_seed_score() -> None:
    # An older log without ``improved``: the report judges scores itself.
    raw = [turn(1, 1, i, s) for i, s in enumerate([None, 5.0, float("nan"), 3.0])]
    for rec in raw:
        del rec["improved"]
    records = [TurnRecord.model_validate(r) for r in raw]
    curve = best_so_far(records, [1, 2, 3, 4], minimize=True, seed_score=None, label="team")
    assert (curve.turns, curve.values) == ([2, 3, 4], [5.0, 5.0, 3.0])


def test_the_team_curve_follows_the_runs_improved_marks() -> None:
    """A score better by less than the noise floor did not move the run's best."""
    raw = numbered([turn(1, 1, 1, 90.0), turn(1, 1, 2, 89.9), turn(1, 1, 3, 80.0)])
    mark_improved(raw, 100.0, floor=0.5)
    records = [TurnRecord.model_validate(r) for r in raw]
    curve = best_so_far(records, [1, 2, 3], minimize=True, seed_score=100.0, label="team")
    assert curve.values == [100.0, 90.0, 90.0, 80.0]
    assert run_best_steps(records, 100.0, minimize=True) == [100.0, 90.0, 90.0, 80.0]


def test_tree_diff_reports_added_removed_and_binary_files(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / ".git").mkdir(parents=True)
        (d / ".git" / "HEAD").write_text(f"ref {d.name}\n")
    (a / "gone.txt").write_text("x\n")
    (b / "new.txt").write_text("y")
    (a / "blob.bin").write_bytes(b"\xff\x00")
    (b / "blob.bin").write_bytes(b"\xfe\x00")
    text, changed = tree_diff(a, b)
    assert changed == 3
    assert "Binary files seed/blob.bin and best/blob.bin differ\n" in text
    assert "--- seed/gone.txt\n+++ /dev/null\n" in text
    assert "+y\n\\ No newline at end of file\n" in text
    assert "HEAD" not in text


def test_log_order_follows_seq_not_file_order(tmp_path: Path) -> None:
    recs = forget_team_log()
    shuffled = recs[:]
    random.Random(3).shuffle(shuffled)
    assert shuffled != recs
    report = load_run(make_run(tmp_path, shuffled))
    assert [r.seq for r in report.records] == list(range(1, 19))
    assert report.team.values[-1] == 700


def test_unfinished_run_without_summary_uses_run_json_and_seed_json(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    (run / "summary.json").unlink()
    (run / "seed.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "commit": "c" * 40,
                "scores": [999.0, 1001.0],
                "score": 1000.0,
                "noise_floor": 2.0,
            }
        )
    )
    with (run / "log.jsonl").open("a") as fh:
        fh.write('{"round": 3, "agent": 0, "tu')  # the runner died mid-append
    report = load_run(run)
    assert report.minimize is True
    assert len(report.records) == 18
    assert report.best_score == 700  # 699.8 was within the noise floor: not an improvement
    assert (report.seed_score, report.noise_floor) == (1000.0, 2.0)
    assert report.rounds[0].gain == 100
    assert "no summary.json" in report.warnings[0]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda run: None, "error: run directory not found: {run}/nope\n"),
        (
            lambda run: (run / "log.jsonl").unlink(),
            "error: {run}: not a search run directory (no log.jsonl)\n",
        ),
        (
            lambda run: (run / "log.jsonl").write_text('{"round": 1}\nnot json\n{"round": 2}\n'),
            "error: {run}/log.jsonl:1: bad record: seq: Field required\n",
        ),
        (
            lambda run: (run / "log.jsonl").write_text(
                json.dumps(turn(1, 1, 1, 3.0)) + "\n{oops\n" + json.dumps(turn(1, 1, 2, 2.0))
            ),
            "error: {run}/log.jsonl:2: not valid JSON: Expecting property name enclosed in "
            "double quotes\n",
        ),
        (
            lambda run: (run / "log.jsonl").write_text("\n\n"),
            "error: {run}/log.jsonl: no turns recorded\n",
        ),
        (
            lambda run: (run / "summary.json").write_text("{"),
            "error: {run}/summary.json:1: not valid JSON: Expecting property name enclosed in "
            "double quotes\n",
        ),
        (
            lambda run: (run / "log.jsonl").write_text(
                json.dumps(turn(1, 1, 1, 3.0))
                + "\n"
                + json.dumps(turn(1, 1, 2, 2.0, schema_version=2))
                + "\n"
            ),
            "error: {run}/log.jsonl:2: schema_version 2 is newer than this report understands "
            "(1); upgrade evolving-agent\n",
        ),
        (
            lambda run: (run / "summary.json").write_text('{"seed_score": "high"}'),
            "error: {run}/summary.json: seed_score: expected a number, got 'high'\n",
        ),
    ],
)
def test_missing_or_corrupt_run_dir_is_one_line_exit_4(
    tmp_path: Path, damage: Any, message: str
) -> None:
    run = make_run(tmp_path)
    damage(run)
    target = run / "nope" if "nope" in message else run
    result = CliRunner().invoke(cli, ["search", "report", str(target)])
    assert result.exit_code == 4
    assert result.output == message.format(run=run)


def test_core_raises_named_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        load_run(tmp_path / "none")
    run = make_run(tmp_path, summary={"policy": "single"})
    (run / "run.json").write_text("{}")
    with pytest.raises(InvalidInput, match="cannot tell whether lower or higher"):
        load_run(run)


def test_plot_zooms_past_a_seed_far_worse_than_every_candidate(tmp_path: Path) -> None:
    far = make_run(tmp_path / "far", summary={"seed_score": 99000.0, "direction": "minimize"})
    assert _zoomed_ylim(load_run(far)) == pytest.approx((699.8 - 0.08 * 280.2, 980 + 0.08 * 280.2))
    near = make_run(tmp_path / "near")
    assert _zoomed_ylim(load_run(near)) is None


@pytest.mark.parametrize("command", ["report", "compare"])
def test_help_shows_an_example(command: str) -> None:
    result = CliRunner().invoke(cli, ["search", command, "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output
    assert f"evolving-agent search {command} " in result.output
