"""A fake search runner for the comparison tests: scores that depend on policy and seed only.

``compare_policies`` takes the function that runs one search; :class:`FakeRunner` stands in
for it (no agent, no scorer), so the expected table can be worked out by hand.
:func:`base_config` is a valid config for a toy task the fake never runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolving_agent.search.config import SearchConfig


def base_config(tmp: Path, **overrides: Any) -> SearchConfig:
    """A valid config for a toy task; the fake runners below never run its scorer."""
    cand = tmp / "cand"
    cand.mkdir(exist_ok=True)
    (cand / "value.txt").write_text("0\n")
    (tmp / "task.md").write_text("Make the number larger.\n")
    fields: dict[str, Any] = {
        "candidate": cand,
        "task": tmp / "task.md",
        "score_cmd": "python score.py",
        "agent": "tsp-example",
        "policy": "forget-team",
    }
    return SearchConfig(**(fields | overrides))


@dataclass
class FakeSummary:
    best_score: float | None
    seed_score: float | None
    cost_usd: float
    turns: int
    input_tokens: int
    output_tokens: int
    run_dir: Path


class FakeRunner:
    """Scores depend on policy and seed only, so the expected table can be worked out."""

    def __init__(
        self,
        scores: dict[str, list[float | None]],
        fail_at: int | None = None,
        paid: bool = False,
    ):
        self.scores = scores
        self.paid = paid
        self.calls: list[SearchConfig] = []
        self.fail_at = fail_at

    def __call__(self, config: SearchConfig) -> FakeSummary:
        self.calls.append(config)
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise KeyboardInterrupt
        assert config.out is not None
        config.out.mkdir(parents=True)
        (config.out / "log.jsonl").write_text("")
        score = self.scores[config.policy][config.seed - 7]
        cost = 0.05 * config.agents if self.paid else 0.0
        return FakeSummary(score, 100.0, cost, config.turns, 100 * config.turns, 7, config.out)
