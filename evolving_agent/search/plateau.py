"""Continue or forget from the same plateau: ``search plateau-test RUN_DIR --turns N``.

The paper's measurement, for any task: once a run has plateaued, is it better to keep
the agents' sessions going or to forget them?  From a finished run's best candidate
this spends ``N`` turns each way, with the run's agent, scorer, policy and number of
agents, and reports the gain and the cost of each side by side:

* **continue**: every agent resumes the session it had at the end of the run (its last
  round), in that round's worktree reset to the best candidate.  The worktree path is
  the one the session knew (Claude Code looks sessions up by directory); the run's
  candidates stay tagged and ``best/`` is not touched.  The tsp-example agent's session
  files are copied first, so the run's own are left as they were.
* **fresh**: new sessions in a new one-commit repository of the best candidate, with
  the identical first instructions a forgetting round gives.

Both sides start from the same candidate, scored afresh ``score_repeats`` times
(``start``), follow the run's policy for sharing within the side, count an improvement
only past the run's noise floor, and re-score their best at the end, so neither side's
gain is a lucky draw.  ``N`` is the total over agents, split as ``--turns`` is.  The
sides run one after the other (continue first), so they do not compete for the
machine.  Results go to ``OUT/plateau-test.json`` and ``OUT/plateau-test.md`` (OUT is
``RUN_DIR/plateau-test`` by default), each side's turns to ``OUT/SIDE/log.jsonl``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evolving_agent.errors import InvalidInput, NotFound, UsageError
from evolving_agent.gitcmd import git
from evolving_agent.search.agents import agent_for
from evolving_agent.search.agents.base import Agent
from evolving_agent.search.config import SearchConfig, split_evenly
from evolving_agent.search.judge import TAMPERED, Judge, JudgeTampered, Seal, seal_command
from evolving_agent.search.reducer import Decision, RoundPlan, SearchState, better, decide
from evolving_agent.search.rounds import round_repo
from evolving_agent.search.runner import _judge
from evolving_agent.search.state import RunDir, TurnRecord, now_iso, write_json_atomic
from evolving_agent.search.text import fmt_number, markdown_table
from evolving_agent.search.turn import turn_request
from evolving_agent.search.workspace import (
    add_worktree,
    commit_turn,
    export_commit,
    init_round_repo,
    reset_worktree,
    tag_candidate,
)

SIDES = ("continue", "fresh")


@dataclass(frozen=True)
class SideResult:
    side: str
    turns: int
    best_score: float  # the side's best as the search saw it
    best_rescored: float | None  # that best scored again (None: never left the start)
    gain: float  # final (re-scored) best minus start, positive = better
    gain_pct: float | None
    improved_turns: int
    empty_turns: int
    failed_turns: int  # no score (the candidate failed)
    agent_errors: int  # the agent reported an error
    cost_usd: float
    tokens: int
    agent_s: float  # agent time summed over turns
    wall_s: float  # the side's elapsed time
    median_lines: float | None  # of the non-empty turns
    log: str


@dataclass
class PlateauTest:
    run_dir: Path
    out: Path
    turns: int
    agents: int
    policy: str
    minimize: bool
    start_commit: str
    start_score: float
    start_scores: list[float]
    noise_floor: float
    sides: list[SideResult] = field(default_factory=list)

    def side(self, name: str) -> SideResult:
        return next(s for s in self.sides if s.side == name)

    @property
    def gain_ratio(self) -> float | None:
        """Fresh gain over continued gain (None unless the continued gain is positive)."""
        cont, fresh = self.side("continue").gain, self.side("fresh").gain
        return fresh / cont if cont > 0 else None

    @property
    def cost_ratio(self) -> float | None:
        """Fresh spend over continued spend, in dollars, else tokens."""
        cont, fresh = self.side("continue"), self.side("fresh")
        if cont.cost_usd > 0:
            return fresh.cost_usd / cont.cost_usd
        if cont.tokens > 0:
            return fresh.tokens / cont.tokens
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "run_dir": str(self.run_dir),
            "out": str(self.out),
            "turns": self.turns,
            "agents": self.agents,
            "policy": self.policy,
            "direction": "minimize" if self.minimize else "maximize",
            "start_commit": self.start_commit,
            "start_score": self.start_score,
            "start_scores": self.start_scores,
            "noise_floor": self.noise_floor,
            "sides": {s.side: asdict(s) for s in self.sides},
            "gain_ratio_fresh_over_continue": self.gain_ratio,
            "cost_ratio_fresh_over_continue": self.cost_ratio,
        }


ProgressFn = Callable[[str, TurnRecord], None]


def plateau_test(
    run_dir: Path,
    *,
    turns: int,
    out: Path | None = None,
    progress: ProgressFn | None = None,
) -> PlateauTest:
    """Spend ``turns`` turns continuing the run's last sessions and as many fresh."""
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
    last_round = max(r.round for r in records)
    sessions = _last_sessions(records, last_round, agents)
    summary = json.loads(run.summary_json.read_text(encoding="utf-8"))
    repo = round_repo(run, last_round)
    start = _best_in(run, repo, last_round, str(summary.get("best_commit", "")))
    kept = [run.round_dir(last_round) / f"agent-{a}" for a in range(1, agents + 1)]
    for path in kept:
        if not (path / ".git").exists():
            raise InvalidInput(
                "the last round's worktree is gone; cannot continue there", file=path
            )
    dest = (out or run.path / "plateau-test").absolute()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"output directory is not empty: {dest} (choose another --out)")
    agent = agent_for(config)
    judge = _judge(config, _sealed(run, config))
    verdict = judge.judge(repo, start)
    if verdict.score is None:
        first = (verdict.feedback.splitlines() or ["no output"])[0]
        raise InvalidInput(f"the run's best candidate no longer scores ({first})", file=run.path)
    dest.mkdir(parents=True, exist_ok=True)
    result = PlateauTest(
        run_dir=run.path,
        out=dest,
        turns=turns,
        agents=agents,
        policy=config.policy,
        minimize=config.minimize,
        start_commit=start,
        start_score=verdict.score,
        start_scores=verdict.scores,
        noise_floor=seed.noise_floor,
    )
    # The task as sealed when the run began (the file itself may have changed since).
    sealed = run.task_copy
    task = (sealed if sealed.is_file() else config.task).read_text(encoding="utf-8")
    shares = split_evenly(turns, agents)
    last_turn = {a: max((r.turn for r in records if r.agent == a), default=0) for a in sessions}
    last_record = {
        a: max((r for r in records if r.agent == a and r.round == last_round), key=lambda r: r.seq)
        for a in sessions
    }
    for side in SIDES:
        side_dir = dest / side
        side_dir.mkdir()
        if side == "continue":
            side_repo = repo
            workspaces = kept
            for path in workspaces:
                reset_worktree(path, start)
            if run.agent_state.is_dir():
                shutil.copytree(run.agent_state, side_dir / "agent-state")
            side_start = start
            number = last_round
        else:
            side_repo = side_dir / "repo"
            with tempfile.TemporaryDirectory(prefix="ea-plateau-") as tmp:
                files = Path(tmp) / "files"
                export_commit(repo, start, files)
                side_start = init_round_repo(side_repo, files, "plateau test: the run's best")
            workspaces = []
            for a in range(1, agents + 1):
                path = side_dir / f"agent-{a}"
                add_worktree(side_repo, path, f"plateau-fresh-agent-{a}", side_start)
                workspaces.append(path)
            number = last_round + 1
        side_run = _Side(
            name=side,
            config=config,
            agent=agent,
            judge=judge,
            task=task,
            repo=side_repo,
            workspaces=workspaces,
            plan=RoundPlan(number, side_start, result.start_score, tuple(shares)),
            floor=seed.noise_floor,
            sessions=sessions if side == "continue" else {},
            last=last_record if side == "continue" else {},
            first_turn=last_turn,
            out=RunDir(side_dir),
            progress=progress,
        )
        result.sides.append(side_run.run())
    write_json_atomic(dest / "plateau-test.json", result.to_json())
    (dest / "plateau-test.md").write_text(render_markdown(result), encoding="utf-8")
    return result


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
    """The run's best as a commit of the last round's repository.

    Either the best itself (found in the last round, or a repository shared by every
    round) or, with a fresh repository per round, that round's start: the best when it
    opened, and still the best since nothing in the round beat it.
    """
    if best_commit and _has_commit(repo, best_commit):
        return best_commit
    data = json.loads((run.round_dir(number) / "round.json").read_text(encoding="utf-8"))
    return str(data["start_commit"])


class _Side:
    """One side's turns: agents in parallel threads, the reducer deciding each turn."""

    def __init__(
        self,
        *,
        name: str,
        config: SearchConfig,
        agent: Agent,
        judge: Judge,
        task: str,
        repo: Path,
        workspaces: list[Path],
        plan: RoundPlan,
        floor: float,
        sessions: dict[int, str],
        last: dict[int, TurnRecord],
        first_turn: dict[int, int],
        out: RunDir,
        progress: ProgressFn | None,
    ) -> None:
        self.name, self.config, self.agent, self.judge = name, config, agent, judge
        self.task, self.repo, self.workspaces, self.plan = task, repo, workspaces, plan
        self.floor, self.sessions, self.last, self.first_turn = floor, sessions, last, first_turn
        self.out, self.progress = out, progress
        self.records: list[TurnRecord] = []
        self.best = plan.start_score
        self.best_commit = plan.start_commit
        self.lock = threading.Lock()

    def run(self) -> SideResult:
        started = time.monotonic()
        agents = len(self.workspaces)
        with ThreadPoolExecutor(max_workers=agents) as pool:
            for future in [pool.submit(self._loop, a) for a in range(1, agents + 1)]:
                future.result()
        wall = time.monotonic() - started
        rescored: float | None = None
        final = self.plan.start_score
        if self.best_commit != self.plan.start_commit:
            verdict = self.judge.judge(self.repo, self.best_commit)
            rescored = verdict.score
            final = verdict.score if verdict.score is not None else self.best
        minimize = self.config.minimize
        gain = self.plan.start_score - final if minimize else final - self.plan.start_score
        start = self.plan.start_score
        lines = [r.lines_changed for r in self.records if not r.empty]
        return SideResult(
            side=self.name,
            turns=len(self.records),
            best_score=self.best,
            best_rescored=rescored,
            gain=gain,
            gain_pct=gain / abs(start) * 100 if start else None,
            improved_turns=sum(1 for r in self.records if r.improved),
            empty_turns=sum(1 for r in self.records if r.empty),
            failed_turns=sum(1 for r in self.records if r.score is None),
            agent_errors=sum(1 for r in self.records if r.error),
            cost_usd=round(sum(r.cost_usd or 0.0 for r in self.records), 6),
            tokens=sum(r.tokens for r in self.records),
            agent_s=round(sum(r.agent_s for r in self.records), 3),
            wall_s=round(wall, 3),
            median_lines=float(statistics.median(lines)) if lines else None,
            log=str(self.out.log),
        )

    def _decide(self, agent: int) -> Decision:
        state = SearchState(tuple(self.records), self.plan)
        decision = decide(
            state, preset=self.config.preset, agent=agent, minimize=self.config.minimize
        )
        mine = [r for r in self.records if r.agent == agent]
        if decision.run_turn and not mine and agent in self.sessions:
            # The continue side's first turn resumes the session the run ended with.
            decision = Decision(
                run_turn=True,
                new_session=False,
                session_id=self.sessions[agent],
                visible=decision.visible,
            )
        return decision

    def _loop(self, agent: int) -> None:
        workspace = self.workspaces[agent - 1]
        while True:
            with self.lock:
                decision = self._decide(agent)
                if not decision.run_turn:
                    return
                mine = [r for r in self.records if r.agent == agent]
                last = mine[-1] if mine else self.last.get(agent)
                turn = self.first_turn.get(agent, 0) + len(mine) + 1
            base = mine[-1].commit if mine else self.plan.start_commit
            request = turn_request(
                self.config,
                task=self.task,
                decision=decision,
                last=last,
                workspace=workspace,
                round=self.plan.number,
                agent=agent,
                turn=turn,
                state_dir=self.out.path / "agent-state",
            )
            session = request.session_id
            clock = time.perf_counter()
            result = self.agent.run_turn(request=request)
            agent_s = time.perf_counter() - clock
            change = commit_turn(workspace, base, f"plateau test {self.name} agent {agent}")
            if change.empty:  # nothing changed: the candidate keeps its score
                verdict_score = mine[-1].score if mine else self.plan.start_score
                scores, feedback = [], "no edit"
            else:
                tag_candidate(workspace, f"plateau/{self.name}-a{agent}-t{turn:03d}", change.commit)
                verdict = self.judge.judge(self.repo, change.commit)
                verdict_score, scores, feedback = verdict.score, verdict.scores, verdict.feedback
            with self.lock:
                improved = verdict_score is not None and better(
                    verdict_score, self.best, minimize=self.config.minimize, floor=self.floor
                )
                record = TurnRecord(
                    seq=len(self.records) + 1,
                    round=self.plan.number,
                    agent=agent,
                    turn=turn,
                    round_turn=len(mine) + 1,
                    session=result.session_id or session,
                    new_session=decision.new_session,
                    base_commit=base,
                    commit=change.commit,
                    score=verdict_score,
                    scores=scores,
                    feedback=feedback,
                    empty=change.empty,
                    lines_changed=change.lines_changed,
                    input_tokens=result.input_tokens,
                    output_tokens=result.output_tokens,
                    reasoning_tokens=result.reasoning_tokens,
                    cost_usd=result.cost_usd,
                    wall_s=round(time.perf_counter() - clock, 4),
                    agent_s=round(agent_s, 4),
                    ts=now_iso(),
                    improved=improved,
                    visible=len(decision.visible),
                    error=result.error,
                )
                self.out.append(record)
                self.records.append(record)
                if improved and verdict_score is not None:
                    self.best, self.best_commit = verdict_score, change.commit
            if self.progress:
                self.progress(self.name, record)


# -- rendering -------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def format_table(result: PlateauTest) -> str:
    cont, fresh = result.side("continue"), result.side("fresh")
    paid = cont.cost_usd > 0 or fresh.cost_usd > 0

    def pct(s: SideResult) -> str:
        return "" if s.gain_pct is None else f" ({s.gain_pct:+.2f}%)"

    rows = [
        ("turns", str(cont.turns), str(fresh.turns)),
        ("best (search)", fmt_number(cont.best_score), fmt_number(fresh.best_score)),
        ("best re-scored", fmt_number(cont.best_rescored), fmt_number(fresh.best_rescored)),
        ("gain", f"{fmt_number(cont.gain)}{pct(cont)}", f"{fmt_number(fresh.gain)}{pct(fresh)}"),
        ("improving turns", str(cont.improved_turns), str(fresh.improved_turns)),
        ("empty turns", str(cont.empty_turns), str(fresh.empty_turns)),
        ("failed turns", str(cont.failed_turns), str(fresh.failed_turns)),
        ("median lines changed", fmt_number(cont.median_lines), fmt_number(fresh.median_lines)),
        ("cost", f"${cont.cost_usd:.4f}", f"${fresh.cost_usd:.4f}")
        if paid
        else ("tokens", str(cont.tokens), str(fresh.tokens)),
        ("agent time (s)", f"{cont.agent_s:.1f}", f"{fresh.agent_s:.1f}"),
    ]
    return "\n".join(markdown_table(["", "continue", "fresh"], rows)) + "\n"


def render_markdown(result: PlateauTest) -> str:
    better_word = "lower" if result.minimize else "higher"
    ratio = (
        f"Fresh sessions gained {_ratio(result.gain_ratio)} what continued ones did, "
        f"at {_ratio(result.cost_ratio)} the spend."
        if result.gain_ratio is not None
        else "The continued sessions gained nothing, so no gain ratio."
        + (f"  Spend ratio (fresh / continued): {_ratio(result.cost_ratio)}.")
    )
    return (
        f"# Plateau test: {result.run_dir.name}\n\n"
        f"From the run's best ({result.start_commit[:12]}, "
        f"re-scored {fmt_number(result.start_score)}"
        f"; {better_word} is better), {result.turns} turns continuing the "
        f"{result.agents} session(s) the run ended with, and {result.turns} turns with "
        f"fresh sessions (policy {result.policy}).  Gains are the side's best re-scored, "
        f"against the start; improvements count past the run's noise floor "
        f"({fmt_number(result.noise_floor)}).\n\n" + format_table(result) + "\n" + ratio + "\n"
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
        raise JudgeTampered(
            f"{TAMPERED}: {', '.join(changed)} changed since the run was sealed; "
            f"refusing to measure from {run.path}"
        )
    return seal
