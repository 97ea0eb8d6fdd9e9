"""What a finished (or interrupted) search run did, as a plot, markdown and HTML.

``load_run`` reads a run directory (``log.jsonl``, ``summary.json``, ``run.json``,
``seed.json``, ``best/`` and the seed commit in round 1's repository) into a
``RunReport``: best-so-far curves for the team and each agent, the spend axis,
per-round gains and empty turns, the paper's edit-size figure and the best candidate's
diff from the seed.

The team curve and the per-round table follow the run's own bookkeeping: a turn moves
the best only when the run marked it ``improved`` (past the noise floor), so the report
never shows a best the run did not have.  The edit-size figure is the paper's: the
median lines changed in the first ``EDIT_WINDOW`` non-empty proposals of each fresh
session against the next ``EDIT_WINDOW`` of the same session once continued.  Empty
turns are excluded, and adopting a candidate the agent could see (a peer's best, or its
own earlier one) is not an edit: a proposal's size is its diff from the nearest of its
base, its own best earlier candidate and each peer's best (read from the round's git
repository), so "copy the leader, change one line" counts one line.

``write_report`` renders the one ``RunReport`` three ways (``report.png``,
``report.md``, ``report.html``) through ``report_render``; nothing here prints.

The log is read through the runner's own reader and record model
(``rundir.read_records`` / ``TurnRecord``: a torn last line skipped, fields added since
the first runner defaulted), and a missing ``summary.json`` is made up from ``run.json``
and ``seed.json``, because a crashed or older run is exactly the one a person wants to
look at; what cannot be read is an ``InvalidInput`` naming the file and line, on one
line.
"""

from __future__ import annotations

import difflib
import json
import math
import statistics
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolving_agent.errors import InvalidInput, NotFound
from evolving_agent.fsio import walk
from evolving_agent.search.aftermath import best_steps
from evolving_agent.search.presets import PRESETS, Preset
from evolving_agent.search.rounds import seed_repo, stored_repo
from evolving_agent.search.rundir import RunDir, TurnRecord, check_version, read_records
from evolving_agent.search.workspace import export_commit, lines_changed

# The paper compares the first 10 proposals of a fresh session with its next 10.
EDIT_WINDOW = 10
# A diff longer than this is cut in the report; the full one is a `git diff` away.
MAX_DIFF_LINES = 400
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache"}


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
class Failures:
    """What went wrong in a set of turns, counted as ``summary.json`` counts it."""

    failed: int = 0  # the agent failed (``error`` set), after retries
    unscored: int = 0  # the agent did not fail; the scorer gave no number
    denied: int = 0  # tool calls the agent's CLI refused, summed
    failed_commands: int = 0  # shell commands that failed, summed
    improved_flagged: int = 0  # turns that improved the best despite a denial or error

    @classmethod
    def of(cls, rows: Sequence[TurnRecord]) -> Failures:
        return cls(
            failed=sum(1 for r in rows if r.error),
            unscored=sum(1 for r in rows if r.score is None and not r.error),
            denied=sum(r.denied or 0 for r in rows),
            failed_commands=sum(r.failed_commands or 0 for r in rows),
            improved_flagged=sum(1 for r in rows if r.improved and (r.error or r.denied)),
        )


@dataclass(frozen=True)
class RoundStats:
    round: int
    turns: int
    empty: int
    failed: int  # turns whose agent failed (as summary.json's failed_turns)
    cost_usd: float
    start_best: float | None
    end_best: float | None
    gain: float | None  # improvement in the run's direction: positive is better
    gain_pct: float | None
    ended: str | None = None  # why the round ended (closed.json), if recorded
    failures: Failures = Failures()


@dataclass(frozen=True)
class AgentStats:
    """One agent's turns over the whole run."""

    agent: int | str
    turns: int
    improved: int
    failures: Failures


@dataclass(frozen=True)
class ForgetStats:
    """One forget boundary."""

    round: int  # the round that starts fresh
    at_turn: int  # turns completed when the forget happened
    reason: str


@dataclass(frozen=True)
class EditSizes:
    """The paper's figure: lines changed by fresh sessions' first proposals vs their next."""

    window: int
    sessions: int  # sessions with at least one non-empty proposal
    continued_sessions: int  # sessions that got past ``window`` proposals
    fresh_n: int
    continued_n: int
    median_fresh: float | None
    median_continued: float | None
    excluded_empty: int  # empty turns, left out
    adopted: int  # proposals whose size shrank because they started from a visible candidate
    measured: str  # "git" (adoption discounted) or "log" (lines_changed as recorded)
    pure_adoptions: int = 0  # turns that only adopted a visible candidate, left out


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
    records: list[TurnRecord]
    spend: SpendAxis
    team: Curve
    agent_curves: list[Curve]
    rounds: list[RoundStats]
    forgets: list[ForgetStats]
    edits: EditSizes
    diff: SeedDiff
    total_cost_usd: float
    total_tokens: int
    warnings: list[str] = field(default_factory=list)
    best_rescored: float | None = None
    rescore_n: int = 0
    forget_on_plateau: int | None = None
    agent_table: list[AgentStats] = field(default_factory=list)
    isolation: str | None = None  # summary.json's (sandbox.isolation); None: not recorded
    forgotten: bool | None = None  # False: a forgetting policy's rounds were restarts

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


def read_log(path: Path) -> list[TurnRecord]:
    """The run's turns, in the order they finished (``rundir.read_records``, the one
    reader of ``log.jsonl``); a log with no turn is an ``InvalidInput``."""
    try:
        records = read_records(path, reader="report")
    except OSError as exc:
        raise InvalidInput(f"cannot read: {exc}", file=path) from exc
    if not records:
        raise InvalidInput("no turns recorded", file=path)
    return sorted(records, key=lambda r: r.seq)


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


def score_gain(start: float | None, end: float | None, minimize: bool) -> float | None:
    if start is None or end is None:
        return None
    return start - end if minimize else end - start


def spend_axis(records: Sequence[TurnRecord]) -> SpendAxis:
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


def run_best_steps(
    records: Sequence[TurnRecord], seed_score: float | None, *, minimize: bool
) -> list[float]:
    """The run's best after 0, 1, ... len(records) turns (index 0 = the seed).

    Empty if nothing is known (no seed score and no scored turn).
    """
    best = seed_score
    if best is None:
        best = next((r.ok_score for r in records if r.ok_score is not None), None)
    if best is None:
        return []
    return [best, *(b for b in best_steps(records, best, minimize=minimize) if b is not None)]


def best_so_far(
    records: Sequence[TurnRecord],
    spend: Sequence[float],
    *,
    minimize: bool,
    seed_score: float | None,
    label: str,
    agent: int | str | None = None,
) -> Curve:
    """The best score seen so far, one point per turn of ``agent`` (all agents if None).

    The curve starts at turn 0 with the seed's score when it is known.  The team curve
    (``agent`` None) moves only on the turns the run marked ``improved``; an agent's
    curve is the best of that agent's own candidates.
    """
    turns: list[int] = []
    xs: list[float] = []
    values: list[float] = []
    if seed_score is not None:
        turns.append(0)
        xs.append(0.0)
        values.append(seed_score)
    mine = [i for i, rec in enumerate(records) if agent is None or rec.agent == agent]
    steps = best_steps(
        [records[i] for i in mine], seed_score, minimize=minimize,
        marked=None if agent is None else False,
    )  # fmt: skip
    for i, best in zip(mine, steps, strict=True):
        if best is not None:
            turns.append(i + 1)
            xs.append(spend[i])
            values.append(best)
    return Curve(label, turns, xs, values)


def forget_starts(records: Sequence[TurnRecord]) -> list[tuple[int, str]]:
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


def forget_stats(records: Sequence[TurnRecord]) -> list[ForgetStats]:
    return [ForgetStats(records[i].round, i, reason) for i, reason in forget_starts(records)]


NumstatFn = Callable[[int, str, str], int | None]  # (round, from commit, to commit) -> lines


def git_numstat(run_dir: Path) -> NumstatFn:
    """Lines changed between two commits of a round's repository (None if unknown)."""
    cache: dict[int, Path | None] = {}

    def repo_of(number: int) -> Path | None:
        if number not in cache:
            path = RunDir(run_dir).round_dir(number) / "round.json"
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))["repo"]
                repo = stored_repo(RunDir(run_dir), stored)
            except (OSError, ValueError, KeyError, TypeError):
                repo = None
            cache[number] = repo if repo is not None and repo.is_dir() else None
        return cache[number]

    def numstat(number: int, a: str, b: str) -> int | None:
        repo = repo_of(number)
        if repo is None:
            return None
        # gitcmd's hardened options: agents share this repository's config.
        return lines_changed(repo, a, b)

    return numstat


def _session_key(rec: TurnRecord) -> tuple[int, str]:
    return rec.round, rec.session or f"agent-{rec.agent}"


def _best_of(records: Sequence[TurnRecord], minimize: bool) -> TurnRecord | None:
    best: TurnRecord | None = None
    for r in records:
        s = r.ok_score
        if s is not None and (best is None or _better(s, best.ok_score or 0.0, minimize)):
            best = r
    return best


def proposal_sizes(
    records: Sequence[TurnRecord],
    *,
    minimize: bool,
    share_peers: bool,
    same_repo: bool,
    numstat: NumstatFn | None,
) -> tuple[list[int], int]:
    """Each turn's own edit size (adoption discounted when ``numstat`` can tell), and how
    many turns it shrank.  ``same_repo``: every round shares one repository (history kept).
    """
    sizes: list[int] = []
    adopted = 0
    for i, rec in enumerate(records):
        lines = rec.lines_changed or 0
        if rec.empty or lines == 0 or numstat is None or not rec.commit:
            sizes.append(0 if rec.empty else lines)
            continue
        earlier = [r for r in records[:i] if r.commit and (same_repo or r.round == rec.round)]
        sources = [_best_of([r for r in earlier if r.agent == rec.agent], minimize)]
        if share_peers:
            for peer in sorted({r.agent for r in earlier} - {rec.agent}, key=str):
                sources.append(_best_of([r for r in earlier if r.agent == peer], minimize))
        own = lines
        for src in sources:
            if src is None or not src.commit or src.commit in (rec.commit, rec.base_commit):
                continue
            n = numstat(rec.round, src.commit, rec.commit)
            if n is not None and n < own:
                own = n
        adopted += own < lines
        sizes.append(own)
    return sizes, adopted


def edit_sizes(
    records: Sequence[TurnRecord],
    sizes: Sequence[int],
    *,
    window: int = EDIT_WINDOW,
    measured: str = "log",
    adopted: int = 0,
) -> EditSizes:
    """Median own-edit size of each session's first ``window`` non-empty proposals
    (fresh) against its next ``window`` (continued), pooled over sessions."""
    sessions: dict[tuple[int, str], list[int]] = {}
    excluded = pure = 0
    for rec, size in zip(records, sizes, strict=True):
        if rec.empty or size <= 0:
            excluded += rec.empty
            pure += not rec.empty
            continue
        sessions.setdefault(_session_key(rec), []).append(size)
    fresh = [n for s in sessions.values() for n in s[:window]]
    continued = [n for s in sessions.values() for n in s[window : 2 * window]]
    return EditSizes(
        window=window,
        sessions=len(sessions),
        continued_sessions=sum(1 for s in sessions.values() if len(s) > window),
        fresh_n=len(fresh),
        continued_n=len(continued),
        median_fresh=_median(fresh),
        median_continued=_median(continued),
        excluded_empty=excluded,
        pure_adoptions=pure,
        adopted=adopted,
        measured=measured,
    )


def round_stats(
    records: Sequence[TurnRecord],
    *,
    minimize: bool,
    seed_score: float | None,
    ended: dict[int, str] | None = None,
) -> list[RoundStats]:
    """Per round: turns, empty and failed turns, spend and the team best's gain over it."""
    out: list[RoundStats] = []
    rounds = sorted({r.round for r in records})
    ordered = [r for rnd in rounds for r in records if r.round == rnd]
    steps = iter(best_steps(ordered, seed_score, minimize=minimize))
    best = seed_score
    for rnd in rounds:
        rows = [r for r in records if r.round == rnd]
        start = best
        for _ in rows:
            best = next(steps)
        gain = score_gain(start, best, minimize)
        pct = gain / abs(start) * 100 if gain is not None and start else None
        out.append(
            RoundStats(
                round=rnd,
                turns=len(rows),
                empty=sum(1 for r in rows if r.empty),
                failed=sum(1 for r in rows if r.error),
                cost_usd=sum(r.cost_usd or 0.0 for r in rows),
                start_best=start,
                end_best=best,
                gain=gain,
                gain_pct=pct,
                ended=ended.get(rnd) if ended else None,
                failures=Failures.of(rows),
            )
        )
    return out


def agent_stats(records: Sequence[TurnRecord]) -> list[AgentStats]:
    """Per agent: turns, improvements, failures and denials."""
    ids = sorted({r.agent for r in records}, key=lambda a: (isinstance(a, str), str(a)))
    out = []
    for agent in ids:
        rows = [r for r in records if r.agent == agent]
        out.append(AgentStats(agent, len(rows), sum(1 for r in rows if r.improved),
                              Failures.of(rows)))  # fmt: skip
    return out


def _tree_files(root: Path) -> dict[str, Path]:
    """The regular files of a candidate tree; a symlink is not followed out of it."""
    entries = walk(root, "", skip=_SKIP_DIRS.__contains__)
    return {e.rel: e.path for e in entries if e.kind == "file" and e.rel}


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


@dataclass(frozen=True)
class _RunFiles:
    """The run's JSON files as read (``{}`` for one that is missing), with where each
    came from, so every figure's fallback (summary, then run.json or seed.json) lives
    in one place."""

    summary: dict[str, Any]
    config: dict[str, Any]
    seed: dict[str, Any]
    summary_path: Path
    config_path: Path
    seed_path: Path

    @classmethod
    def read(cls, paths: RunDir) -> _RunFiles:
        def load(path: Path) -> dict[str, Any]:
            return _read_json_object(path) if path.is_file() else {}

        return cls(
            load(paths.summary_json),
            load(paths.run_json),
            load(paths.seed_json),
            paths.summary_json,
            paths.run_json,
            paths.seed_json,
        )

    def minimize(self) -> bool:
        direction = self.summary.get("direction")
        if direction in ("minimize", "maximize"):
            return bool(direction == "minimize")
        if isinstance(self.config.get("minimize"), bool):
            return bool(self.config["minimize"])
        raise InvalidInput(
            "cannot tell whether lower or higher scores are better "
            "(no direction in summary.json, no minimize in run.json)",
            file=self.summary_path if self.summary else self.config_path,
        )

    def seed_figure(self, summary_key: str, seed_key: str) -> float | None:
        """A figure of the seed: summary.json's, else seed.json's."""
        value = _opt_float(self.summary, summary_key, self.summary_path)
        return _opt_float(self.seed, seed_key, self.seed_path) if value is None else value

    def planned_rounds(self, preset: Preset | None) -> int | None:
        # Planned rounds come from run.json (summary.json's "rounds" is how many ran); a
        # policy that never forgets runs one whatever --rounds said.
        rounds = _opt_int(self.config, "rounds")  # checked even when it is not used
        return 1 if preset is not None and not preset.forgets else rounds


def _agent_curves(
    records: list[TurnRecord], spend: SpendAxis, *, minimize: bool, seed_score: float | None
) -> tuple[list[Any], list[Curve]]:
    """The agents' ids, and each one's best-so-far curve against the team's spend."""
    agent_ids = sorted({r.agent for r in records}, key=lambda a: (isinstance(a, str), str(a)))
    curves = [
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
    return agent_ids, curves


def _edit_report(
    run_dir: Path, records: list[TurnRecord], *, minimize: bool, preset: Preset | None
) -> EditSizes:
    """Edit sizes measured with git where the round's repository still has the commits,
    from the log where it does not."""
    git_diff = git_numstat(run_dir)
    unknown = 0

    def numstat(number: int, a: str, b: str) -> int | None:
        nonlocal unknown
        lines = git_diff(number, a, b)
        unknown += lines is None
        return lines

    sizes, adopted = proposal_sizes(
        records,
        minimize=minimize,
        share_peers=preset.share_peers if preset else False,
        same_repo=bool(preset and preset.forgets and not preset.fresh_repo)
        or bool(preset and not preset.forgets),
        numstat=numstat,
    )
    return edit_sizes(records, sizes, measured="log" if unknown else "git", adopted=adopted)


def load_run(run_dir: Path) -> RunReport:
    """Read and analyse a run directory.  Raises ``NotFound``/``InvalidInput`` (exit 4)."""
    if not run_dir.is_dir():
        raise NotFound(f"run directory not found: {run_dir}")
    paths = RunDir(run_dir)  # the runner's layout, named in one place
    if not paths.log.is_file():
        raise InvalidInput("not a search run directory (no log.jsonl)", file=run_dir)
    records = read_log(paths.log)
    files = _RunFiles.read(paths)
    summary, config = files.summary, files.config
    warnings: list[str] = []
    if not summary:
        warnings.append("no summary.json (run unfinished?); figures come from log.jsonl")

    minimize = files.minimize()
    seed_score = files.seed_figure("seed_score", "score")
    spend = spend_axis(records)
    team = best_so_far(
        records, spend.cumulative, minimize=minimize, seed_score=seed_score, label="team"
    )
    agent_ids, agent_curves = _agent_curves(
        records, spend, minimize=minimize, seed_score=seed_score
    )
    best_score = _opt_float(summary, "best_score", files.summary_path)
    if best_score is None and team.values:
        best_score = team.values[-1]
    policy = str(summary.get("policy") or config.get("policy") or "unknown")
    preset = PRESETS.get(policy)
    seed_commit = files.seed.get("commit")
    rescores = summary.get("best_rescores")
    return RunReport(
        run_dir=run_dir,
        policy=str(policy),
        minimize=minimize,
        agents=_opt_int(summary, "agents") or _opt_int(config, "agents") or len(agent_ids),
        rounds_planned=files.planned_rounds(preset),
        seed_score=seed_score,
        best_score=best_score,
        noise_floor=files.seed_figure("noise_floor", "noise_floor"),
        records=records,
        spend=spend,
        team=team,
        agent_curves=agent_curves,
        rounds=round_stats(
            records, minimize=minimize, seed_score=seed_score, ended=_round_endings(run_dir)
        ),
        forgets=forget_stats(records),
        edits=_edit_report(run_dir, records, minimize=minimize, preset=preset),
        diff=seed_diff(run_dir, config, seed_commit if isinstance(seed_commit, str) else None),
        total_cost_usd=sum(r.cost_usd or 0.0 for r in records),
        total_tokens=sum((r.input_tokens or 0) + (r.output_tokens or 0) for r in records),
        warnings=warnings,
        best_rescored=_opt_float(summary, "best_rescored", files.summary_path),
        rescore_n=len(rescores) if isinstance(rescores, list) else 0,
        forget_on_plateau=_opt_int(config, "forget_on_plateau"),
        agent_table=agent_stats(records),
        isolation=summary.get("isolation") if isinstance(summary.get("isolation"), str) else None,
        forgotten=summary.get("forgotten") if isinstance(summary.get("forgotten"), bool) else None,
    )


def _round_endings(run_dir: Path) -> dict[int, str]:
    """Why each round ended, from ``rounds/rNN/closed.json`` (what the runner decided)."""
    out: dict[int, str] = {}
    for path in sorted((run_dir / "rounds").glob("r[0-9]*/closed.json")):
        try:
            reason = json.loads(path.read_text(encoding="utf-8")).get("reason")
            number = int(path.parent.name[1:])
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(reason, str):
            out[number] = reason
    return out
