"""What a finished (or interrupted) search run did, as a plot, markdown and HTML.

``load_run`` reads a run directory (``log.jsonl``, ``summary.json``, ``run.json``,
``seed.json``, ``best/`` and the seed commit in round 1's repository) into a
``RunReport``: best-so-far curves for the team and each agent, the spend axis,
per-round gains and empty turns, the edit sizes either side of every forget and the
best candidate's diff from the seed.  ``write_report`` renders that one object three
ways (``report.png``, ``report.md``, ``report.html``); nothing here prints.

The log is read with its own lenient view (``LogEntry``: unknown fields ignored, a torn
last line skipped, a missing ``summary.json`` made up from ``run.json`` and
``seed.json``) rather than the runner's strict ``TurnRecord``, because a crashed or
older run is exactly the one a person wants to look at; what cannot be read is an
``InvalidInput`` naming the file and line, on one line.
"""

from __future__ import annotations

import base64
import difflib
import html
import json
import math
import statistics
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from evolving_agent.errors import InvalidInput, NotFound
from evolving_agent.search.rounds import seed_repo
from evolving_agent.search.state import RunDir, check_version
from evolving_agent.search.workspace import export_commit

# The paper compares the first 10 proposals after a forget with the last 10 before it.
EDIT_WINDOW = 10
# A diff longer than this is cut in the report; the full one is a `git diff` away.
MAX_DIFF_LINES = 400
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache"}


class LogEntry(pydantic.BaseModel, extra="ignore"):
    """One line of ``log.jsonl``.  Extra fields are ignored so newer runners stay readable."""

    seq: int | None = None  # global order of completion
    round: int
    agent: int | str
    turn: int
    session: str | None = None
    commit: str | None = None
    score: float | None = None
    feedback: str | None = None
    empty: bool = False
    lines_changed: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    wall_s: float | None = None
    ts: str | None = None
    improved: bool | None = None
    forget: str | bool | None = None

    @property
    def ok_score(self) -> float | None:
        """The score, or None for a failed candidate (null or not finite)."""
        if self.score is None or not math.isfinite(self.score):
            return None
        return self.score


@dataclass(frozen=True)
class Curve:
    """A best-so-far step curve: ``values[i]`` holds from ``turns[i]`` (and ``spend[i]``) on."""

    label: str
    turns: list[int]
    spend: list[float]
    values: list[float]


@dataclass(frozen=True)
class SpendAxis:
    """Cumulative spend after each turn, in the first unit the run actually reported."""

    kind: str  # "cost_usd" | "tokens" | "wall_s"
    label: str
    cumulative: list[float]


@dataclass(frozen=True)
class RoundStats:
    round: int
    turns: int
    empty: int
    failed: int
    cost_usd: float
    start_best: float | None
    end_best: float | None
    gain: float | None  # improvement in the run's direction: positive is better
    gain_pct: float | None


@dataclass(frozen=True)
class ForgetStats:
    """Edit sizes in the turns either side of one forget boundary."""

    round: int  # the round that starts fresh
    at_turn: int  # turns completed when the forget happened
    reason: str
    before_n: int
    after_n: int
    median_before: float | None
    median_after: float | None


@dataclass(frozen=True)
class SeedDiff:
    """The best candidate against the seed, or why that could not be shown."""

    text: str | None
    note: str
    files_changed: int = 0


@dataclass
class RunReport:
    run_dir: Path
    policy: str
    minimize: bool
    agents: int | None
    rounds_planned: int | None
    seed_score: float | None
    best_score: float | None
    noise_floor: float | None
    records: list[LogEntry]
    spend: SpendAxis
    team: Curve
    agent_curves: list[Curve]
    rounds: list[RoundStats]
    forgets: list[ForgetStats]
    diff: SeedDiff
    total_cost_usd: float
    total_tokens: int
    warnings: list[str] = field(default_factory=list)

    @property
    def direction(self) -> str:
        return "minimize" if self.minimize else "maximize"


@dataclass(frozen=True)
class ReportFiles:
    png: Path
    markdown: Path
    html: Path
    report: RunReport


# -- reading ---------------------------------------------------------------------------


def _read_json_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read: {exc}", file=path) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON: {exc.msg}", file=path, line=exc.lineno) from exc
    if not isinstance(data, dict):
        raise InvalidInput("expected a JSON object", file=path)
    check_version(data, path, reader="report")
    return data


def _first_error(exc: pydantic.ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    return f"{where}: {err['msg']}"


def read_log(path: Path) -> list[LogEntry]:
    """Parse ``log.jsonl``.  A truncated last line (a crash mid-write) is skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read: {exc}", file=path) from exc
    records: list[LogEntry] = []
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            if i == last and records:
                continue  # the runner died while appending; everything before is sound
            raise InvalidInput(f"not valid JSON: {exc.msg}", file=path, line=i + 1) from exc
        if not isinstance(raw, dict):
            raise InvalidInput("expected a JSON object", file=path, line=i + 1)
        check_version(raw, path, line=i + 1, reader="report")
        try:
            records.append(LogEntry.model_validate(raw))
        except pydantic.ValidationError as exc:
            raise InvalidInput(_first_error(exc), file=path, line=i + 1) from exc
    if not records:
        raise InvalidInput("no turns recorded", file=path)
    if all(r.seq is not None for r in records):
        return sorted(records, key=lambda r: r.seq or 0)
    # Rounds run one after another; within a round keep the order turns finished in.
    return sorted(records, key=lambda r: r.round)


def _opt_float(data: dict[str, Any], key: str, path: Path) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{key}: expected a number, got {value!r}", file=path)
    return float(value) if math.isfinite(value) else None


def _opt_int(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# -- analysis --------------------------------------------------------------------------


def _better(a: float, b: float, minimize: bool) -> bool:
    return a < b if minimize else a > b


def _gain(start: float | None, end: float | None, minimize: bool) -> float | None:
    if start is None or end is None:
        return None
    return start - end if minimize else end - start


def spend_axis(records: Sequence[LogEntry]) -> SpendAxis:
    """Dollars if any were reported, else tokens, else summed agent wall time."""

    def cumulative(values: Iterator[float]) -> list[float]:
        out: list[float] = []
        total = 0.0
        for v in values:
            total += v
            out.append(total)
        return out

    if any((r.cost_usd or 0) > 0 for r in records):
        return SpendAxis("cost_usd", "cost (USD)", cumulative(r.cost_usd or 0.0 for r in records))
    tokens = [(r.input_tokens or 0) + (r.output_tokens or 0) for r in records]
    if any(tokens):
        return SpendAxis("tokens", "tokens (input + output)", cumulative(float(t) for t in tokens))
    return SpendAxis(
        "wall_s",
        "agent wall time (s, summed over agents)",
        cumulative(r.wall_s or 0.0 for r in records),
    )


def best_so_far(
    records: Sequence[LogEntry],
    spend: Sequence[float],
    *,
    minimize: bool,
    seed_score: float | None,
    label: str,
    agent: int | str | None = None,
) -> Curve:
    """The best score seen so far, one point per turn of ``agent`` (all agents if None).

    The curve starts at turn 0 with the seed's score when it is known.
    """
    turns: list[int] = []
    xs: list[float] = []
    values: list[float] = []
    best = seed_score
    if best is not None:
        turns.append(0)
        xs.append(0.0)
        values.append(best)
    for i, rec in enumerate(records):
        if agent is not None and rec.agent != agent:
            continue
        score = rec.ok_score
        if score is not None and (best is None or _better(score, best, minimize)):
            best = score
        if best is not None:
            turns.append(i + 1)
            xs.append(spend[i])
            values.append(best)
    return Curve(label, turns, xs, values)


def forget_starts(records: Sequence[LogEntry]) -> list[tuple[int, str]]:
    """Indices of the first turn after each forget, with the reason.

    A record whose ``forget`` field is set marks one; a run whose log never mentions
    ``forget`` (an older runner) treats every new round as one.
    """
    marked = any("forget" in r.model_fields_set for r in records)
    starts: list[tuple[int, str]] = []
    seen_rounds: set[int] = set()
    for i in range(1, len(records)):
        rec = records[i]
        if marked:
            # The runner marks a round's first record; should several carry it, one boundary.
            if rec.forget and rec.round not in seen_rounds:
                seen_rounds.add(rec.round)
                starts.append((i, rec.forget if isinstance(rec.forget, str) else "forget"))
        elif rec.round != records[i - 1].round:
            starts.append((i, f"round {rec.round}"))
    return starts


def _median(values: Sequence[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def edit_sizes(
    records: Sequence[LogEntry], starts: Sequence[tuple[int, str]], window: int = EDIT_WINDOW
) -> list[ForgetStats]:
    """Median lines changed in the first ``window`` turns after each forget vs the last
    ``window`` before it, never reaching past the neighbouring forgets."""
    out: list[ForgetStats] = []
    bounds = [0] + [i for i, _ in starts] + [len(records)]
    for k, (i, reason) in enumerate(starts):
        lo, hi = bounds[k], bounds[k + 2]
        before = [r.lines_changed or 0 for r in records[max(lo, i - window) : i]]
        after = [r.lines_changed or 0 for r in records[i : min(hi, i + window)]]
        out.append(
            ForgetStats(
                round=records[i].round,
                at_turn=i,
                reason=reason,
                before_n=len(before),
                after_n=len(after),
                median_before=_median(before),
                median_after=_median(after),
            )
        )
    return out


def round_stats(
    records: Sequence[LogEntry], *, minimize: bool, seed_score: float | None
) -> list[RoundStats]:
    """Per round: turns, empty and failed turns, spend and the team best's gain over it."""
    out: list[RoundStats] = []
    best = seed_score
    for rnd in sorted({r.round for r in records}):
        rows = [r for r in records if r.round == rnd]
        start = best
        for r in rows:
            s = r.ok_score
            if s is not None and (best is None or _better(s, best, minimize)):
                best = s
        gain = _gain(start, best, minimize)
        pct = gain / abs(start) * 100 if gain is not None and start else None
        out.append(
            RoundStats(
                round=rnd,
                turns=len(rows),
                empty=sum(1 for r in rows if r.empty),
                failed=sum(1 for r in rows if r.ok_score is None),
                cost_usd=sum(r.cost_usd or 0.0 for r in rows),
                start_best=start,
                end_best=best,
                gain=gain,
                gain_pct=pct,
            )
        )
    return out


def _tree_files(root: Path) -> dict[str, Path]:
    files: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        files[rel.as_posix()] = path
    return files


def _text_lines(path: Path) -> list[str] | None:
    try:
        return path.read_text(encoding="utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def tree_diff(seed: Path, best: Path) -> tuple[str, int]:
    """A unified diff of two directory trees (text files), and how many files differ."""
    a, b = _tree_files(seed), _tree_files(best)
    chunks: list[str] = []
    changed = 0
    for rel in sorted(a.keys() | b.keys()):
        old = _text_lines(a[rel]) if rel in a else []
        new = _text_lines(b[rel]) if rel in b else []
        if old is None or new is None:
            if rel in a and rel in b and a[rel].read_bytes() == b[rel].read_bytes():
                continue
            changed += 1
            chunks.append(f"Binary files seed/{rel} and best/{rel} differ\n")
            continue
        if old == new:
            continue
        changed += 1
        for line in difflib.unified_diff(
            old,
            new,
            fromfile=f"seed/{rel}" if rel in a else "/dev/null",
            tofile=f"best/{rel}" if rel in b else "/dev/null",
        ):
            if not line.endswith("\n"):
                line += "\n\\ No newline at end of file\n"
            chunks.append(line)
    return "".join(chunks), changed


def _export_seed(run_dir: Path, commit: str, dest: Path) -> bool:
    """Write the seed commit's files from round 1's repository into ``dest``."""
    repo = seed_repo(RunDir(run_dir))
    if not repo.is_dir():
        return False
    try:
        export_commit(repo, commit, dest)
    except InvalidInput:
        return False  # the repository was pruned or rewritten; try the next source
    return True


def seed_diff(run_dir: Path, run_config: dict[str, Any], seed_commit: str | None) -> SeedDiff:
    """Diff ``best/`` against the seed: the seed commit in round 1's repository (where the
    runner keeps it), else the run's ``--candidate`` directory (which may have moved on)."""
    best: Path = RunDir(run_dir).best
    if not best.is_dir():
        return SeedDiff(None, "no best/ directory in the run dir; diff not available")
    with tempfile.TemporaryDirectory(prefix="ea-seed-") as tmp:
        seed = Path(tmp)
        where = f"the seed commit {(seed_commit or '')[:12]}"
        if not (seed_commit and _export_seed(run_dir, seed_commit, seed)):
            candidate = run_config.get("candidate")
            seed = Path(candidate) if isinstance(candidate, str) and candidate else Path()
            workdir = run_config.get("workdir")
            if not seed.is_absolute() and isinstance(workdir, str):
                seed = Path(workdir) / seed
            if not candidate or not seed.is_dir():
                return SeedDiff(
                    None,
                    "the seed candidate is not available (no seed commit in the run dir and "
                    "the run's --candidate directory is gone); diff not shown",
                )
            where = f"the run's --candidate directory {seed} (it may have changed since the run)"
        text, changed = tree_diff(seed, best)
    if not changed:
        return SeedDiff("", f"best candidate is identical to the seed ({where})")
    lines = text.splitlines(keepends=True)
    note = f"{changed} file(s) differ from {where}"
    if len(lines) > MAX_DIFF_LINES:
        text = "".join(lines[:MAX_DIFF_LINES])
        note += f"; diff cut at {MAX_DIFF_LINES} of {len(lines)} lines"
    return SeedDiff(text, note, changed)


def load_run(run_dir: Path) -> RunReport:
    """Read and analyse a run directory.  Raises ``NotFound``/``InvalidInput`` (exit 4)."""
    if not run_dir.is_dir():
        raise NotFound(f"run directory not found: {run_dir}")
    paths = RunDir(run_dir)  # the runner's layout, named in one place
    log: Path = paths.log
    if not log.is_file():
        raise InvalidInput("not a search run directory (no log.jsonl)", file=run_dir)
    records = read_log(log)
    summary_path: Path = paths.summary_json
    config_path: Path = paths.run_json
    seed_path: Path = paths.seed_json
    summary = _read_json_object(summary_path) if summary_path.is_file() else {}
    config = _read_json_object(config_path) if config_path.is_file() else {}
    seed_info = _read_json_object(seed_path) if seed_path.is_file() else {}
    warnings: list[str] = []
    if not summary:
        warnings.append("no summary.json (run unfinished?); figures come from log.jsonl")

    direction = summary.get("direction")
    if direction in ("minimize", "maximize"):
        minimize = direction == "minimize"
    elif isinstance(config.get("minimize"), bool):
        minimize = bool(config["minimize"])
    else:
        raise InvalidInput(
            "cannot tell whether lower or higher scores are better "
            "(no direction in summary.json, no minimize in run.json)",
            file=summary_path if summary else config_path,
        )
    seed_score = _opt_float(summary, "seed_score", summary_path)
    if seed_score is None:
        seed_score = _opt_float(seed_info, "score", seed_path)
    noise_floor = _opt_float(summary, "noise_floor", summary_path)
    if noise_floor is None:
        noise_floor = _opt_float(seed_info, "noise_floor", seed_path)
    seed_commit = seed_info.get("commit")
    spend = spend_axis(records)
    team = best_so_far(
        records, spend.cumulative, minimize=minimize, seed_score=seed_score, label="team"
    )
    agent_ids = sorted({r.agent for r in records}, key=lambda a: (isinstance(a, str), str(a)))
    agent_curves = [
        best_so_far(
            records,
            spend.cumulative,
            minimize=minimize,
            seed_score=seed_score,
            label=f"agent {a}",
            agent=a,
        )
        for a in agent_ids
    ]
    best_score = _opt_float(summary, "best_score", summary_path)
    if best_score is None and team.values:
        best_score = team.values[-1]
    policy = summary.get("policy") or config.get("policy") or "unknown"
    return RunReport(
        run_dir=run_dir,
        policy=str(policy),
        minimize=minimize,
        agents=_opt_int(summary, "agents") or _opt_int(config, "agents") or len(agent_ids),
        rounds_planned=_opt_int(summary, "rounds") or _opt_int(config, "rounds"),
        seed_score=seed_score,
        best_score=best_score,
        noise_floor=noise_floor,
        records=records,
        spend=spend,
        team=team,
        agent_curves=agent_curves,
        rounds=round_stats(records, minimize=minimize, seed_score=seed_score),
        forgets=edit_sizes(records, forget_starts(records)),
        diff=seed_diff(run_dir, config, seed_commit if isinstance(seed_commit, str) else None),
        total_cost_usd=sum(r.cost_usd or 0.0 for r in records),
        total_tokens=sum((r.input_tokens or 0) + (r.output_tokens or 0) for r in records),
        warnings=warnings,
    )


# -- rendering -------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.6g}"


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
        title += f"; the seed's {_fmt(report.seed_score)} is off the scale"
    ax_turns.legend(loc="best", fontsize="small")
    fig.suptitle(title)
    fig.savefig(path, dpi=110)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _summary_rows(report: RunReport) -> list[tuple[str, str]]:
    gain = _gain(report.seed_score, report.best_score, report.minimize)
    pct = gain / abs(report.seed_score) * 100 if gain is not None and report.seed_score else None
    rows = [
        ("policy", report.policy),
        ("direction", f"{report.direction} ({'lower' if report.minimize else 'higher'} is better)"),
        ("agents", str(report.agents)),
        (
            "rounds",
            f"{len(report.rounds)}"
            + (f" of {report.rounds_planned} planned" if report.rounds_planned else ""),
        ),
        ("turns", str(len(report.records))),
        ("seed score", _fmt(report.seed_score)),
        ("best score", _fmt(report.best_score)),
        ("improvement over seed", f"{_fmt(gain)} ({_pct(pct)})"),
        ("cost", f"${report.total_cost_usd:.4f}"),
        ("tokens (input + output)", str(report.total_tokens)),
        ("spend axis", report.spend.label),
    ]
    if report.noise_floor is not None:
        rows.append(("noise floor", _fmt(report.noise_floor)))
    return rows


def _round_rows(report: RunReport) -> list[list[str]]:
    rows = []
    for r in report.rounds:
        gain = _fmt(r.gain)
        floor = report.noise_floor
        if r.gain and floor and abs(r.gain) <= floor:
            gain += " (within noise)"
        rows.append(
            [
                str(r.round),
                str(r.turns),
                str(r.empty),
                str(r.failed),
                _fmt(r.start_best),
                _fmt(r.end_best),
                gain,
                _pct(r.gain_pct),
                f"${r.cost_usd:.4f}",
            ]
        )
    return rows


_ROUND_HEADER = (
    "round",
    "turns",
    "empty turns",
    "failed",
    "best at start",
    "best at end",
    "gain",
    "gain %",
    "cost",
)
_FORGET_HEADER = (
    "forget before round",
    "after turn",
    "reason",
    "median lines before (n)",
    "median lines after (n)",
)


def _forget_rows(report: RunReport) -> list[list[str]]:
    return [
        [
            str(f.round),
            str(f.at_turn),
            f.reason,
            f"{_fmt(f.median_before)} ({f.before_n})",
            f"{_fmt(f.median_after)} ({f.after_n})",
        ]
        for f in report.forgets
    ]


def _forget_note(report: RunReport) -> str:
    if not report.forgets:
        return "No forgets in this run."
    return (
        f"Lines changed per turn (empty turns count as 0) in up to {EDIT_WINDOW} turns "
        "after each forget against up to as many before it."
    )


def render_markdown(report: RunReport, png_name: str) -> str:
    lines = [f"# Search report: {report.run_dir.name}", ""]
    lines += [f"> {w}" for w in report.warnings] + ([""] if report.warnings else [])
    lines += [f"![best-so-far]({png_name})", ""]
    lines += _table(("", ""), [list(r) for r in _summary_rows(report)]) + [""]
    lines += ["## Per round", ""] + _table(_ROUND_HEADER, _round_rows(report)) + [""]
    lines += ["## Edit size around forgets", "", _forget_note(report), ""]
    if report.forgets:
        lines += _table(_FORGET_HEADER, _forget_rows(report)) + [""]
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
        "<h2>Edit size around forgets</h2>",
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
