"""Several policies on one task at one total budget, K seeds each: the paper's Table 1.

``compare_policies`` derives one config per (policy, seed) from a base config, runs
them one after another through ``run`` (``run_search`` unless a test passes another),
and aggregates each policy's best scores into mean ± sd and its relative difference to
the reference policies (``single``, ``parallel``), signed so that positive always means
better whatever the direction.  Every repeat ``k`` uses seed ``base.seed + k`` for every
policy, so policies meet the same seeds.  ``compare.json`` is rewritten after each run so
an interrupted comparison keeps what it finished; ``compare.md`` holds the table.

The run function is a parameter (``run_search`` by default) and only a few attributes
of its summary are read, so the tests can drive it with a small fake runner.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.search.config import SearchConfig, validate_config
from evolving_agent.search.presets import PRESETS, preset_for
from evolving_agent.search.runner import run_search

REFERENCES = ("single", "parallel")


class SummaryLike(Protocol):
    """What compare reads from a ``SearchSummary`` (a test may hand back a smaller one)."""

    @property
    def best_score(self) -> float | None: ...
    @property
    def seed_score(self) -> float | None: ...
    @property
    def cost_usd(self) -> float: ...
    @property
    def turns(self) -> int: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def run_dir(self) -> Path: ...


@dataclass(frozen=True)
class RunOutcome:
    policy: str
    repeat: int
    seed: int
    agents: int
    rounds: int
    best_score: float | None
    seed_score: float | None
    cost_usd: float
    tokens: int  # input + output, as the agent reported them
    turns: int
    wall_s: float
    run_dir: str


@dataclass(frozen=True)
class Progress:
    """One event for the progress callback: a run is starting, or has finished."""

    index: int  # 1-based
    total: int
    policy: str
    seed: int
    outcome: RunOutcome | None = None  # None when starting


@dataclass(frozen=True)
class PolicyRow:
    policy: str
    agents: int
    rounds: int
    runs: int
    scored: int  # runs that produced a scored candidate
    mean: float | None
    sd: float | None
    mean_cost_usd: float
    mean_tokens: float
    mean_turns: float
    vs: dict[str, float | None]  # reference policy -> % better (positive = better)


@dataclass
class Comparison:
    minimize: bool
    turns: int
    repeats: int
    seeds: list[int]
    out: Path
    settings: dict[str, Any] = field(default_factory=dict)  # the base config, for the record
    rows: list[PolicyRow] = field(default_factory=list)
    outcomes: list[RunOutcome] = field(default_factory=list)
    complete: bool = False

    @property
    def references(self) -> list[str]:
        present = {row.policy for row in self.rows}
        return [r for r in REFERENCES if r in present]

    def to_json(self) -> dict[str, Any]:
        return {
            "direction": "minimize" if self.minimize else "maximize",
            "turns": self.turns,
            "repeats": self.repeats,
            "seeds": self.seeds,
            "complete": self.complete,
            "settings": self.settings,
            "references": self.references,
            "rows": [asdict(r) for r in self.rows],
            "runs": [asdict(o) for o in self.outcomes],
        }


RunFn = Callable[[SearchConfig], SummaryLike]
ProgressFn = Callable[[Progress], None]


def parse_policies(text: str) -> list[str]:
    """``"single, parallel,forget-team"`` -> list; unknown or repeated names are refused."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError(f"no policies given; choose from: {', '.join(PRESETS)}")
    for name in names:
        preset_for(name)  # an unknown name lists the valid ones
    if len(set(names)) != len(names):
        raise UsageError(f"policy listed twice in {text!r}")
    return names


def shape(policy: str, agents: int, rounds: int) -> tuple[int, int]:
    """Agents and rounds ``policy`` runs with when asked for ``agents`` and ``rounds``.

    The runner ignores what a preset does not use anyway; passing the effective numbers
    keeps each run's ``run.json`` and the table honest about what ran.
    """
    preset = preset_for(policy)
    return (1 if preset.single_agent else agents), (rounds if preset.forgets else 1)


def relative_gain(value: float | None, reference: float | None, *, minimize: bool) -> float | None:
    """How much better ``value`` is than ``reference``, in percent of ``|reference|``.

    Positive is better in either direction: minimising 80 against 100 is +20%.
    """
    if value is None or reference is None or reference == 0:
        return None
    diff = reference - value if minimize else value - reference
    return diff / abs(reference) * 100


def _row(policy: str, outcomes: Sequence[RunOutcome], agents: int, rounds: int) -> PolicyRow:
    scores = [o.best_score for o in outcomes if o.best_score is not None]
    return PolicyRow(
        policy=policy,
        agents=agents,
        rounds=rounds,
        runs=len(outcomes),
        scored=len(scores),
        mean=statistics.fmean(scores) if scores else None,
        # Sample sd; a single repeat has no spread to speak of.
        sd=statistics.stdev(scores) if len(scores) > 1 else None,
        mean_cost_usd=statistics.fmean(o.cost_usd for o in outcomes) if outcomes else 0.0,
        mean_tokens=statistics.fmean(o.tokens for o in outcomes) if outcomes else 0.0,
        mean_turns=statistics.fmean(o.turns for o in outcomes) if outcomes else 0.0,
        vs={},
    )


def aggregate(
    outcomes: Sequence[RunOutcome],
    policies: Sequence[str],
    *,
    agents: int,
    rounds: int,
    minimize: bool,
) -> list[PolicyRow]:
    """One row per policy (in the order given) with the relative differences filled in."""
    rows = []
    for p in policies:
        a, r = shape(p, agents, rounds)
        rows.append(_row(p, [o for o in outcomes if o.policy == p], a, r))
    means = {row.policy: row.mean for row in rows}
    for row in rows:
        for ref in REFERENCES:
            if ref in means and ref != row.policy:
                row.vs[ref] = relative_gain(row.mean, means[ref], minimize=minimize)
    return rows


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def write_outputs(comparison: Comparison) -> tuple[Path, Path]:
    """(Re)write ``compare.json`` and ``compare.md`` in the comparison's out dir."""
    js, md = comparison.out / "compare.json", comparison.out / "compare.md"
    js.write_text(json.dumps(comparison.to_json(), indent=2) + "\n", encoding="utf-8")
    md.write_text(render_markdown(comparison), encoding="utf-8")
    return js, md


def compare_policies(
    base: SearchConfig,
    *,
    policies: Sequence[str],
    repeats: int,
    out: Path,
    run: RunFn = run_search,
    progress: ProgressFn | None = None,
) -> Comparison:
    """Run every policy ``repeats`` times at ``base``'s total budget; aggregate and write.

    ``base`` supplies the task, agent, budget and first seed; its ``agents``/``rounds`` are
    what the multi-agent / multi-round policies use.  Runs go to ``out/POLICY/seed-S``.
    Every run's config is validated before the first run starts, so a bad combination
    fails in seconds, not after an hour.  ``run`` defaults to ``run_search``.
    """
    if repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {repeats}")
    for p in policies:
        preset_for(p)
    if (out / "compare.json").exists():
        raise InvalidInput("a comparison already lives here; choose another --out", file=out)
    seeds = [base.seed + k for k in range(repeats)]
    # Interleave policies within a repeat so an interrupted comparison stays balanced.
    plan: list[tuple[int, str, SearchConfig]] = []
    for k, seed in enumerate(seeds):
        for policy in policies:
            agents, rounds = shape(policy, base.agents, base.rounds)
            config = base.model_copy(
                update={
                    "policy": policy,
                    "agents": agents,
                    "rounds": rounds,
                    "seed": seed,
                    "out": out / policy / f"seed-{seed}",
                }
            )
            validate_config(config)
            plan.append((k, policy, config))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cannot create output directory: {exc}", file=out) from exc

    comparison = Comparison(
        minimize=base.minimize,
        turns=base.turns,
        repeats=repeats,
        seeds=seeds,
        out=out,
        settings=base.model_dump(mode="json", exclude={"policy", "seed", "out"}),
    )
    for index, (k, policy, config) in enumerate(plan, start=1):
        if progress:
            progress(Progress(index, len(plan), policy, config.seed))
        started = time.monotonic()
        summary = run(config)
        outcome = RunOutcome(
            policy=policy,
            repeat=k,
            seed=config.seed,
            agents=config.agents,
            rounds=config.rounds,
            best_score=_finite(summary.best_score),
            seed_score=_finite(summary.seed_score),
            cost_usd=float(summary.cost_usd or 0.0),
            tokens=int(summary.input_tokens or 0) + int(summary.output_tokens or 0),
            turns=int(summary.turns),
            wall_s=round(time.monotonic() - started, 3),
            run_dir=str(summary.run_dir),
        )
        comparison.outcomes.append(outcome)
        comparison.rows = aggregate(
            comparison.outcomes,
            policies,
            agents=base.agents,
            rounds=base.rounds,
            minimize=base.minimize,
        )
        write_outputs(comparison)
        if progress:
            progress(Progress(index, len(plan), policy, config.seed, outcome))
    comparison.complete = True
    write_outputs(comparison)
    return comparison


# -- rendering -------------------------------------------------------------------------


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.6g}"


def format_table(comparison: Comparison) -> str:
    """The markdown table printed by the CLI and kept in ``compare.md``."""
    refs = comparison.references
    header = ["policy", "agents × rounds", "runs", "best (mean ± sd)"]
    # Offline agents report tokens but no dollars; show whichever says something.
    paid = any(row.mean_cost_usd > 0 for row in comparison.rows)
    header += [f"vs {r}" for r in refs] + ["mean cost" if paid else "mean tokens", "mean turns"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in comparison.rows:
        best = _num(row.mean) + ("" if row.sd is None else f" ± {row.sd:.3g}")
        runs = f"{row.runs}" if row.scored == row.runs else f"{row.scored}/{row.runs} scored"
        cells = [row.policy, f"{row.agents} × {row.rounds}", runs, best]
        for ref in refs:
            gain = row.vs.get(ref)
            cells.append("—" if ref == row.policy or gain is None else f"{gain:+.1f}%")
        spend = f"${row.mean_cost_usd:.4f}" if paid else f"{row.mean_tokens:.0f}"
        cells += [spend, f"{row.mean_turns:g}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_markdown(comparison: Comparison) -> str:
    better = "lower" if comparison.minimize else "higher"
    state = "" if comparison.complete else " (incomplete: interrupted or still running)"
    seeds = ", ".join(map(str, comparison.seeds))
    settings = comparison.settings
    budget = f"{comparison.turns} turns"
    if settings.get("budget_usd") is not None:
        budget += f", ${settings['budget_usd']:g}"
    if settings.get("budget_tokens") is not None:
        budget += f", {settings['budget_tokens']} tokens"
    lead = "Same total budget per run"
    if settings.get("agent"):
        lead = f"Agent `{settings['agent']}`, same total budget per run"
    return (
        f"# Policy comparison{state}\n\n"
        f"{lead} ({budget}); {comparison.repeats} "
        f"repeat(s) per policy with seeds {seeds}; {better} scores are better.  "
        "\"vs X\" is the improvement of the mean best score over X's, in percent of X's "
        "(positive = better).\n\n" + format_table(comparison)
    )
