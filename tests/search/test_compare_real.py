"""``search compare`` for real: the tsp-example agent on the bundled TSP example."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from evolving_agent.cli import cli
from tests.helpers.search import PY, TSP


def test_compare_baselines_and_plateau_forgetting_with_the_builtin_agent(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    result = CliRunner().invoke(
        cli,
        [
            "search",
            "compare",
            "--candidate",
            str(TSP / "candidate"),
            "--task",
            str(TSP / "task.md"),
            "--score",
            f"{PY} {TSP / 'score.py'}",
            "--minimize",
            "--agent",
            "tsp-example",
            "--policies",
            "single,parallel,forget-team+plateau",
            "--forget-on-plateau",
            "2",
            "--agents",
            "2",
            "--rounds",
            "2",
            "--turns",
            "4",
            "--repeats",
            "2",
            "--out",
            str(out),
        ],
    )

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "| policy | agents × rounds | runs | best (mean ± sd) | 95% CI | vs single "
        "| vs parallel | mean tokens | mean turns |"
    )
    number = r"\d+(\.\d+)?"
    ci = rf"\[{number}, {number}\]"
    vs = r"[+-]\d+\.\d+% \[[+-]\d+\.\d+, [+-]\d+\.\d+\] p=\d\.\d+"
    assert re.fullmatch(
        rf"\| single \| 1 × 1 \| 2 \| {number} ± {number} \| {ci} \| — \| {vs} "
        rf"\| \d+ \| 4 \|",
        lines[2],
    ), lines[2]
    assert re.fullmatch(
        rf"\| parallel \| 2 × 1 \| 2 \| {number} ± {number} \| {ci} \| {vs} \| — "
        rf"\| \d+ \| 4 \|",
        lines[3],
    ), lines[3]
    assert re.fullmatch(
        rf"\| forget-team\+plateau \| 2 × 2 \| 2 \| {number} ± {number} \| {ci} \| {vs} "
        rf"\| {vs} \| \d+ \| 4 \|",
        lines[4],
    ), lines[4]
    assert lines[5:] == [
        "",
        str(out / "compare.md"),
        str(out / "compare.json"),
        str(out / "compare.png"),
    ]
    png = (out / "compare.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    progress = result.stderr.splitlines()
    assert progress[0] == "[1/6] single seed 0: running ..."
    assert re.fullmatch(
        r"\[6/6\] forget-team\+plateau seed 1: best \d+(\.\d+)? \(4 turns, \$0\.0000, "
        r"\d+\.\d s\)",
        progress[-1],
    ), progress[-1]

    data = json.loads((out / "compare.json").read_text())
    assert data["complete"] is True and data["direction"] == "minimize"
    runs = data["runs"]
    assert [(r["policy"], r["seed"]) for r in runs] == [
        ("single", 0),
        ("parallel", 0),
        ("forget-team+plateau", 0),
        ("single", 1),
        ("parallel", 1),
        ("forget-team+plateau", 1),
    ]
    for r in runs:
        assert r["turns"] == 4 and r["best_score"] < r["seed_score"]
        assert (Path(r["run_dir"]) / "log.jsonl").is_file()
        # The TSP scorer is deterministic: the re-scored best is the search-time best.
        assert r["best_rescored"] == r["best_score"]
        run_json = json.loads((Path(r["run_dir"]) / "run.json").read_text())
        assert run_json["forget_on_plateau"] == (2 if r["policy"].endswith("+plateau") else None)
    # Each row's "vs single" follows from the means: lower tour length = positive gain.
    rows = {row["policy"]: row for row in data["rows"]}
    single = rows["single"]["mean"]
    for row in data["rows"]:
        if row["policy"] != "single":
            assert abs(row["vs"]["single"] - (single - row["mean"]) / single * 100) < 1e-9
    assert (out / "compare.md").read_text().endswith("\n".join(lines[:5]) + "\n")
