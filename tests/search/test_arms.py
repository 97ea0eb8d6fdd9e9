"""The four arms in ``search compare``: forget-team is measured against keep-notes,
parallel and single, and every cell prints its effect and exact p-value, also when the
arms tie (a null result is a result).  The circles test agent behind the benchmark:
tests/search/agents/test_circles_example.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evolving_agent.search.compare import compare_policies, format_table
from evolving_agent.search.config import SearchConfig

ARMS = ["forget-team", "keep-notes", "parallel", "single"]


@dataclass
class _Summary:
    best_score: float | None
    seed_score: float | None
    cost_usd: float
    turns: int
    input_tokens: int
    output_tokens: int
    run_dir: Path


def _base(tmp: Path) -> SearchConfig:
    (tmp / "cand").mkdir()
    (tmp / "cand" / "value.txt").write_text("0\n")
    (tmp / "task.md").write_text("Make the number larger.\n")
    return SearchConfig(
        candidate=tmp / "cand", task=tmp / "task.md", score_cmd="python score.py",
        agent="tsp-example", agents=2, rounds=3, turns=12, seed=0,
    )  # fmt: skip


def _table(tmp: Path, scores: dict[str, list[float]]) -> tuple[str, list[SearchConfig]]:
    calls: list[SearchConfig] = []

    def run(config: SearchConfig) -> _Summary:
        calls.append(config)
        assert config.out is not None
        config.out.mkdir(parents=True)
        (config.out / "log.jsonl").write_text("")
        score = scores[config.policy][config.seed]
        return _Summary(score, 0.0, 0.0, config.turns, 10 * config.turns, 1, config.out)

    comparison = compare_policies(
        _base(tmp), policies=ARMS, repeats=6, out=tmp / "cmp", run=run, plot=False
    )
    return format_table(comparison), calls


def test_forget_team_is_measured_against_keep_notes_parallel_and_single(tmp_path: Path) -> None:
    scores = {
        "forget-team": [10.0, 11, 12, 13, 14, 15],
        "keep-notes": [1.0, 2, 3, 4, 5, 6],
        "parallel": [1.0, 2, 3, 4, 5, 6],
        "single": [1.0, 2, 3, 4, 5, 6],
    }
    table, calls = _table(tmp_path, scores)
    assert {c.turns for c in calls} == {12}  # every arm at the same total budget
    assert [c.seed for c in calls if c.policy == "keep-notes"] == list(range(6))
    header = table.splitlines()[0]
    assert "vs single" in header and "vs parallel" in header and "vs keep-notes" in header
    row = next(line for line in table.splitlines() if line.startswith("| forget-team"))
    # Six against six, completely separated: the exact two-sided p is 2 / C(12, 6).
    assert row.count("p=0.0022") == 3, row


def test_a_null_result_still_prints_its_effect_and_p(tmp_path: Path) -> None:
    same = [1.0, 2, 3, 4, 5, 6]
    table, _ = _table(tmp_path, dict.fromkeys(ARMS, same))
    row = next(line for line in table.splitlines() if line.startswith("| forget-team"))
    assert row.count("+0.0%") == 3 and row.count("p=1.00") == 3, row
