"""``search compare``'s table labels rounds as the runs actually ran them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evolving_agent.search.compare import compare_policies, format_table, parse_policies
from evolving_agent.search.config import SearchConfig
from tests.helpers.compare_fakes import FakeRunner, FakeSummary, base_config


@dataclass
class RoundsSummary(FakeSummary):
    rounds: int = 1


class RoundsRunner(FakeRunner):
    """Plateau forgetting runs 4 rounds with seed 7 and 5 with seed 8 (3 planned)."""

    def __call__(self, config: SearchConfig) -> FakeSummary:
        done = super().__call__(config)
        ran = config.rounds if config.forget_on_plateau is None else 4 + (config.seed - 7)
        return RoundsSummary(**vars(done), rounds=ran)


def test_the_table_shows_the_rounds_that_ran_not_the_planned_ones(tmp_path: Path) -> None:
    # Guards "4 × 4" printed for a plateau policy whose runs ran 5 rounds.
    runner = RoundsRunner({"forget-team": [1.0, 2.0]})
    result = compare_policies(
        base_config(tmp_path, agents=2, rounds=3, seed=7, forget_on_plateau=2),
        policies=parse_policies("forget-team,forget-team+plateau"),
        repeats=2,
        out=tmp_path / "c",
        run=runner,
        plot=False,
    )
    table = format_table(result)
    assert "| forget-team | 2 × 3 |" in table
    assert "| forget-team+plateau | 2 × 4–5 |" in table
