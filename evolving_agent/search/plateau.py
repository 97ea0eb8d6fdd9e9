"""Continue or forget from the same plateau: ``search plateau-test RUN_DIR --turns N``.

The paper's measurement, for any task: once a run has plateaued, is it better to keep
the agents' sessions going or to forget them?

1. **The run must have plateaued**, by a stated rule: none of its last ``window`` turns
   (default ``max(4, 2 × agents)``) improved the best past the run's noise floor, and
   every session to continue has taken at least ``session_age`` turns (K, default 4: a
   3-turn-old session has not had the time to plateau).  Otherwise it is refused with
   the numbers (``--force`` measures anyway, and says so).
2. **Both sides start from the run's best**, scored afresh (``start``).
   * *continue*: every agent resumes the session it ended the run with, in its own
     private workspace (the path that session knew), reset to the run's best -- and it
     is told so: "your workspace now holds the run's best candidate, which scored S",
     the score of what it is looking at, not its own last one;
   * *fresh*: new sessions in a new one-commit repository of the best, with the
     identical first instructions a forgetting round gives.
3. **Every side runs ``--repeats`` times (default 3), each time from copies**: a copy of
   the round repository, of the agents' session state, its own private workspaces, a
   different seed.  The source run is never written to (its results go to
   ``RUN_DIR-plateau`` by default, beside it).
4. **The report**: each side's gain (its best re-scored, against the start) as the mean
   over repeats with a 95% bootstrap interval, its cost per repeat, its edit sizes
   (median lines changed, overall and over its first 10 non-empty turns); an exact
   permutation test of fresh against continued gains (``stats.permutation_p``), and
   the ratio of gains only when that test is significant at ``ALPHA`` (5%) and the
   continued gain is above zero -- otherwise it says why there is no ratio.  Below
   ``FEW_REPEATS`` (5) repeats a side it warns, plainly, that they are too few.

Each side runs on the runner's schedule (``schedule.py``), each turn is the runner's
own step (:func:`~evolving_agent.search.turn.play_turn`: the same executor, sealed
judge and tamper check) and each record the runner's own
(:func:`~evolving_agent.search.aftermath.turn_record`).
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evolving_agent.errors import InvalidInput, NotFound, UsageError
from evolving_agent.gitcmd import git
from evolving_agent.process import subreaper
from evolving_agent.search.aftermath import PlayedTurn, Tally, turn_record
from evolving_agent.search.agents import agent_for
from evolving_agent.search.agents.base import Agent
from evolving_agent.search.config import SearchConfig, split_evenly
from evolving_agent.search.executors.local import LocalExecutor
from evolving_agent.search.judge import (
    Judge,
    JudgeTampered,
    Seal,
    SealChanged,
    seal_command,
    sealed_judge,
)
from evolving_agent.search.private import private_root, remove_root, workspace_path
from evolving_agent.search.prompt import build_prompt
from evolving_agent.search.reducer import Decision, RoundPlan
from evolving_agent.search.rounds import round_repo
from evolving_agent.search.rundir import RunDir, TurnRecord, write_json_atomic
from evolving_agent.search.runner import new_dir
from evolving_agent.search.schedule import Rules, Slot, next_step
from evolving_agent.search.stats import (
    EXACT_LIMIT,
    PERMUTATION_ROUNDS,
    Interval,
    bootstrap_ci,
    min_permutation_p,
    permutation_p,
)
from evolving_agent.search.text import fmt_number, markdown_table
from evolving_agent.search.turn import TurnJob, play_turn, turn_request
from evolving_agent.search.workspace import export_commit, init_round_repo

SIDES = ("continue", "fresh")
DEFAULT_REPEATS = 3
FIRST_EDITS = 10  # the paper's "first 10 proposals" for edit sizes
# A session younger than this many turns has not had the time to plateau.
DEFAULT_SESSION_AGE = 4
ALPHA = 0.05  # the level a gain ratio must be significant at to be printed
FEW_REPEATS = 5  # below this many repeats a side, say plainly that it is too few


class NotPlateaued(InvalidInput):
    """The run's best was still improving at its end (exit 4)."""

    def __init__(self, check: PlateauCheck, run: Path) -> None:
        super().__init__(
            f"the run has not plateaued: {check.describe()}; continue it, or pass "
            f"--window / --session-age / --force",
            file=run,
        )


@dataclass(frozen=True)
class PlateauCheck:
    window: int
    turns: int
    last_improved: int  # seq of the last improving turn (0: none)
    session_age: int = DEFAULT_SESSION_AGE  # K: turns a session needs to be "plateaued"
    youngest: int = 0  # turns taken by the youngest of the sessions to continue

    @property
    def flat(self) -> int:
        return self.turns - self.last_improved

    @property
    def plateaued(self) -> bool:
        return self.flat >= self.window and self.youngest >= self.session_age

    @property
    def rule(self) -> str:
        return (
            f"none of the run's last {self.window} turns improved its best past the noise "
            f"floor, and every session to continue is at least {self.session_age} turns old"
        )

    def describe(self) -> str:
        where = f"turn {self.last_improved}" if self.last_improved else "no turn"
        return (
            f"{self.rule} (rule); its last improvement was {where} of {self.turns}, its "
            f"youngest session is {self.youngest} turns old"
        )


def check_plateau(
    records: list[TurnRecord],
    agents: int,
    window: int | None,
    *,
    session_age: int = DEFAULT_SESSION_AGE,
    sessions: dict[int, str] | None = None,
) -> PlateauCheck:
    last = max((r.seq for r in records if r.improved), default=0)
    ages = [sum(1 for r in records if r.session == s) for s in (sessions or {}).values()]
    return PlateauCheck(
        window or max(4, 2 * agents), len(records), last, session_age, min(ages, default=0)
    )


@dataclass(frozen=True)
class Draw:
    """One repeat of one side."""

    repeat: int
    turns: int
    best_score: float
    best_rescored: float | None
    gain: float  # final (re-scored) best minus start, positive = better
    improved_turns: int
    empty_turns: int
    failed_turns: int
    cost_usd: float
    tokens: int
    agent_s: float
    lines: list[int]  # lines changed of each non-empty turn, in order
    log: str


@dataclass
class SideResult:
    side: str
    draws: list[Draw]

    @property
    def gains(self) -> list[float]:
        return [d.gain for d in self.draws]

    @property
    def mean_gain(self) -> float:
        return statistics.fmean(self.gains)

    @property
    def gain_ci(self) -> Interval | None:
        return bootstrap_ci(self.gains) if len(self.draws) > 1 else None

    @property
    def mean_cost(self) -> float:
        return statistics.fmean(d.cost_usd for d in self.draws)

    @property
    def mean_tokens(self) -> float:
        return statistics.fmean(d.tokens for d in self.draws)

    @property
    def median_lines(self) -> float | None:
        lines = [n for d in self.draws for n in d.lines]
        return float(statistics.median(lines)) if lines else None

    @property
    def median_first_lines(self) -> float | None:
        lines = [n for d in self.draws for n in d.lines[:FIRST_EDITS]]
        return float(statistics.median(lines)) if lines else None

    def to_json(self) -> dict[str, Any]:
        ci = self.gain_ci
        return {
            "side": self.side,
            "repeats": len(self.draws),
            "mean_gain": self.mean_gain,
            "gain_ci95": None if ci is None else [ci.low, ci.high],
            "mean_cost_usd": self.mean_cost,
            "mean_tokens": self.mean_tokens,
            "median_lines": self.median_lines,
            "median_lines_first_10": self.median_first_lines,
            "draws": [asdict(d) for d in self.draws],
        }


@dataclass
class PlateauTest:
    run_dir: Path
    out: Path
    turns: int
    repeats: int
    agents: int
    policy: str
    minimize: bool
    start_commit: str
    start_score: float
    start_scores: list[float]
    noise_floor: float
    check: PlateauCheck
    forced: bool = False
    alpha: float = ALPHA
    sides: list[SideResult] = field(default_factory=list)

    def side(self, name: str) -> SideResult:
        return next(s for s in self.sides if s.side == name)

    @property
    def p_value(self) -> float | None:
        """Two-sided permutation test of fresh against continued gains (exact: every
        split of the pooled gains, for up to ``stats.EXACT_LIMIT`` splits)."""
        return permutation_p(self.side("fresh").gains, self.side("continue").gains)

    @property
    def exact(self) -> bool:
        return math.comb(2 * self.repeats, self.repeats) <= EXACT_LIMIT

    @property
    def test_name(self) -> str:
        kind = "exact" if self.exact else f"{PERMUTATION_ROUNDS}-split"
        return f"{kind} permutation test of mean gains, two-sided"

    @property
    def min_p(self) -> float:
        return min_permutation_p(self.repeats, self.repeats)

    @property
    def warnings(self) -> list[str]:
        if self.repeats >= FEW_REPEATS:
            return []
        return [
            f"{self.repeats} repeat(s) a side are too few to tell the sides apart: the "
            f"smallest p an exact test of {self.repeats} against {self.repeats} can give is "
            f"{self.min_p:.3g}; use --repeats {FEW_REPEATS} or more"
        ]

    @property
    def ratio_note(self) -> str | None:
        """Why there is no gain ratio (None: there is one)."""
        if self.repeats < 2:
            return "one repeat per side: a ratio of single draws says nothing (--repeats 5)"
        p = self.p_value
        assert p is not None
        if p > self.alpha:
            floor = (
                f"; with {self.repeats} repeats a side p cannot go below {self.min_p:.3g}"
                if self.min_p > self.alpha
                else ""
            )
            return (
                f"fresh and continued gains do not differ at the {self.alpha:g} level "
                f"({self.test_name}: p = {p:.3g}){floor}"
            )
        if self.side("continue").mean_gain <= 0:
            return (
                f"the gains differ (p = {p:.3g}) but the continued mean gain is "
                f"{fmt_number(self.side('continue').mean_gain)}: a ratio to it is not meaningful"
            )
        return None

    @property
    def gain_ratio(self) -> float | None:
        """Mean fresh gain over mean continued gain, when they differ significantly."""
        if self.ratio_note is not None:
            return None
        return self.side("fresh").mean_gain / self.side("continue").mean_gain

    @property
    def cost_ratio(self) -> float | None:
        """Fresh spend over continued spend, in dollars, else tokens."""
        cont, fresh = self.side("continue"), self.side("fresh")
        if cont.mean_cost > 0:
            return fresh.mean_cost / cont.mean_cost
        if cont.mean_tokens > 0:
            return fresh.mean_tokens / cont.mean_tokens
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "run_dir": str(self.run_dir),
            "out": str(self.out),
            "turns": self.turns,
            "repeats": self.repeats,
            "agents": self.agents,
            "policy": self.policy,
            "direction": "minimize" if self.minimize else "maximize",
            "plateau": {
                "rule": self.check.rule,
                "window": self.check.window,
                "turns": self.check.turns,
                "last_improved": self.check.last_improved,
                "session_age": self.check.session_age,
                "youngest_session": self.check.youngest,
                "plateaued": self.check.plateaued,
                "forced": self.forced,
            },
            "start_commit": self.start_commit,
            "start_score": self.start_score,
            "start_scores": self.start_scores,
            "noise_floor": self.noise_floor,
            "sides": {s.side: s.to_json() for s in self.sides},
            "test": self.test_name,
            "p_value": self.p_value,
            "alpha": self.alpha,
            "warnings": self.warnings,
            "gain_ratio_fresh_over_continue": self.gain_ratio,
            "gain_ratio_note": self.ratio_note,
            "cost_ratio_fresh_over_continue": self.cost_ratio,
        }


ProgressFn = Callable[[str, TurnRecord], None]


def plateau_test(
    run_dir: Path,
    *,
    turns: int,
    repeats: int = DEFAULT_REPEATS,
    out: Path | None = None,
    window: int | None = None,
    session_age: int = DEFAULT_SESSION_AGE,
    force: bool = False,
    progress: ProgressFn | None = None,
) -> PlateauTest:
    """Measure continuing vs forgetting from the run's plateau, ``repeats`` times a side,
    ``turns`` turns each time; never writes to ``run_dir``."""
    run = RunDir(Path(run_dir).absolute())
    if not run.path.is_dir():
        raise NotFound(f"run directory not found: {run.path}")
    config = run.read_config()
    if not run.summary_json.is_file():
        raise UsageError(
            f"the run is not finished (no summary.json); finish it first: search resume {run.path}"
        )
    seed = run.read_seed()
    records = run.read_log()
    if seed is None or not records:
        raise InvalidInput("the run has no seed or no turns to continue from", file=run.path)
    agents = config.effective_agents
    if turns < agents:
        raise UsageError(f"--turns {turns} is fewer than the run's {agents} agents")
    if repeats < 1:
        raise UsageError(f"--repeats must be at least 1, got {repeats}")
    if session_age < 1:
        raise UsageError(f"--session-age must be at least 1, got {session_age}")
    last_round = max(r.round for r in records)
    sessions = _last_sessions(records, last_round, agents)
    check = check_plateau(records, agents, window, session_age=session_age, sessions=sessions)
    if not check.plateaued and not force:
        raise NotPlateaued(check, run.path)
    summary = json.loads(run.summary_json.read_text(encoding="utf-8"))
    source_repo = round_repo(run, last_round)
    start = _best_in(run, source_repo, last_round, str(summary.get("best_commit", "")))
    dest = _out_dir(run.path, out)
    judge = sealed_judge(config, _sealed(run, config))
    verdict = judge.judge(source_repo, start)
    if verdict.score is None:
        first = (verdict.feedback.splitlines() or ["no output"])[0]
        shutil.rmtree(dest, ignore_errors=True)
        raise InvalidInput(f"the run's best candidate no longer scores ({first})", file=run.path)
    result = PlateauTest(
        run_dir=run.path, out=dest, turns=turns, repeats=repeats, agents=agents,
        policy=config.policy, minimize=config.minimize, start_commit=start,
        start_score=verdict.score, start_scores=verdict.scores, noise_floor=seed.noise_floor,
        check=check, forced=force and not check.plateaued,
    )  # fmt: skip
    # The task as sealed when the run began (the file itself may have changed since).
    task = run.task_copy.read_text(encoding="utf-8")
    shares = split_evenly(turns, agents)
    last_turn = {a: max((r.turn for r in records if r.agent == a), default=0) for a in sessions}
    agent = agent_for(config)
    with subreaper():  # every side runs on the local executor
        result.sides = _measure(
            run, config, agent, judge, result, dest, task, shares, sessions, last_turn,
            source_repo, start, seed.noise_floor, verdict.feedback, repeats, progress,
        )  # fmt: skip
    write_json_atomic(dest / "plateau-test.json", result.to_json())
    (dest / "plateau-test.md").write_text(render_markdown(result), encoding="utf-8")
    return result


def _measure(
    run: RunDir, config: SearchConfig, agent: Agent, judge: Judge, result: PlateauTest,
    dest: Path, task: str, shares: list[int], sessions: dict[int, str],
    last_turn: dict[int, int], source_repo: Path, start: str, floor: float, feedback: str,
    repeats: int, progress: ProgressFn | None,
) -> list[SideResult]:  # fmt: skip
    """Each side ``repeats`` times, each from copies."""
    last_round = max(r.round for r in run.read_log())
    draws: dict[str, list[Draw]] = {side: [] for side in SIDES}
    for repeat in range(1, repeats + 1):
        seeded = config.model_copy(update={"seed": config.seed + repeat - 1})
        for side in SIDES:
            side_dir = dest / f"repeat-{repeat}" / side
            side_dir.mkdir(parents=True)
            repo = side_dir / "repo"
            if side == "continue":
                # A copy of the run's last round repository: the session's history.
                shutil.copytree(source_repo / ".git", repo / ".git", symlinks=True)
                side_start, number = start, last_round
                # The path the session knew (Claude Code finds sessions by directory).
                root = private_root(run.path)
                if run.agent_state.is_dir():
                    shutil.copytree(run.agent_state, side_dir / "agent-state")
            else:
                with tempfile.TemporaryDirectory(prefix="ea-plateau-") as tmp:
                    files = Path(tmp) / "files"
                    export_commit(source_repo, start, files)
                    side_start = init_round_repo(repo, files, "plateau test: the run's best")
                number, root = last_round + 1, private_root(side_dir)
            try:
                draws[side].append(
                    _Side(
                        name=side, repeat=repeat, config=seeded, agent=agent, judge=judge,
                        task=task, repo=repo, root=root,
                        plan=RoundPlan(number, side_start, result.start_score, tuple(shares)),
                        floor=floor,
                        sessions=sessions if side == "continue" else {},
                        start_feedback=feedback, first_turn=last_turn,
                        out=RunDir(side_dir), progress=progress,
                        hide=(str(run.path), str(dest)),
                    ).run()
                )  # fmt: skip
            finally:
                remove_root(root)
    return [SideResult(side, draws[side]) for side in SIDES]


def _out_dir(run: Path, out: Path | None) -> Path:
    """Where results go: never inside the run (the source run is not modified)."""
    if out is None:
        return new_dir(run.parent / f"{run.name}-plateau")
    dest = out.absolute()
    if dest.resolve() == run.resolve() or run.resolve() in dest.resolve().parents:
        raise UsageError(f"--out must be outside the run directory (it is never modified): {dest}")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"output directory is not empty: {dest} (choose another --out)")
    dest.mkdir(parents=True, exist_ok=True)
    return dest


def _last_sessions(records: list[TurnRecord], number: int, agents: int) -> dict[int, str]:
    """Each agent's session at the end of the run (its last turn of the last round)."""
    sessions: dict[int, str] = {}
    for a in range(1, agents + 1):
        mine = [r for r in records if r.agent == a and r.round == number and r.session]
        if not mine:
            raise InvalidInput(f"agent {a} has no session in round {number} to continue")
        sessions[a] = str(max(mine, key=lambda r: r.seq).session)
    return sessions


def _has_commit(repo: Path, commit: str) -> bool:
    return git(repo, "cat-file", "-e", f"{commit}^{{commit}}", check=False).ok


def _best_in(run: RunDir, repo: Path, number: int, best_commit: str) -> str:
    """The run's best as a commit of the last round's repository: the best itself, or
    (a fresh repository per round) that round's start, still the best since."""
    if best_commit and _has_commit(repo, best_commit):
        return best_commit
    data = json.loads((run.round_dir(number) / "round.json").read_text(encoding="utf-8"))
    return str(data["start_commit"])


def continue_prompt(
    *, decision: Decision, minimize: bool, start: str, score: float, feedback: str
) -> str:
    """The continued session's first prompt: what its workspace now holds, truly."""
    body = build_prompt(task="", decision=decision, minimize=minimize, last=None)
    candidates = body.split("---\n", 1)[-1].split("\n", 1)[-1]
    return (
        f"Your workspace now holds the run's best candidate ({start[:12]}), which scored "
        f"{score:g} when scored again just now.\nScorer feedback:\n"
        f"{feedback.strip() or '(none)'}\n\n{candidates}Keep improving the candidate in "
        "your workspace.\n"
    )


class _Side:
    """One repeat of one side: the runner's schedule (``schedule.py``) over one round,
    every turn the runner's own :func:`play_turn`, every record the runner's own
    :func:`turn_record`, the best a :class:`Tally` of them."""

    def __init__(
        self,
        *,
        name: str,
        repeat: int,
        config: SearchConfig,
        agent: Agent,
        judge: Judge,
        task: str,
        repo: Path,
        root: Path,
        plan: RoundPlan,
        floor: float,
        sessions: dict[int, str],
        start_feedback: str,
        first_turn: dict[int, int],
        out: RunDir,
        progress: ProgressFn | None,
        hide: tuple[str, ...],
    ) -> None:
        self.name, self.repeat, self.config, self.agent = name, repeat, config, agent
        self.judge, self.task, self.repo, self.root, self.plan = judge, task, repo, root, plan
        self.sessions, self.first_turn = sessions, first_turn
        self.start_feedback, self.out, self.progress = start_feedback, out, progress
        self.records: list[TurnRecord] = []
        self.tally = Tally.start(
            plan.start_score, plan.start_commit, minimize=config.minimize, floor=floor
        )
        self.lock = threading.Lock()
        self.executor = LocalExecutor(max_scorers=config.max_scorers)
        self.sandbox = config.confinement(hide=hide)

    def run(self) -> Draw:
        agents = len(self.plan.quotas)
        rules = Rules(
            self.config.preset, agents, self.config.minimize,
            first_turn=self.first_turn, adjust=self._adjust,
        )  # fmt: skip
        with ThreadPoolExecutor(max_workers=agents) as pool:
            while True:
                step = next_step(self.records, self.plan, rules)
                if step.end_round is not None or not step.slots:
                    break
                futures = [pool.submit(self._play, slot) for slot in step.slots]
                for slot, future in zip(step.slots, futures, strict=True):
                    self._record(slot, future.result())
        rescored: float | None = None
        best = self.tally.best_score
        final = self.plan.start_score
        if self.tally.best_commit != self.plan.start_commit:
            verdict = self.judge.judge(self.repo, self.tally.best_commit)
            rescored = verdict.score
            final = verdict.score if verdict.score is not None else best
        start = self.plan.start_score
        gain = start - final if self.config.minimize else final - start
        return Draw(
            repeat=self.repeat,
            turns=len(self.records),
            best_score=best,
            best_rescored=rescored,
            gain=gain,
            improved_turns=sum(1 for r in self.records if r.improved),
            empty_turns=sum(1 for r in self.records if r.empty),
            failed_turns=sum(1 for r in self.records if r.score is None),
            cost_usd=round(sum(r.cost_usd or 0.0 for r in self.records), 6),
            tokens=sum(r.tokens for r in self.records),
            agent_s=round(sum(r.agent_s for r in self.records), 3),
            lines=[r.lines_changed for r in self.records if not r.empty],
            log=str(self.out.log),
        )  # fmt: skip

    def _adjust(self, agent: int, decision: Decision, records: Sequence[TurnRecord]) -> Decision:
        """The continue side's first turn resumes the session the run ended with."""
        if agent in self.sessions and not any(r.agent == agent for r in records):
            return Decision(
                run_turn=True,
                new_session=False,
                session_id=self.sessions[agent],
                visible=decision.visible,
            )
        return decision

    def _known(self, commit: str) -> tuple[bool, float | None]:
        with self.lock:
            return self.tally.known_score(commit)

    def _play(self, slot: Slot) -> PlayedTurn:
        started = time.perf_counter()
        agent, decision, last = slot.agent, slot.decision, slot.last
        workspace = workspace_path(self.root, self.plan.number, agent)
        base = last.commit if last else self.plan.start_commit
        prompt = None
        if last is None and not decision.new_session:
            prompt = continue_prompt(
                decision=decision, minimize=self.config.minimize,
                start=self.plan.start_commit, score=self.plan.start_score,
                feedback=self.start_feedback,
            )  # fmt: skip
        request = turn_request(
            self.config, task=self.task, decision=decision, last=last,
            workspace=workspace, round=self.plan.number, agent=agent, turn=slot.turn,
            state_dir=self.out.path / "agent-state", sandbox=self.sandbox, prompt=prompt,
        )  # fmt: skip
        label = f"plateau-{self.name}-a{agent}-t{slot.turn:03d}"
        job = TurnJob(request=request, base=base, message=label, retries=self.config.retries,
                      retry_backoff=self.config.retry_backoff)  # fmt: skip
        played = play_turn(
            self.executor, self.agent, job, judge=self.judge, repo=self.repo,
            start=self.plan.start_commit, label=label, known=self._known,
        )  # fmt: skip
        verdict = played.verdict
        laps = {**played.outcome.laps, "judge": verdict.export_s + verdict.score_s}
        return PlayedTurn(played, base, laps, time.perf_counter() - started)

    def _record(self, slot: Slot, turn: PlayedTurn) -> None:
        with self.lock:
            record = turn_record(
                turn, slot=slot, seq=len(self.records) + 1, number=self.plan.number,
                tally=self.tally,
            )  # fmt: skip
            self.out.append(record)
            self.records.append(record)
            self.tally.add(record)
        if record.tampered:
            raise JudgeTampered(f"{record.error}; the plateau test stopped: {self.out.path}")
        if self.progress:
            self.progress(f"{self.name} #{self.repeat}", record)


# -- rendering -------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _gain(side: SideResult, start: float) -> str:
    ci = side.gain_ci
    pct = f" ({side.mean_gain / abs(start) * 100:+.2f}%)" if start else ""
    interval = "" if ci is None else f" [{fmt_number(ci.low)}, {fmt_number(ci.high)}]"
    return f"{fmt_number(side.mean_gain)}{pct}{interval}"


def format_table(result: PlateauTest) -> str:
    cont, fresh = result.side("continue"), result.side("fresh")
    paid = cont.mean_cost > 0 or fresh.mean_cost > 0

    def each(fn: Callable[[Draw], object]) -> tuple[str, str]:
        return (
            ", ".join(str(fn(d)) for d in cont.draws),
            ", ".join(str(fn(d)) for d in fresh.draws),
        )

    rows = [
        ("repeats × turns", f"{len(cont.draws)} × {result.turns}",
         f"{len(fresh.draws)} × {result.turns}"),
        ("gain, mean [95% CI]", _gain(cont, result.start_score),
         _gain(fresh, result.start_score)),
        ("gain per repeat", *each(lambda d: fmt_number(d.gain))),
        ("improving turns", *each(lambda d: d.improved_turns)),
        ("empty turns", *each(lambda d: d.empty_turns)),
        ("failed turns", *each(lambda d: d.failed_turns)),
        ("median lines changed", fmt_number(cont.median_lines), fmt_number(fresh.median_lines)),
        ("… first 10 edits", fmt_number(cont.median_first_lines),
         fmt_number(fresh.median_first_lines)),
        ("cost per repeat", f"${cont.mean_cost:.4f}", f"${fresh.mean_cost:.4f}")
        if paid
        else ("tokens per repeat", fmt_number(cont.mean_tokens), fmt_number(fresh.mean_tokens)),
    ]  # fmt: skip
    table = markdown_table(("", "continue", "fresh"), [[str(cell) for cell in r] for r in rows])
    return "\n".join(table) + "\n"


def verdict_line(result: PlateauTest) -> str:
    """The sentence worth quoting -- or why there is none."""
    spend = _ratio(result.cost_ratio)
    warned = "".join(f"\nwarning: {w}" for w in result.warnings)
    if result.gain_ratio is not None:
        return (
            f"Fresh sessions gained {_ratio(result.gain_ratio)} what continued ones did "
            f"(means over {result.repeats} repeats; {result.test_name}: "
            f"p = {result.p_value:.3g} <= {result.alpha:g}), at {spend} the spend.{warned}"
        )
    return f"No gain ratio: {result.ratio_note}.  Spend ratio (fresh / continued): {spend}.{warned}"


def render_markdown(result: PlateauTest) -> str:
    better_word = "lower" if result.minimize else "higher"
    forced = "  (Measured with --force.)" if result.forced else ""
    return (
        f"# Plateau test: {result.run_dir.name}\n\n"
        f"Plateau rule: {result.check.describe()}.{forced}\n\n"
        f"From the run's best ({result.start_commit[:12]}, "
        f"re-scored {fmt_number(result.start_score)}"
        f"; {better_word} is better), {result.repeats} repeats of {result.turns} turns "
        f"continuing the {result.agents} session(s) the run ended with, and as many with "
        f"fresh sessions (policy {result.policy}), each repeat on copies.  Gains are a "
        f"side's best re-scored, against the start; improvements count past the run's "
        f"noise floor ({fmt_number(result.noise_floor)}).\n\n"
        + format_table(result)
        + "\n"
        + verdict_line(result)
        + "\n"
    )


def _sealed(run: RunDir, config: SearchConfig) -> dict[str, Any]:
    """The run's judge seal, checked: a scorer changed since the run began is refused."""
    seal = run.read_seal()
    if seal is None:  # a run made before runs were sealed
        assert config.workdir is not None
        score_cmd, files = seal_command(config.score_cmd, config.workdir)
        return {"score_cmd": score_cmd, "files": files}
    changed = Seal(seal["files"]).changed()
    if changed:
        raise SealChanged(changed, f"refusing to measure from {run.path}")
    return seal
