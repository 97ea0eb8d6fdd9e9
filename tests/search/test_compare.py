"""``compare_policies`` with a small fake runner: budgets, seeds, statistics, outputs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.search.compare import (
    PolicySpec,
    Progress,
    compare_policies,
    format_table,
    parse_policies,
    policy_specs,
    relative_gain,
    shape,
)
from evolving_agent.search.config import SearchConfig
from tests.helpers.compare_fakes import FakeRunner, FakeSummary, base_config


def test_every_policy_gets_the_same_turn_budget_and_the_same_seeds(tmp_path: Path) -> None:
    runner = FakeRunner({p: [1.0, 2.0] for p in ("single", "parallel", "forget-team")})
    base = base_config(tmp_path, agents=4, rounds=3, turns=48, seed=7, budget_usd=2.0)
    compare_policies(
        base,
        policies=["single", "parallel", "forget-team"],
        repeats=2,
        out=tmp_path / "c",
        run=runner,
        plot=False,
    )
    got = [(c.policy, c.agents, c.rounds, c.turns, c.seed, c.budget_usd) for c in runner.calls]
    assert got == [
        ("single", 1, 1, 48, 7, 2.0),
        ("parallel", 4, 1, 48, 7, 2.0),
        ("forget-team", 4, 3, 48, 7, 2.0),
        ("single", 1, 1, 48, 8, 2.0),
        ("parallel", 4, 1, 48, 8, 2.0),
        ("forget-team", 4, 3, 48, 8, 2.0),
    ]
    assert runner.calls[4].out == tmp_path / "c" / "parallel" / "seed-8"
    assert runner.calls[0].task == tmp_path / "task.md"


def test_table_is_mean_sd_and_improvement_over_references_when_maximising(
    tmp_path: Path,
) -> None:
    runner = FakeRunner(
        {
            "single": [10.0, 12.0, 14.0],  # mean 12, sd 2
            "parallel": [14.0, 15.0, 16.0],  # mean 15, sd 1
            "forget-team": [16.5, 16.5, 16.5],  # mean 16.5, sd 0
        }
    )
    result = compare_policies(
        base_config(tmp_path, agents=4, rounds=3, turns=24, seed=7),
        policies=["single", "parallel", "forget-team"],
        repeats=3,
        out=tmp_path / "c",
        run=runner,
        plot=False,
    )
    # The bootstrap interval of three values' mean reaches their extremes (each is drawn
    # three times with probability 1/27 > 2.5%); 3 vs 3 splits 20 ways, so p >= 0.1.
    assert format_table(result) == (
        "| policy | agents × rounds | runs | best (mean ± sd) | 95% CI | vs single "
        "| vs parallel | mean tokens | mean turns |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| single | 1 × 1 | 3 | 12 ± 2 | [10, 14] | — | -20.0% [-33.3, -6.7] p=0.20 "
        "| 2407 | 24 |\n"
        "| parallel | 4 × 1 | 3 | 15 ± 1 | [14, 16] | +25.0% [+7.1, +50.0] p=0.20 | — "
        "| 2407 | 24 |\n"
        "| forget-team | 4 × 3 | 3 | 16.5 ± 0 | [16.5, 16.5] | +37.5% [+17.9, +65.0] p=0.10 "
        "| +10.0% [+3.1, +17.9] p=0.10 | 2407 | 24 |\n"
    )
    md = (tmp_path / "c" / "compare.md").read_text()
    assert "the smallest possible p is 0.10; no difference can reach p < 0.05" in md


def test_minimising_reports_a_lower_score_as_a_positive_improvement(tmp_path: Path) -> None:
    runner = FakeRunner({"single": [100.0, 100.0], "forget-team": [78.0, 78.0]}, paid=True)
    result = compare_policies(
        base_config(tmp_path, minimize=True, agents=2, rounds=2, seed=7),
        policies=["forget-team", "single"],
        repeats=2,
        out=tmp_path / "c",
        run=runner,
        plot=False,
    )
    assert [(r.policy, r.vs) for r in result.rows] == [
        ("forget-team", {"single": pytest.approx(22.0)}),
        ("single", {}),
    ]
    assert result.references == ["single"]
    table = format_table(result)
    assert "| vs single | mean cost | mean turns |" in table
    assert (
        "| forget-team | 2 × 2 | 2 | 78 ± 0 | [78, 78] | +22.0% [+22.0, +22.0] p=0.33 "
        "| $0.1000 | 12 |" in table
    )
    assert "| single | 1 × 1 | 2 | 100 ± 0 | [100, 100] | — | $0.0500 | 12 |" in table


def test_failed_runs_are_counted_but_not_averaged(tmp_path: Path) -> None:
    runner = FakeRunner({"single": [5.0, None]})
    result = compare_policies(
        base_config(tmp_path, seed=7),
        policies=["single"],
        repeats=2,
        out=tmp_path / "c",
        run=runner,
        plot=False,
    )
    row = result.rows[0]
    assert (row.runs, row.scored, row.mean, row.sd) == (2, 1, 5.0, None)
    assert "| single | 1 × 1 | 1/2 scored | 5 | [5, 5] |" in format_table(result)


def test_writes_compare_json_and_md_and_reports_progress(tmp_path: Path) -> None:
    events: list[Progress] = []
    runner = FakeRunner({"single": [3.0], "parallel": [4.0]})
    out = tmp_path / "c"
    result = compare_policies(
        base_config(tmp_path, agents=2, seed=7),
        policies=["single", "parallel"],
        repeats=1,
        out=out,
        run=runner,
        progress=events.append,
    )
    assert [(e.index, e.total, e.policy, e.seed, e.outcome is None) for e in events] == [
        (1, 2, "single", 7, True),
        (1, 2, "single", 7, False),
        (2, 2, "parallel", 7, True),
        (2, 2, "parallel", 7, False),
    ]
    assert events[-1].outcome is not None and events[-1].outcome.best_score == 4.0
    data = json.loads((out / "compare.json").read_text())
    assert data["complete"] is True and data["direction"] == "maximize"
    assert [(r["policy"], r["seed"], r["best_score"]) for r in data["runs"]] == [
        ("single", 7, 3.0),
        ("parallel", 7, 4.0),
    ]
    assert data["rows"][1]["vs"] == {"single": pytest.approx(100 / 3)}
    md = (out / "compare.md").read_text()
    assert md.startswith(
        "# Policy comparison\n\nAgent `tsp-example`, same total budget per run (12 turns); "
        "1 repeat(s) per policy with seeds 7; higher scores are better."
    )
    assert data["settings"]["agent"] == "tsp-example" and data["settings"]["turns"] == 12
    assert "policy" not in data["settings"] and "seed" not in data["settings"]
    assert md.endswith(format_table(result))
    # The one fast test that draws: the other fake comparisons pass plot=False.
    assert result.plot == out / "compare.png"
    assert result.plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![final results per policy, best-so-far](compare.png)" in md


def test_an_interrupted_comparison_keeps_the_runs_it_finished(tmp_path: Path) -> None:
    runner = FakeRunner({"single": [1.0, 2.0], "forget": [3.0, 4.0]}, fail_at=3)
    out = tmp_path / "c"
    with pytest.raises(KeyboardInterrupt):
        compare_policies(
            base_config(tmp_path, seed=7, rounds=2),
            policies=["single", "forget"],
            repeats=2,
            out=out,
            run=runner,
            plot=False,
        )
    data = json.loads((out / "compare.json").read_text())
    assert data["complete"] is False
    assert [r["policy"] for r in data["runs"]] == ["single", "forget"]
    assert "(incomplete: interrupted or still running)" in (out / "compare.md").read_text()
    with pytest.raises(InvalidInput, match="a comparison already lives here"):
        compare_policies(
            base_config(tmp_path, seed=7),
            policies=["single"],
            repeats=1,
            out=out,
            run=runner,
            plot=False,
        )


def test_policy_names_and_shapes() -> None:
    assert parse_policies(" single,parallel , forget-team") == [
        "single",
        "parallel",
        "forget-team",
    ]
    with pytest.raises(UsageError, match="unknown policy 'singel'; choose one of: single, "):
        parse_policies("singel,parallel")
    with pytest.raises(UsageError, match="listed twice"):
        parse_policies("single,single")
    assert [shape(p, 4, 3) for p in ("single", "parallel", "team", "forget", "forget-team")] == [
        (1, 1),
        (4, 1),
        (4, 1),
        (1, 3),
        (4, 3),
    ]


def test_relative_gain_signs_follow_the_direction() -> None:
    assert relative_gain(80.0, 100.0, minimize=True) == pytest.approx(20.0)
    assert relative_gain(120.0, 100.0, minimize=True) == pytest.approx(-20.0)
    assert relative_gain(120.0, 100.0, minimize=False) == pytest.approx(20.0)
    assert relative_gain(-50.0, -100.0, minimize=False) == pytest.approx(50.0)
    assert relative_gain(1.0, 0.0, minimize=False) is None
    assert relative_gain(None, 1.0, minimize=False) is None


def test_repeats_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--repeats must be at least 1, got 0"):
        compare_policies(
            base_config(tmp_path),
            policies=["single"],
            repeats=0,
            out=tmp_path,
            run=FakeRunner({}),
            plot=False,
        )


def test_every_config_is_checked_before_the_first_run(tmp_path: Path) -> None:
    runner = FakeRunner({"single": [1.0], "forget-team": [1.0]})
    with pytest.raises(UsageError, match=r"--turns 8 is fewer than agents x rounds \(12\)"):
        compare_policies(
            base_config(tmp_path, agents=4, rounds=3, turns=8),
            policies=["single", "forget-team"],
            repeats=1,
            out=tmp_path / "c",
            run=runner,
            plot=False,
        )
    assert runner.calls == []
    assert not (tmp_path / "c").exists()


def test_clearly_separated_policies_get_a_small_p_and_identical_ones_p_one(
    tmp_path: Path,
) -> None:
    runner = FakeRunner(
        {
            "single": [1.0, 2.0, 3.0, 4.0, 5.0],
            "parallel": [1.0, 2.0, 3.0, 4.0, 5.0],
            "forget-team": [20.0, 21.0, 22.0, 23.0, 24.0],
        }
    )
    result = compare_policies(
        base_config(tmp_path, agents=2, rounds=2, seed=7),
        policies=["single", "parallel", "forget-team"],
        repeats=5,
        out=tmp_path / "c",
        run=runner,
        plot=False,
    )
    rows = {row.policy: row for row in result.rows}
    # 5 vs 5: 252 splits; only the observed one and its mirror are as extreme.
    assert rows["forget-team"].tests["single"].p_value == pytest.approx(2 / 252)
    assert rows["parallel"].tests["single"].p_value == 1.0
    versus = rows["forget-team"].tests["single"]
    assert versus.ci_low is not None and versus.ci_high is not None
    assert versus.ci_low > 0 and versus.ci_low <= versus.gain_pct <= versus.ci_high
    ci_low, ci_high = rows["single"].ci_low, rows["single"].ci_high
    assert ci_low is not None and ci_high is not None and ci_low < 3.0 < ci_high
    assert "p=0.0079" in format_table(result)
    data = json.loads((tmp_path / "c" / "compare.json").read_text())
    ft = next(r for r in data["rows"] if r["policy"] == "forget-team")
    assert ft["tests"]["single"]["p_value"] == pytest.approx(2 / 252)
    assert "permutation" in data["statistics"]["test"]


@dataclass
class RescoredSummary(FakeSummary):
    best_rescored: float | None = None


def test_statistics_use_the_rescored_best_when_the_run_has_one(tmp_path: Path) -> None:
    def run(config: SearchConfig) -> RescoredSummary:
        assert config.out is not None
        config.out.mkdir(parents=True)
        return RescoredSummary(10.0 + config.seed, 100.0, 0.0, 12, 0, 0, config.out, 5.0)

    result = compare_policies(
        base_config(tmp_path, seed=0),
        policies=["single"],
        repeats=2,
        out=tmp_path / "c",
        run=run,
        plot=False,
    )
    assert [o.best_score for o in result.outcomes] == [10.0, 11.0]
    assert result.rows[0].mean == 5.0 and result.rows[0].rescored
    assert (
        "Statistics of each run's best re-scored after the search"
        in (tmp_path / "c" / "compare.md").read_text()
    )


def test_plateau_forgetting_runs_beside_the_baselines(tmp_path: Path) -> None:
    runner = FakeRunner({p: [1.0] for p in ("single", "parallel", "forget-team")})
    result = compare_policies(
        base_config(tmp_path, agents=2, rounds=2, seed=7, forget_on_plateau=3),
        policies=parse_policies("single,parallel,forget-team,forget-team+plateau"),
        repeats=1,
        out=tmp_path / "c",
        run=runner,
        plot=False,
    )
    got = [(c.policy, c.forget_on_plateau, c.out) for c in runner.calls]
    assert got == [
        ("single", None, tmp_path / "c" / "single" / "seed-7"),
        ("parallel", None, tmp_path / "c" / "parallel" / "seed-7"),
        ("forget-team", None, tmp_path / "c" / "forget-team" / "seed-7"),
        ("forget-team", 3, tmp_path / "c" / "forget-team+plateau" / "seed-7"),
    ]
    assert [r.policy for r in result.rows][-1] == "forget-team+plateau"
    assert "| forget-team+plateau | 2 × 2 |" in format_table(result)


def test_forget_on_plateau_alone_applies_to_the_forgetting_policies_only(tmp_path: Path) -> None:
    assert policy_specs(["single", "forget"], 4) == [
        PolicySpec("single", "single", None),
        PolicySpec("forget+plateau", "forget", 4),
    ]
    with pytest.raises(UsageError, match=r"a \+plateau policy needs --forget-on-plateau K"):
        policy_specs(["forget+plateau"], None)
    with pytest.raises(UsageError, match="only a forgetting policy"):
        parse_policies("parallel+plateau")


def test_the_plot_zooms_past_a_seed_far_worse_than_every_run() -> None:
    from evolving_agent.search.compare_plot import _zoom

    low, high = _zoom([98892.0], [10800.0, 12000.0]) or (0.0, 0.0)
    assert low == pytest.approx(10800 - 96) and high == pytest.approx(12000 + 96)
    assert _zoom([11000.0], [10800.0, 12000.0]) is None


def test_without_out_each_comparison_gets_a_folder_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default out dir is the core's (as for ``search run``), not the CLI's: two
    comparisons started in the same second get ``compare-<time>`` and ``...-2``."""
    monkeypatch.chdir(tmp_path)
    outs = []
    with freeze_time("2026-11-30 04:05:06"):
        for _ in range(2):
            runner = FakeRunner({"single": [1.0]})
            result = compare_policies(
                base_config(tmp_path, seed=7),
                policies=["single"],
                repeats=1,
                run=runner,
                plot=False,
            )
            outs.append(result.out)
    assert outs == [Path("runs/compare-20261130-040506"), Path("runs/compare-20261130-040506-2")]
    assert all((out / "compare.json").is_file() for out in outs)
