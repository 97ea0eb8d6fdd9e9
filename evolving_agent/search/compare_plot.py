"""``compare.png``: the answer first -- each policy's final results -- then how they got there.

The first panel shows, per policy, every run's final best (re-scored when it was) as a
point, their mean as a bar and its 95% bootstrap interval as a whisker, on a y-axis
scaled to the spread of those final results (not to the seed's score, which would
squeeze every difference into a line).  The second panel shows the best-so-far curves,
the median over seeds per policy, against turns (the budget every policy shares) and a
third, when the agent reported any, against spend (dollars, else tokens), both zoomed
to the values after the seed.  For every run the curve is read from its
``log.jsonl`` the way the run counted it (``report.run_best_steps``: a turn moves the
best only when the run marked it ``improved``, i.e. past the noise floor).  Colours and
markers differ per policy, so seven stay apart.  Runs whose log cannot be read are left
out of the curves; with nothing to show there is no plot.
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
from evolving_agent.search.rundir import TurnRecord

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
    final: float | None = None  # its final best (re-scored if it was)


MARKERS = "osD^vP*Xh<>"


def plot_comparison(
    outcomes: Sequence[PlottedRun],
    labels: Sequence[str],
    *,
    minimize: bool,
    repeats: int,
    out: Path,
) -> Path | None:
    """Write ``out/compare.png``; its path, or None when there is nothing to show."""
    runs: dict[str, list[tuple[list[TurnRecord], float | None]]] = {label: [] for label in labels}
    finals: dict[str, list[float]] = {label: [] for label in labels}
    for o in outcomes:
        if o.final is not None:
            finals.setdefault(o.policy, []).append(o.final)
        try:
            records = read_log(Path(o.run_dir) / "log.jsonl")
        except (InvalidInput, OSError):
            continue
        runs.setdefault(o.policy, []).append((records, o.seed_score))
    if not any(runs.values()) and not any(finals.values()):
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

    panels = 3 if kind else 2
    fig = Figure(figsize=(5.5 * panels, 5.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = list(fig.subplots(1, panels))
    better = "lower" if minimize else "higher"
    _draw_finals(axes[0], labels, finals, better)
    curve_axes = axes[1:]
    max_turns = max((len(recs) for rs in runs.values() for recs, _ in rs), default=0)
    max_spend = (
        max(_spend(recs, kind)[-1] for rs in runs.values() for recs, _ in rs if recs)
        if kind
        else 0.0
    )
    seeds: list[float] = []
    later: list[float] = []  # every value after turn 0, for the zoom
    for index, label in enumerate(labels):
        color, marker = f"C{index % 10}", MARKERS[index % len(MARKERS)]
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
        _draw(curve_axes[0], xs, grid, label, color, marker)
        if kind:
            sx = [max_spend * i / GRID for i in range(GRID + 1)]
            sgrid = []
            for records, values in curves:
                spend = [0.0, *_spend(records, kind)]
                sgrid.append([_step_at(spend, values, x) for x in sx])
            _draw(curve_axes[1], sx, sgrid, label, color, marker)
    curve_axes[0].set_xlabel("turns (all agents)")
    curve_axes[0].set_ylabel(f"best so far ({better} is better)")
    curve_axes[0].set_title("best-so-far vs turns (median over seeds)")
    if kind:
        curve_axes[1].set_xlabel("cost (USD)" if kind == "cost_usd" else "tokens (input + output)")
        curve_axes[1].set_title("best-so-far vs spend (median over seeds)")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    if curve_axes[0].get_legend_handles_labels()[0]:  # no curve drawn: no legend, no warning
        curve_axes[0].legend(loc="best", fontsize="small")
    zoom = _zoom(seeds, later)
    note = ""
    if zoom is not None:
        for ax in curve_axes:
            ax.set_ylim(*zoom)
        note = "; curves zoomed past the seed's score"
    fig.suptitle(f"{repeats} seed(s) per policy{note}", fontsize=10)
    path = out / "compare.png"
    fig.savefig(path, dpi=110)
    return path


def _draw_finals(
    ax: Axes, labels: Sequence[str], finals: dict[str, list[float]], better: str
) -> None:
    """Every run's final best as a point; the mean as a bar, its 95% interval as a whisker;
    the y-axis spans the final results only."""
    from evolving_agent.search.stats import bootstrap_ci

    values = [v for label in labels for v in finals.get(label, [])]
    for index, label in enumerate(labels):
        mine = finals.get(label, [])
        if not mine:
            continue
        color, marker = f"C{index % 10}", MARKERS[index % len(MARKERS)]
        # Spread the points a little sideways so equal finals stay visible.
        offsets = [((k % 5) - 2) * 0.06 for k in range(len(mine))]
        ax.scatter([index + o for o in offsets], mine, color=color, marker=marker, s=28,
                   alpha=0.75, zorder=3)  # fmt: skip
        mean = statistics.fmean(mine)
        ci = bootstrap_ci(mine)
        ax.hlines(mean, index - 0.3, index + 0.3, color=color, linewidth=2.5, zorder=4)
        if ci is not None and len(mine) > 1:
            ax.vlines(index + 0.34, ci.low, ci.high, color=color, linewidth=1.5, zorder=4)
            ax.hlines([ci.low, ci.high], index + 0.29, index + 0.39, color=color, linewidth=1.5)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize="small")
    ax.set_xlim(-0.6, len(labels) - 0.4)
    if values:
        lo, hi = min(values), max(values)
        span = hi - lo or abs(hi) * 0.01 or 1.0
        ax.set_ylim(lo - 0.12 * span, hi + 0.12 * span)
    ax.set_ylabel(f"final best ({better} is better)")
    ax.set_title("final results: runs, mean, 95% CI")


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
    ax: Axes,
    xs: Sequence[float],
    grid: Sequence[Sequence[float]],
    label: str,
    color: str,
    marker: str,
) -> None:
    """The median over seeds as a step line (a marker at the end, to tell the lines apart;
    no band: seven overlapping bands hide every line)."""
    columns = list(zip(*grid, strict=True))
    med = [statistics.median(col) for col in columns]
    ax.step(xs, med, where="post", linewidth=1.8, label=label, color=color)
    ax.plot([xs[-1]], [med[-1]], marker=marker, color=color, markersize=7)
