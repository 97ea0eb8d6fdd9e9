"""Several policies on one task at one total budget, K seeds each: the paper's Table 1.

``compare_policies`` derives one config per (policy, seed) from a base config, runs
them one after another through ``run`` (``run_search`` unless a test passes another),
and aggregates each policy's best scores.  Every repeat ``k`` uses seed ``base.seed + k``
for every policy, so policies meet the same seeds.  ``compare.json`` is rewritten after
each run so an interrupted comparison keeps what it finished; ``compare.md`` holds the
table and ``compare.png`` the final results per policy (points, mean, 95% interval) and the
median best-so-far curves.

What a row says (all in ``stats``): the mean and sd of the runs' final bests (the best
*re-scored* after the search where the runner did so, else the search-time best), a 95%
bootstrap interval of that mean, and against each reference policy (``single``,
``parallel``) the relative gain of the means -- signed so that positive always means
better, whatever the direction -- with a 95% bootstrap interval and a two-sided
permutation-test p-value.  With 3 seeds per policy p cannot go below 0.1; the table
prints that floor so nobody reads a small comparison as a significant one.

Plateau forgetting runs beside the fixed-round policies as ``NAME+plateau`` (for
example ``forget-team,forget-team+plateau``): the same forgetting policy with
``--forget-on-plateau K``.  Given ``--forget-on-plateau`` and no ``+plateau`` entry,
every forgetting policy runs with it (and is labelled ``+plateau``); the policies that
never forget always run without it.

The run function is a parameter and only a few attributes of its summary are read, so
the tests can drive it with a small fake runner.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.search import stats
from evolving_agent.search.config import SearchConfig, validate_config
from evolving_agent.search.presets import PRESETS, preset_for
from evolving_agent.search.runner import new_dir, run_search
from evolving_agent.search.text import fmt_number, markdown_table

# The arms a policy is measured against when they ran (keep-notes: the arm for memory).
REFERENCES = ("single", "parallel", "keep-notes")
PLATEAU_SUFFIX = "+plateau"


class SummaryLike(Protocol):
    """What compare reads from a ``SearchSummary`` (a test may hand back a smaller one;
    ``best_rescored`` is read with ``getattr`` and may be missing)."""

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
class PolicySpec:
    """One entry of ``--policies``: the label in the table and what actually runs."""

    label: str
    policy: str
    forget_on_plateau: int | None = None


@dataclass(frozen=True)
class RunOutcome:
    policy: str  # the label (e.g. "forget-team+plateau")
    repeat: int
    seed: int
    agents: int
    rounds: int
    best_score: float | None  # what the search saw
    seed_score: float | None
    cost_usd: float
    tokens: int  # input + output, as the agent reported them
    turns: int
    wall_s: float
    run_dir: str
    best_rescored: float | None = None  # the final best scored again after the search

    @property
    def final(self) -> float | None:
        """The number the statistics use: the re-scored best if there is one."""
        return self.best_rescored if self.best_rescored is not None else self.best_score


@dataclass(frozen=True)
class Progress:
    """One event for the progress callback: a run is starting, or has finished."""

    index: int  # 1-based
    total: int
    policy: str
    seed: int
    outcome: RunOutcome | None = None  # None when starting


@dataclass(frozen=True)
class Versus:
    """One policy against one reference policy."""

    gain_pct: float | None  # relative gain of the means, positive = better
    ci_low: float | None
    ci_high: float | None
    p_value: float | None  # two-sided permutation test of the final bests


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
    ci_low: float | None = None  # 95% bootstrap interval of the mean
    ci_high: float | None = None
    tests: dict[str, Versus] = field(default_factory=dict)
    rescored: bool = False  # the statistics use re-scored bests
    ran_rounds: tuple[int, ...] = ()  # the rounds its runs actually ran, sorted

    @property
    def rounds_label(self) -> str:
        """The rounds as they ran ("4", or "4–5" when runs differed)."""
        ran = self.ran_rounds or (self.rounds,)
        return str(ran[0]) if ran[0] == ran[-1] else f"{ran[0]}–{ran[-1]}"


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
    plot: Path | None = None

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
            "statistics": {
                "interval": f"95% percentile bootstrap, {stats.BOOTSTRAP_ROUNDS} resamples, seed 0",
                "test": "two-sided permutation test of the difference in means "
                f"(exact up to {stats.EXACT_LIMIT} splits)",
                "value": "best re-scored after the search where available, else the "
                "search-time best",
            },
            "rows": [asdict(r) for r in self.rows],
            "runs": [asdict(o) for o in self.outcomes],
            "plot": str(self.plot) if self.plot else None,
        }


RunFn = Callable[[SearchConfig], SummaryLike]
ProgressFn = Callable[[Progress], None]


def parse_policies(text: str) -> list[str]:
    """``"single, parallel,forget-team"`` -> list; unknown or repeated names are refused.

    A forgetting policy may carry ``+plateau`` (``forget-team+plateau``).
    """
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise UsageError(f"no policies given; choose from: {', '.join(PRESETS)}")
    for name in names:
        base = name.removesuffix(PLATEAU_SUFFIX)
        preset = preset_for(base)  # an unknown name lists the valid ones
        if name != base and not preset.forgets:
            raise UsageError(
                f"{name}: only a forgetting policy (forget, forget-team, fork-and-flush) "
                "can forget on a plateau"
            )
    if len(set(names)) != len(names):
        raise UsageError(f"policy listed twice in {text!r}")
    return names


def policy_specs(names: Sequence[str], forget_on_plateau: int | None) -> list[PolicySpec]:
    """What each name runs; see the module docstring for the ``+plateau`` rule."""
    explicit = any(n.endswith(PLATEAU_SUFFIX) for n in names)
    if explicit and forget_on_plateau is None:
        raise UsageError("a +plateau policy needs --forget-on-plateau K")
    specs = []
    for name in names:
        base = name.removesuffix(PLATEAU_SUFFIX)
        forgets = preset_for(base).forgets
        if name != base:
            specs.append(PolicySpec(name, base, forget_on_plateau))
        elif forgets and forget_on_plateau is not None and not explicit:
            specs.append(PolicySpec(base + PLATEAU_SUFFIX, base, forget_on_plateau))
        else:
            specs.append(PolicySpec(name, base, None))
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise UsageError(f"policy listed twice: {', '.join(labels)}")
    return specs


def shape(policy: str, agents: int, rounds: int) -> tuple[int, int]:
    """Agents and rounds ``policy`` runs with when asked for ``agents`` and ``rounds``.

    The runner ignores what a preset does not use anyway; passing the effective numbers
    keeps each run's ``run.json`` and the table honest about what ran.
    """
    preset = preset_for(policy.removesuffix(PLATEAU_SUFFIX))
    return (1 if preset.single_agent else agents), (rounds if preset.forgets else 1)


def relative_gain(value: float | None, reference: float | None, *, minimize: bool) -> float | None:
    """How much better ``value`` is than ``reference``, in percent of ``|reference|``.

    Positive is better in either direction: minimising 80 against 100 is +20%.
    """
    if value is None or reference is None:
        return None
    return stats.relative_gain(value, reference, minimize=minimize)


def _fmean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _row(label: str, outcomes: Sequence[RunOutcome], agents: int, rounds: int) -> PolicyRow:
    scores = [o.final for o in outcomes if o.final is not None]
    mean, sd = stats.mean_sd(scores)
    ci = stats.bootstrap_ci(scores)
    return PolicyRow(
        policy=label,
        agents=agents,
        rounds=rounds,
        runs=len(outcomes),
        scored=len(scores),
        mean=mean,
        sd=sd,  # sample sd; a single repeat has no spread to speak of
        mean_cost_usd=_fmean([o.cost_usd for o in outcomes]),
        mean_tokens=_fmean([float(o.tokens) for o in outcomes]),
        mean_turns=_fmean([float(o.turns) for o in outcomes]),
        vs={},
        ci_low=ci.low if ci else None,
        ci_high=ci.high if ci else None,
        rescored=any(o.best_rescored is not None for o in outcomes),
        ran_rounds=tuple(sorted({o.rounds for o in outcomes})),
    )


def aggregate(
    outcomes: Sequence[RunOutcome],
    policies: Sequence[str],
    *,
    agents: int,
    rounds: int,
    minimize: bool,
) -> list[PolicyRow]:
    """One row per policy label (in the order given) with the comparisons filled in."""
    rows = []
    finals: dict[str, list[float]] = {}
    for label in policies:
        a, r = shape(label, agents, rounds)
        mine = [o for o in outcomes if o.policy == label]
        rows.append(_row(label, mine, a, r))
        finals[label] = [o.final for o in mine if o.final is not None]
    means = {row.policy: row.mean for row in rows}
    for row in rows:
        for ref in REFERENCES:
            if ref in means and ref != row.policy:
                row.vs[ref] = relative_gain(row.mean, means[ref], minimize=minimize)
                ci = stats.bootstrap_diff_ci(finals[row.policy], finals[ref], minimize=minimize)
                row.tests[ref] = Versus(
                    gain_pct=row.vs[ref],
                    ci_low=ci.low if ci else None,
                    ci_high=ci.high if ci else None,
                    p_value=stats.permutation_p(finals[row.policy], finals[ref]),
                )
    return rows


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def write_outputs(comparison: Comparison) -> tuple[Path, Path]:
    """(Re)write ``compare.json`` and ``compare.md`` in the comparison's out dir."""
    js, md = comparison.out / "compare.json", comparison.out / "compare.md"
    js.write_text(json.dumps(comparison.to_json(), indent=2) + "\n", encoding="utf-8")
    md.write_text(render_markdown(comparison), encoding="utf-8")
    return js, md


def _plan_runs(
    base: SearchConfig, specs: Sequence[PolicySpec], seeds: Sequence[int], out: Path
) -> list[tuple[int, PolicySpec, SearchConfig]]:
    """(repeat, policy, config) of every run, each config validated before any run starts.

    Policies interleave within a repeat so an interrupted comparison stays balanced.
    """
    plan: list[tuple[int, PolicySpec, SearchConfig]] = []
    for k, seed in enumerate(seeds):
        for spec in specs:
            agents, rounds = shape(spec.policy, base.agents, base.rounds)
            config = base.model_copy(
                update={
                    "policy": spec.policy,
                    "agents": agents,
                    "rounds": rounds,
                    "seed": seed,
                    "forget_on_plateau": spec.forget_on_plateau,
                    "out": out / spec.label / f"seed-{seed}",
                }
            )
            validate_config(config)
            plan.append((k, spec, config))
    return plan


def _outcome(
    spec: PolicySpec, repeat: int, config: SearchConfig, summary: SummaryLike, *, wall_s: float
) -> RunOutcome:
    """One finished run as the comparison keeps it (``summary``: what ``run`` returned)."""
    return RunOutcome(
        policy=spec.label,
        repeat=repeat,
        seed=config.seed,
        agents=config.agents,
        # The rounds it actually ran (plateau forgetting may run more or fewer).
        rounds=int(getattr(summary, "rounds", config.rounds)),
        best_score=_finite(summary.best_score),
        seed_score=_finite(summary.seed_score),
        cost_usd=float(summary.cost_usd or 0.0),
        tokens=int(summary.input_tokens or 0) + int(summary.output_tokens or 0),
        turns=int(summary.turns),
        wall_s=round(wall_s, 3),
        run_dir=str(summary.run_dir),
        best_rescored=_finite(getattr(summary, "best_rescored", None)),
    )


def compare_policies(
    base: SearchConfig,
    *,
    policies: Sequence[str],
    repeats: int,
    out: Path | None = None,
    run: RunFn = run_search,
    progress: ProgressFn | None = None,
    plot: bool = True,
) -> Comparison:
    """Run every policy ``repeats`` times at ``base``'s total budget; aggregate and write.

    ``base`` supplies the task, agent, budget and first seed; its ``agents``/``rounds`` are
    what the multi-agent / multi-round policies use, its ``forget_on_plateau`` what the
    ``+plateau`` policies use.  Runs go to ``out/LABEL/seed-S``.  Every run's config is
    validated before the first run starts, so a bad combination fails in seconds, not
    after an hour.  ``run`` defaults to ``run_search``.  Without ``out``, the comparison
    gets a folder of its own, ``runs/compare-<UTC time>`` (``-2``, ``-3``… if taken, even
    for two comparisons started together), as ``search run`` does.
    """
    if repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {repeats}")
    specs = policy_specs(policies, base.forget_on_plateau)
    labels = [s.label for s in specs]
    if out is None:
        out = new_dir(Path("runs") / f"compare-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}")
    if (out / "compare.json").exists():
        raise InvalidInput("a comparison already lives here; choose another --out", file=out)
    seeds = [base.seed + k for k in range(repeats)]
    plan = _plan_runs(base, specs, seeds, out)
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
    for index, (k, spec, config) in enumerate(plan, start=1):
        if progress:
            progress(Progress(index, len(plan), spec.label, config.seed))
        started = time.monotonic()
        summary = run(config)
        outcome = _outcome(spec, k, config, summary, wall_s=time.monotonic() - started)
        comparison.outcomes.append(outcome)
        comparison.rows = aggregate(
            comparison.outcomes,
            labels,
            agents=base.agents,
            rounds=base.rounds,
            minimize=base.minimize,
        )
        write_outputs(comparison)
        if progress:
            progress(Progress(index, len(plan), spec.label, config.seed, outcome))
    comparison.complete = True
    if plot:
        # Imported here: matplotlib is slow to import and tests with fake runs skip it.
        from evolving_agent.search.compare_plot import PlottedRun, plot_comparison

        comparison.plot = plot_comparison(
            [PlottedRun(o.policy, o.run_dir, o.seed_score, o.final) for o in comparison.outcomes],
            labels,
            minimize=comparison.minimize,
            repeats=comparison.repeats,
            out=comparison.out,
        )
    write_outputs(comparison)
    return comparison


# -- rendering -------------------------------------------------------------------------


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2g}" if value < 0.01 else f"{value:.2f}"


def _versus(test: Versus | None) -> str:
    if test is None or test.gain_pct is None:
        return "—"
    cell = f"{test.gain_pct:+.1f}%"
    if test.ci_low is not None and test.ci_high is not None:
        cell += f" [{test.ci_low:+.1f}, {test.ci_high:+.1f}]"
    return cell + f" p={_p(test.p_value)}"


def format_table(comparison: Comparison) -> str:
    """The markdown table printed by the CLI and kept in ``compare.md``."""
    refs = comparison.references
    header = ["policy", "agents × rounds", "runs", "best (mean ± sd)", "95% CI"]
    # Offline agents report tokens but no dollars; show whichever says something.
    paid = any(row.mean_cost_usd > 0 for row in comparison.rows)
    header += [f"vs {r}" for r in refs] + ["mean cost" if paid else "mean tokens", "mean turns"]
    rows = []
    for row in comparison.rows:
        best = fmt_number(row.mean) + ("" if row.sd is None else f" ± {row.sd:.3g}")
        ci = "—" if row.ci_low is None else f"[{row.ci_low:.6g}, {row.ci_high:.6g}]"
        runs = f"{row.runs}" if row.scored == row.runs else f"{row.scored}/{row.runs} scored"
        cells = [row.policy, f"{row.agents} × {row.rounds_label}", runs, best, ci]
        for ref in refs:
            cells.append("—" if ref == row.policy else _versus(row.tests.get(ref)))
        spend = f"${row.mean_cost_usd:.4f}" if paid else f"{row.mean_tokens:.0f}"
        cells += [spend, f"{row.mean_turns:g}"]
        rows.append(cells)
    return "\n".join(markdown_table(header, rows)) + "\n"


def _smallest_p_note(comparison: Comparison) -> str:
    sizes = {row.policy: row.scored for row in comparison.rows}
    floors = []
    for row in comparison.rows:
        for ref in row.tests:
            n, m = sizes[row.policy], sizes[ref]
            if n and m:
                floors.append(stats.min_permutation_p(n, m))
    if not floors:
        return ""
    low = min(floors)
    note = f"  With these run counts the smallest possible p is {_p(low)}"
    if low > 0.05:
        note += "; no difference can reach p < 0.05 — add repeats"
    return note + "."


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
    value = (
        "each run's best re-scored after the search"
        if any(row.rescored for row in comparison.rows)
        else "each run's best score"
    )
    paragraphs = [
        f"# Policy comparison{state}",
        f"{lead} ({budget}); {comparison.repeats} repeat(s) per policy with seeds {seeds}; "
        f"{better} scores are better.",
        f"Statistics of {value}: mean ± sample sd, and a 95% bootstrap interval of the "
        "mean.  \"vs X\" is the improvement of the mean over X's, in percent of X's "
        "(positive = better), with its 95% bootstrap interval and a two-sided "
        "permutation-test p-value." + _smallest_p_note(comparison),
    ]
    if comparison.plot:
        paragraphs.append(f"![final results per policy, best-so-far]({comparison.plot.name})")
    return "\n\n".join(paragraphs) + "\n\n" + format_table(comparison)
