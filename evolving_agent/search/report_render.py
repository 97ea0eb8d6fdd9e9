"""Rendering a ``RunReport`` three ways: the plot (PNG), markdown and one HTML page,
and :func:`write_report`, which analyses a run and writes all three.

The analysis lives in ``report.py`` (``load_run``); this module only turns its result
into text and pixels, so a new view never touches how a run is read.  matplotlib is
imported inside ``plot``: it is slow to import and only the plot needs it.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from evolving_agent.errors import InvalidInput
from evolving_agent.extras import require
from evolving_agent.search.certify import report_lines
from evolving_agent.search.forecast import report_lines as forecast_lines
from evolving_agent.search.holdout import report_lines as holdout_lines
from evolving_agent.search.report import (
    Failures,
    ReportFiles,
    RunReport,
    load_run,
    score_gain,
)
from evolving_agent.search.text import fmt_number, markdown_table


def _pct(value: float | None) -> str:
    if value is None:
        return "—"
    # Late-round gains are often a fraction of a percent; keep them visible.
    return f"{value:+.1f}%" if abs(value) >= 1 or value == 0 else f"{value:+.2g}%"


def _zoomed_ylim(report: RunReport) -> tuple[float, float] | None:
    """Y limits leaving out a seed score far from every candidate's, else None.

    A seed that scores ten times worse than the first candidates (a trivial TSP tour)
    would flatten everything that happens afterwards into one line.
    """
    if report.seed_score is None:
        return None
    later = [v for c in [report.team, *report.agent_curves] for v in c.values[1:]]
    if not later:
        return None
    lo, hi = min(later), max(later)
    span = hi - lo or abs(hi) * 0.01 or 1.0
    if lo - 3 * span <= report.seed_score <= hi + 3 * span:
        return None
    return lo - 0.08 * span, hi + 0.08 * span


def plot(report: RunReport, path: Path) -> None:
    """Best-so-far against turns and against spend; one line per agent plus the team."""
    require("matplotlib", "the search report's plot")
    # The object API with the Agg canvas: no pyplot global state, no display needed.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(13, 5), layout="constrained")
    FigureCanvasAgg(fig)
    ax_turns, ax_spend = fig.subplots(1, 2, sharey=True)
    better = "lower" if report.minimize else "higher"
    axes = ((ax_turns, "turns", "turns (all agents)"), (ax_spend, "spend", report.spend.label))
    for ax, xkey, xlabel in axes:
        for curve in report.agent_curves:
            xs = curve.turns if xkey == "turns" else curve.spend
            ax.step(xs, curve.values, where="post", linewidth=1.2, alpha=0.75, label=curve.label)
        xs_team = report.team.turns if xkey == "turns" else report.team.spend
        ax.step(
            xs_team, report.team.values, where="post", color="black", linewidth=2.4, label="team"
        )
        for k, fst in enumerate(report.forgets):
            x = fst.at_turn if xkey == "turns" else report.spend.cumulative[fst.at_turn - 1]
            ax.axvline(
                x,
                color="tab:red",
                linestyle="--",
                linewidth=1,
                label="forget" if k == 0 else None,
            )
        ax.set_xlabel(xlabel)
        ax.set_title(f"best-so-far vs {xkey}")
        ax.grid(True, alpha=0.3)
    ax_turns.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_turns.set_ylabel(f"best score ({better} is better)")
    title = f"{report.run_dir.name}: policy {report.policy}, {len(report.records)} turns"
    zoom = _zoomed_ylim(report)
    if zoom is not None:
        ax_turns.set_ylim(*zoom)  # shared with the spend axes
        title += f"; the seed's {fmt_number(report.seed_score)} is off the scale"
    ax_turns.legend(loc="best", fontsize="small")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)


def _summary_rows(report: RunReport) -> list[tuple[str, str]]:
    gain = score_gain(report.seed_score, report.best_score, report.minimize)
    pct = gain / abs(report.seed_score) * 100 if gain is not None and report.seed_score else None
    rows = [
        ("policy", report.policy),
        ("direction", f"{report.direction} ({'lower' if report.minimize else 'higher'} is better)"),
        ("agents", str(report.agents)),
        ("rounds", _rounds_cell(report)),
        ("turns", str(len(report.records))),
        ("seed score", fmt_number(report.seed_score)),
        ("best score", fmt_number(report.best_score)),
        ("improvement over seed", f"{fmt_number(gain)} ({_pct(pct)})"),
        ("cost", f"${report.total_cost_usd:.4f}"),
        ("tokens (input + output)", str(report.total_tokens)),
        ("spend axis", report.spend.label),
    ]
    if report.isolation is not None:
        rows.append(("isolation", _isolation_cell(report)))
    if report.best_rescored is not None:
        rows.insert(
            rows.index(("best score", fmt_number(report.best_score))) + 1,
            (
                "best re-scored",
                f"{fmt_number(report.best_rescored)} (median of {report.rescore_n} fresh score(s) "
                "after the search; the best score above won a selection among noisy scores)",
            ),
        )
    if report.noise_floor is not None:
        rows.append(("noise floor", fmt_number(report.noise_floor)))
    return rows


_ISOLATION = {
    "bwrap": "bwrap (agents and scorers confined)",
    "scorers": "scorers (scorers under bwrap; the agents ran outside it)",
    "none": "none (agents and scorers ran as plain processes of the user)",
}


def _isolation_cell(report: RunReport) -> str:
    cell = _ISOLATION.get(report.isolation or "", report.isolation or "")
    return cell + ("; rounds were restarts, not forgetting" if report.forgotten is False else "")


def _rounds_cell(report: RunReport) -> str:
    ran = len(report.rounds)
    planned = report.rounds_planned
    if report.forget_on_plateau is not None:
        return (
            f"{ran} ({planned} planned; plateau forgetting after "
            f"{report.forget_on_plateau} turns without improvement ends rounds early and "
            "hands their turns on)"
            if planned
            else f"{ran} (plateau forgetting on)"
        )
    return f"{ran}" + (f" of {planned} planned" if planned else "")


# The columns the round and agent tables share: turns that failed without the agent
# failing, and what the agent's CLI refused or saw fail.
_FAILURE_HEADER = ("unscored", "denied", "failed commands")


def _failure_cells(failures: Failures) -> list[str]:
    return [str(failures.unscored), str(failures.denied), str(failures.failed_commands)]


def _round_rows(report: RunReport) -> list[list[str]]:
    rows = []
    for r in report.rounds:
        gain = fmt_number(r.gain)
        floor = report.noise_floor
        if r.gain and floor and abs(r.gain) <= floor:
            gain += " (within noise)"
        rows.append(
            [
                str(r.round),
                str(r.turns),
                str(r.empty),
                str(r.failed),
                *_failure_cells(r.failures),
                fmt_number(r.start_best),
                fmt_number(r.end_best),
                gain,
                _pct(r.gain_pct),
                f"${r.cost_usd:.4f}",
                r.ended or "—",
            ]
        )
    return rows


_ROUND_HEADER = (
    "round",
    "turns",
    "empty turns",
    "failed",
    *_FAILURE_HEADER,
    "best at start",
    "best at end",
    "gain",
    "gain %",
    "cost",
    "ended by",
)
_FORGET_HEADER = ("forget before round", "after turn", "reason")
_AGENT_HEADER = (
    "agent",
    "turns",
    "improved",
    "improved, flagged",
    "failed",
    *_FAILURE_HEADER,
)


def _agent_rows(report: RunReport) -> list[list[str]]:
    return [
        [
            str(a.agent),
            str(a.turns),
            str(a.improved),
            str(a.failures.improved_flagged),
            str(a.failures.failed),
            *_failure_cells(a.failures),
        ]
        for a in report.agent_table
    ]


_AGENT_NOTE = (
    "failed: the agent failed (after retries); unscored: the scorer gave no number; "
    "denied: tool calls the agent's CLI refused; failed commands: shell commands that "
    "exited non-zero; improved, flagged: turns that improved the best while a call was "
    "denied or the agent reported an error (their candidate was judged and counts)."
)
_EDIT_HEADER = ("proposals", "sessions", "n", "median lines changed")


def _forget_rows(report: RunReport) -> list[list[str]]:
    return [[str(f.round), str(f.at_turn), f.reason] for f in report.forgets]


def _forget_note(report: RunReport) -> str:
    if report.forgotten is False:
        return (
            f"Isolation {report.isolation}: this run's round boundaries are restarts, not "
            "forgetting -- its agents could read earlier rounds' candidates and records by "
            "absolute path (only --sandbox bwrap with a command agent keeps them out)."
            + (" Restarts in this run:" if report.forgets else "")
        )
    if report.forgets and report.policy == "keep-notes":
        return "Restarts in this run (keep-notes keeps sessions, history and the notes file):"
    return "No forgets in this run." if not report.forgets else "Forgets in this run:"


def _edit_rows(report: RunReport) -> list[list[str]]:
    e = report.edits
    return [
        [
            f"first {e.window} of a fresh session",
            str(e.sessions),
            str(e.fresh_n),
            fmt_number(e.median_fresh),
        ],
        [
            f"next {e.window} of the continued session",
            str(e.continued_sessions),
            str(e.continued_n),
            fmt_number(e.median_continued),
        ],
    ]


def _edit_note(report: RunReport) -> str:
    e = report.edits
    how = (
        "its diff from the nearest of its base, its own best earlier candidate and each "
        "peer's best (adopting a visible candidate is not an edit"
        + (f"; {e.adopted} proposal(s) shrank that way)" if e.adopted else ")")
        if e.measured == "git"
        else "lines changed as logged (the round repositories are gone, so adopting a "
        "peer's candidate could not be discounted)"
    )
    note = (
        f"The paper's figure: lines changed by the first {e.window} non-empty proposals "
        f"of each fresh session against the next {e.window} of the same session.  "
        f"{e.excluded_empty} empty turn(s) are left out"
        + (f", and {e.pure_adoptions} that only adopted a candidate" if e.pure_adoptions else "")
        + f"; a proposal's size is {how}."
    )
    if e.continued_n == 0:
        note += f"  No session got past {e.window} non-empty proposals in this run."
    return note


def render_markdown(report: RunReport, png_name: str) -> str:
    lines = [f"# Search report: {report.run_dir.name}", ""]
    lines += [f"> {w}" for w in report.warnings] + ([""] if report.warnings else [])
    lines += [f"![best-so-far]({png_name})", ""]
    lines += markdown_table(("", ""), [list(r) for r in _summary_rows(report)]) + [""]
    lines += report_lines(report.run_dir, report.isolation)  # canary rounds, if probed
    lines += ["## Per round", ""] + markdown_table(_ROUND_HEADER, _round_rows(report)) + [""]
    lines += ["## Per agent", "", _AGENT_NOTE, ""]
    lines += markdown_table(_AGENT_HEADER, _agent_rows(report)) + [""]
    lines += ["## Edit size: fresh vs continued sessions", "", _edit_note(report), ""]
    lines += markdown_table(_EDIT_HEADER, _edit_rows(report)) + [""]
    lines += ["## Forgets", "", _forget_note(report), ""]
    if report.forgets:
        lines += markdown_table(_FORGET_HEADER, _forget_rows(report)) + [""]
    lines += holdout_lines(report.run_dir, minimize=report.minimize, floor=report.noise_floor or 0)
    lines += forecast_lines(
        report.records, seed_score=report.seed_score, rounds=report.rounds_planned,
        minimize=report.minimize,
    )  # fmt: skip
    lines += ["## Best candidate vs seed", "", report.diff.note + ".", ""]
    if report.diff.text:
        lines += ["```diff", report.diff.text.rstrip("\n"), "```", ""]
    return "\n".join(lines)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(report: RunReport, png: bytes) -> str:
    """One self-contained page: the plot inline (base64) and the same tables as the markdown."""
    title = html.escape(f"Search report: {report.run_dir.name}")
    img = base64.b64encode(png).decode("ascii")
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>",
        "<style>body{font-family:sans-serif;max-width:1400px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;"
        "padding:.3em .6em;text-align:left}pre{background:#f6f6f6;padding:1em;overflow:auto}"
        "img{max-width:100%}.warn{color:#a40}</style></head><body>",
        f"<h1>{title}</h1>",
        *(f"<p class='warn'>{html.escape(w)}</p>" for w in report.warnings),
        f"<img alt='best-so-far' src='data:image/png;base64,{img}'>",
        _html_table(("", ""), _summary_rows(report)),
        "<h2>Per round</h2>",
        _html_table(_ROUND_HEADER, _round_rows(report)),
        "<h2>Per agent</h2>",
        f"<p>{html.escape(_AGENT_NOTE)}</p>",
        _html_table(_AGENT_HEADER, _agent_rows(report)),
        "<h2>Edit size: fresh vs continued sessions</h2>",
        f"<p>{html.escape(_edit_note(report))}</p>",
        _html_table(_EDIT_HEADER, _edit_rows(report)),
        "<h2>Forgets</h2>",
        f"<p>{html.escape(_forget_note(report))}</p>",
    ]
    if report.forgets:
        parts.append(_html_table(_FORGET_HEADER, _forget_rows(report)))
    parts += ["<h2>Best candidate vs seed</h2>", f"<p>{html.escape(report.diff.note)}.</p>"]
    if report.diff.text:
        parts.append(f"<pre>{html.escape(report.diff.text)}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(run_dir: Path, *, out: Path | None = None) -> ReportFiles:
    """Analyse ``run_dir`` and write ``report.png``, ``report.md``, ``report.html`` into
    ``out`` (default: the run dir).  Returns the paths and the analysis."""
    report = load_run(run_dir)
    dest = out if out is not None else run_dir
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cannot create output directory: {exc}", file=dest) from exc
    png, md, page = dest / "report.png", dest / "report.md", dest / "report.html"
    plot(report, png)
    md.write_text(render_markdown(report, png.name), encoding="utf-8")
    page.write_text(render_html(report, png.read_bytes()), encoding="utf-8")
    return ReportFiles(png=png, markdown=md, html=page, report=report)
