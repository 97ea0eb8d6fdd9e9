"""``compare.png``: each policy's best-so-far against the budget, median and band over seeds.

For every run the best-so-far curve is read from its ``log.jsonl`` the way the run
itself counted it (``report.run_best_steps``: a turn moves the best only when the run
marked it ``improved``, i.e. past the noise floor).  Per policy the plot shows the
median over seeds and a band from the lowest to the highest run, against turns (the
budget every policy shares) and, when the agent reported any, against spend (dollars,
else tokens), evaluated on a common grid.  Runs whose log cannot be read are left out;
with no readable run at all there is no plot.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evolving_agent.errors import InvalidInput
from evolving_agent.extras import require
from evolving_agent.search.report import read_log, run_best_steps
from evolving_agent.search.state import TurnRecord

if TYPE_CHECKING:
    from matplotlib.axes import Axes

GRID = 200


def _step_at(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """The value of a post-step curve at ``x`` (its first value before it starts)."""
    value = ys[0]
    for xi, yi in zip(xs, ys, strict=True):
        if xi > x:
            break
        value = yi
    return value


def _spend(records: Sequence[TurnRecord], kind: str) -> list[float]:
    total, out = 0.0, []
    for r in records:
        if kind == "cost_usd":
            total += r.cost_usd or 0.0
        else:
            total += (r.input_tokens or 0) + (r.output_tokens or 0)
        out.append(total)
    return out


@dataclass(frozen=True)
class PlottedRun:
    """What the plot needs of one run of a comparison."""

    policy: str  # the label the run is drawn under
    run_dir: str
    seed_score: float | None


def plot_comparison(
    outcomes: Sequence[PlottedRun],
    labels: Sequence[str],
    *,
    minimize: bool,
    repeats: int,
    out: Path,
) -> Path | None:
    """Write ``out/compare.png``; its path, or None when no run's log could be read."""
    runs: dict[str, list[tuple[list[TurnRecord], float | None]]] = {label: [] for label in labels}
    for o in outcomes:
        try:
            records = read_log(Path(o.run_dir) / "log.jsonl")
        except (InvalidInput, OSError):
            continue
        runs.setdefault(o.policy, []).append((records, o.seed_score))
    if not any(runs.values()):
        return None
    everything = [r for rs in runs.values() for recs, _ in rs for r in recs]
    kind = None
    if any((r.cost_usd or 0) > 0 for r in everything):
        kind = "cost_usd"
    elif any((r.input_tokens or 0) + (r.output_tokens or 0) for r in everything):
        kind = "tokens"

    require("matplotlib", "the comparison's plot")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13 if kind else 7, 5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True) if kind else [fig.subplots(1, 1)]
    max_turns = max(len(recs) for rs in runs.values() for recs, _ in rs)
    max_spend = (
        max(_spend(recs, kind)[-1] for rs in runs.values() for recs, _ in rs if recs)
        if kind
        else 0.0
    )
    seeds: list[float] = []
    later: list[float] = []  # every value after turn 0, for the zoom
    for index, label in enumerate(labels):
        color = f"C{index % 10}"
        curves = []
        for records, seed in runs.get(label, []):
            values = run_best_steps(records, seed, minimize=minimize)
            if values:
                curves.append((records, values))
        if not curves:
            continue
        # Against turns: value after t turns (t = 0 is the seed), held after a run ends.
        xs = list(range(max_turns + 1))
        grid = [[v[min(t, len(v) - 1)] for t in xs] for _, v in curves]
        seeds += [v[0] for _, v in curves]
        later += [x for _, v in curves for x in v[1:]]
        _draw(axes[0], xs, grid, label, color)
        if kind:
            sx = [max_spend * i / GRID for i in range(GRID + 1)]
            sgrid = []
            for records, values in curves:
                spend = [0.0, *_spend(records, kind)]
                sgrid.append([_step_at(spend, values, x) for x in sx])
            _draw(axes[1], sx, sgrid, label, color)
    better = "lower" if minimize else "higher"
    axes[0].set_xlabel("turns (all agents)")
    axes[0].set_ylabel(f"best score ({better} is better)")
    axes[0].set_title("best-so-far vs turns")
    if kind:
        axes[1].set_xlabel("cost (USD)" if kind == "cost_usd" else "tokens (input + output)")
        axes[1].set_title("best-so-far vs spend")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="best", fontsize="small")
    title = f"median over {repeats} seed(s); band = lowest to highest run"
    zoom = _zoom(seeds, later)
    if zoom is not None:
        axes[0].set_ylim(*zoom)  # shared with the spend axes
        title += "; the seed's score is off the scale"
    fig.suptitle(title, fontsize=10)
    path = out / "compare.png"
    fig.savefig(path, dpi=110)
    return path


def _zoom(seeds: Sequence[float], later: Sequence[float]) -> tuple[float, float] | None:
    """Y limits leaving out a seed far worse than every candidate (else None): a trivial
    seed ten times worse would flatten every difference between policies into one line."""
    if not seeds or not later:
        return None
    lo, hi = min(later), max(later)
    span = hi - lo or abs(hi) * 0.01 or 1.0
    if all(lo - 3 * span <= s <= hi + 3 * span for s in seeds):
        return None
    return lo - 0.08 * span, hi + 0.08 * span


def _draw(
    ax: Axes, xs: Sequence[float], grid: Sequence[Sequence[float]], label: str, color: str
) -> None:
    """Median line and a band from the lowest to the highest run."""
    columns = list(zip(*grid, strict=True))
    med = [statistics.median(col) for col in columns]
    ax.step(xs, med, where="post", linewidth=2, label=label, color=color)
    lo = [min(col) for col in columns]
    hi = [max(col) for col in columns]
    ax.fill_between(xs, lo, hi, step="post", alpha=0.2, color=color)
