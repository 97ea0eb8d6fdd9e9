"""The search loop: rounds of parallel agent turns, judged, recorded, forgotten.

``run_search`` checks the configuration, creates the run directory, scores the seed
``score_repeats`` times (its spread is the noise floor) and then runs rounds until
the turn or money budget is spent.  ``resume_search`` continues from the run
directory alone.  Within a round every agent runs in its own thread and worktree;
before each turn the reducer (under one lock, over the records so far) says whether
the agent may go on, whether its session continues and what it may see.  The
harness commits whatever the agent left, the judge scores it on a clean export, and
the record is appended to ``log.jsonl`` (fsynced) before anything depends on it.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.search.agents import make_agent
from evolving_agent.search.agents.base import Agent, TurnRequest
from evolving_agent.search.config import SearchConfig, agent_turn_shares, validate_config
from evolving_agent.search.executors import make_executor
from evolving_agent.search.executors.base import AgentSpec, Executor, TurnSpec
from evolving_agent.search.judge import Judge, Verdict
from evolving_agent.search.prompt import build_prompt
from evolving_agent.search.reducer import (
    Decision,
    SearchState,
    better,
    decide,
    plan_round,
)
from evolving_agent.search.rounds import (
    OpenRound,
    close_round,
    closed_reason,
    latest_ready,
    open_round,
    reopen_round,
    round_repo,
    seed_repo,
)
from evolving_agent.search.state import (
    RunDir,
    SearchSummary,
    SeedInfo,
    TurnRecord,
    now_iso,
)
from evolving_agent.search.workspace import (
    copy_candidate,
    export_commit,
    init_round_repo,
    tag_candidate,
)


@dataclass(frozen=True)
class ProgressEvent:
    """What a progress display needs; emitted after setup, each turn and each round."""

    kind: str  # "seed", "round", "turn", "done"
    round: int
    turns_done: int
    turns_planned: int
    best_score: float | None
    cost_usd: float
    tokens: int
    record: TurnRecord | None = None
    message: str = ""


ProgressFn = Callable[[ProgressEvent], None]


def run_search(config: SearchConfig, *, progress: ProgressFn | None = None) -> SearchSummary:
    """Run a search from scratch; returns the summary also written to ``summary.json``."""
    validate_config(config)
    config = _resolved(config)
    assert config.out is not None
    out = config.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(
            f"output directory is not empty: {out} (use `search resume {out}` to continue)"
        )
    created = not out.exists()
    # EXECUTOR SEAM (issue 15): built first, so a missing Ray fails before any work.
    executor = make_executor(config, run_dir=out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        run = RunDir(out)
        try:
            run.write_config(config)
            _score_seed(config, run, executor)
        except BaseException:
            # Nothing worth keeping yet: leave no half-made run directory behind.
            if created:
                shutil.rmtree(out, ignore_errors=True)
            else:
                for child in out.iterdir():
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
            raise
        return _Runner(config, run, progress, executor).run()
    finally:
        executor.close()


def resume_search(run_dir: Path, *, progress: ProgressFn | None = None) -> SearchSummary:
    """Finish the planned turns of an interrupted run, repeating and losing none."""
    run = RunDir(Path(run_dir).absolute())
    config = run.read_config()
    make_agent(config.agent, command=config.agent_cmd, args=config.agent_args)
    executor = make_executor(config, run_dir=run.path)  # EXECUTOR SEAM (issue 15)
    try:
        if run.read_seed() is None:
            shutil.rmtree(run.path / "rounds", ignore_errors=True)
            _score_seed(config, run, executor)
        return _Runner(config, run, progress, executor).run()
    finally:
        executor.close()


def _resolved(config: SearchConfig) -> SearchConfig:
    """Absolute paths, so the run directory alone can resume it from anywhere."""
    cwd = Path.cwd()
    workdir = (config.workdir or cwd).absolute()
    out = config.out
    if out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        out = cwd / "runs" / f"search-{stamp}-{config.policy}"
    return config.model_copy(
        update={
            "candidate": config.candidate.absolute(),
            "task": config.task.absolute(),
            "out": out.absolute(),
            "workdir": workdir,
        }
    )


def _judge(config: SearchConfig) -> Judge:
    assert config.workdir is not None
    return Judge(config.score_cmd, config.workdir, config.score_timeout, config.score_repeats)


def _score_seed(config: SearchConfig, run: RunDir, executor: Executor) -> SeedInfo:
    """Round 1's one-commit repository, and the seed scored ``score_repeats`` times."""
    repo = seed_repo(run)
    with tempfile.TemporaryDirectory(prefix="ea-seed-") as tmp:
        files = Path(tmp) / "files"
        copy_candidate(config.candidate, files)
        commit = init_round_repo(repo, files, "round 1: the seed candidate")
    verdict = executor.judge(judge=_judge(config), repo=repo, commit=commit)
    if verdict.score is None:
        first = (verdict.feedback.splitlines() or ["no output"])[0]
        raise InvalidInput(
            f"score command gave no number on the seed candidate ({first}): {config.score_cmd}"
        )
    floor = max(verdict.scores) - min(verdict.scores)
    seed = SeedInfo(
        commit=commit,
        scores=verdict.scores,
        score=verdict.score,
        noise_floor=floor,
        feedback=verdict.feedback,
    )
    run.write_seed(seed)
    return seed


class _Runner:
    """One run's loop.  All mutable state is guarded by ``self.lock``."""

    def __init__(
        self,
        config: SearchConfig,
        run: RunDir,
        progress: ProgressFn | None,
        executor: Executor,
    ) -> None:
        self.config = config
        self.executor = executor
        self.run_dir = run
        self.progress = progress
        self.preset = config.preset
        self.agents = config.effective_agents
        self.shares = agent_turn_shares(config)
        self.planned = sum(self.shares)
        seed = run.read_seed()
        assert seed is not None
        self.seed = seed
        self.judge = _judge(config)
        self.agent: Agent = make_agent(
            config.agent,
            command=config.agent_cmd,
            args=config.agent_args,
            prices=config.token_prices,
        )
        self.agent_spec = AgentSpec(
            config.agent, config.agent_cmd, config.agent_args, config.token_prices
        )
        self.task = config.task.read_text(encoding="utf-8")
        self.lock = threading.Lock()
        self.records = run.read_log(repair=True)
        self.best_score, self.best_commit, self.best_repo = seed.score, seed.commit, seed_repo(run)
        for record in self.records:
            if record.improved and record.score is not None:
                self.best_score, self.best_commit = record.score, record.commit
                self.best_repo = round_repo(run, record.round)
        self.known: dict[str, float | None] = {seed.commit: seed.score}
        for record in self.records:
            self.known[record.commit] = record.score
        self.closing: str | None = None
        self.round: OpenRound | None = None

    # -- the loop ----------------------------------------------------------------

    def run(self) -> SearchSummary:
        self._emit("seed", 0, message=f"seed score {self.seed.score:g}")
        number = latest_ready(self.run_dir)
        if number is not None and closed_reason(self.run_dir, number) is None:
            self.round = reopen_round(self.run_dir, number, self.records)
        else:
            self.round = self._next_round((number or 0) + 1, closed_reason_of=number)
        while self.round is not None:
            rnd = self.round
            self.closing = None
            self._emit("round", rnd.plan.number, message=f"round {rnd.plan.number} starts")
            with ThreadPoolExecutor(max_workers=self.agents) as pool:
                futures = [pool.submit(self._agent_loop, a) for a in range(1, self.agents + 1)]
                try:
                    for future in futures:
                        future.result()
                except BaseException:
                    # Ctrl-C or a harness error: let the turns in flight finish and be
                    # recorded, start no new one, leave the round open for resume.
                    # (An executor that can, e.g. Ray, cancels them instead: a
                    # cancelled turn is not recorded and resume runs it again.)
                    with self.lock:
                        self.closing = "interrupted"
                    self.executor.cancel()
                    raise
            reason = self.closing or "rounds"
            close_round(self.run_dir, rnd.plan.number, reason)
            if not self.preset.forgets:
                break
            self.round = self._next_round(rnd.plan.number + 1, closed_reason_of=rnd.plan.number)
        summary = self._summary()
        self.run_dir.write_summary(summary)
        self._emit("done", summary.rounds, message="done")
        return summary

    def _next_round(self, number: int, *, closed_reason_of: int | None) -> OpenRound | None:
        if number > 1 and not self.preset.forgets:
            return None
        plan = plan_round(
            number=number,
            previous=[r for r in self.records if r.round < number],
            shares=self.shares,
            rounds=self.config.effective_rounds,
            start_commit=self.best_commit,
            start_score=self.best_score,
            budget_usd=self.config.budget_usd,
            budget_tokens=self.config.budget_tokens,
        )
        if plan is None:
            return None
        reason = closed_reason(self.run_dir, closed_reason_of) if closed_reason_of else None
        rnd = open_round(
            self.run_dir,
            plan=plan,
            preset=self.preset,
            agents=self.agents,
            best_repo=self.best_repo,
            forget_reason=reason,
        )
        self.known.setdefault(rnd.plan.start_commit, rnd.plan.start_score)
        return rnd

    def _state(self) -> SearchState:
        assert self.round is not None
        return SearchState(tuple(self.records), self.round.plan, self.closing)

    def _agent_loop(self, agent: int) -> None:
        while True:
            with self.lock:
                decision = decide(
                    self._state(),
                    preset=self.preset,
                    agent=agent,
                    minimize=self.config.minimize,
                    forget_on_plateau=self.config.forget_on_plateau,
                )
                if decision.end_round and self.closing is None:
                    self.closing = decision.end_round
                if not decision.run_turn:
                    return
                mine = [r for r in self.records if r.agent == agent]
                turn = len(mine) + 1
                round_turn = sum(1 for r in mine if r.round == self._round().plan.number) + 1
            self._take_turn(agent, turn, round_turn, decision)

    def _round(self) -> OpenRound:
        assert self.round is not None
        return self.round

    def _take_turn(self, agent: int, turn: int, round_turn: int, decision: Decision) -> None:
        rnd = self._round()
        workspace = rnd.workspaces[agent - 1]
        clock = _Clock()
        # The worktree is at the agent's last recorded candidate (or the round start):
        # nothing else moves it within a round, and reopening a round resets it there.
        last = self._last_record(agent, rnd.plan.number)
        base = last.commit if last is not None else rnd.plan.start_commit
        session = decision.session_id or str(uuid.uuid4())
        request = TurnRequest(
            workspace=workspace,
            prompt=build_prompt(
                task=self.task,
                decision=decision,
                minimize=self.config.minimize,
                last=last,
            ),
            session_id=session,
            new_session=decision.new_session,
            round=rnd.plan.number,
            agent=agent,
            turn=turn,
            timeout=self.config.turn_timeout,
            visible=decision.visible,
            state_dir=self.run_dir.agent_state,
            seed=self.config.seed,
            minimize=self.config.minimize,
        )
        clock.lap("setup")
        # EXECUTOR SEAM (issue 15): the executor runs the agent and brings back the
        # verified commit (in the driver's worktree for local, from a bundle for ray).
        outcome = self.executor.run_turn(
            spec=TurnSpec(
                agent=self.agent_spec,
                request=request,
                base=base,
                start=rnd.plan.start_commit,
                repo=rnd.repo,
                message=f"round {rnd.plan.number} agent {agent} turn {turn}",
                label=f"r{rnd.plan.number:02d}-a{agent}-t{turn:03d}",
            )
        )
        result, change = outcome.result, outcome.change
        clock.lap("turn")  # agent + commit (+ shipping and verifying, for ray)
        clock.laps.update(outcome.laps)
        clock.laps.setdefault("agent", clock.laps["turn"])
        with self.lock:
            seen = change.empty and change.commit in self.known
            prior = self.known.get(change.commit)
        if outcome.lost:  # the worker died or its commit was refused: nothing to judge
            verdict = Verdict(None, [], result.error or "turn lost")
        elif seen:  # nothing changed: the candidate keeps its score, no need to re-judge
            verdict = Verdict(prior, [prior] if prior is not None else [], "no edit")
        else:
            verdict = self.executor.judge(judge=self.judge, repo=rnd.repo, commit=change.commit)
        clock.lap("judge")
        clock.laps["export"], clock.laps["score"] = verdict.export_s, verdict.score_s
        if not change.empty:
            name = f"cand/r{rnd.plan.number:02d}-a{agent}-t{turn:03d}"
            tag_candidate(workspace, name, change.commit)
        clock.lap("tag")
        with self.lock:
            improved = verdict.score is not None and better(
                verdict.score,
                self.best_score,
                minimize=self.config.minimize,
                floor=self.seed.noise_floor,
            )
            first_in_round = not any(r.round == rnd.plan.number for r in self.records)
            record = TurnRecord(
                seq=len(self.records) + 1,
                round=rnd.plan.number,
                agent=agent,
                turn=turn,
                round_turn=round_turn,
                session=result.session_id or session,
                new_session=decision.new_session,
                base_commit=base,
                commit=change.commit,
                score=verdict.score,
                scores=verdict.scores,
                feedback=verdict.feedback,
                empty=change.empty,
                lines_changed=change.lines_changed,
                input_tokens=result.input_tokens,
                output_tokens=result.output_tokens,
                reasoning_tokens=result.reasoning_tokens,
                cost_usd=result.cost_usd,
                wall_s=clock.total(),
                agent_s=clock.laps["agent"],
                judge_s=clock.laps["judge"],
                timing=clock.rounded(),
                ts=now_iso(),
                improved=improved,
                forget=rnd.forget_reason if first_in_round else None,
                visible=len(decision.visible),
                error=result.error,
                node=outcome.node,
            )
            self.run_dir.append(record)
            self.records.append(record)
            self.known[change.commit] = verdict.score
            if improved:
                assert verdict.score is not None
                self.best_score, self.best_commit, self.best_repo = (
                    verdict.score,
                    change.commit,
                    rnd.repo,
                )
                self._export_best()
            self._emit("turn", rnd.plan.number, record=record)

    def _last_record(self, agent: int, number: int) -> TurnRecord | None:
        with self.lock:
            mine = [r for r in self.records if r.agent == agent and r.round == number]
        return mine[-1] if mine else None

    # -- outputs -----------------------------------------------------------------

    def _export_best(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix=".best.", dir=self.run_dir.path))
        shutil.rmtree(tmp)
        export_commit(self.best_repo, self.best_commit, tmp)
        self.run_dir.replace_best(tmp)

    def _emit(
        self, kind: str, number: int, *, record: TurnRecord | None = None, message: str = ""
    ) -> None:
        if self.progress is None:
            return
        self.progress(
            ProgressEvent(
                kind=kind,
                round=number,
                turns_done=len(self.records),
                turns_planned=self.planned,
                best_score=self.best_score,
                cost_usd=sum(r.cost_usd or 0.0 for r in self.records),
                tokens=sum(r.tokens for r in self.records),
                record=record,
                message=message,
            )
        )

    def _summary(self) -> SearchSummary:
        if not self.run_dir.best.is_dir():
            self._export_best()
        best = next((r for r in reversed(self.records) if r.improved), None)
        rounds = max((r.round for r in self.records), default=1)
        return SearchSummary(
            run_dir=self.run_dir.path,
            policy=self.config.policy,
            agent=self.config.agent,
            direction="minimize" if self.config.minimize else "maximize",
            best_score=self.best_score,
            best_commit=self.best_commit,
            best_round=best.round if best else None,
            best_agent=best.agent if best else None,
            seed_score=self.seed.score,
            noise_floor=self.seed.noise_floor,
            turns=len(self.records),
            planned_turns=self.planned,
            rounds=rounds,
            agents=self.agents,
            cost_usd=round(sum(r.cost_usd or 0.0 for r in self.records), 6),
            input_tokens=sum(r.input_tokens or 0 for r in self.records),
            output_tokens=sum(r.output_tokens or 0 for r in self.records),
            reasoning_tokens=sum(r.reasoning_tokens or 0 for r in self.records),
            empty_turns=sum(1 for r in self.records if r.empty),
            failed_turns=sum(1 for r in self.records if r.score is None),
            complete=True,  # written only once the loop has run out of turns or money
            stopped="turns" if len(self.records) >= self.planned else "budget",
        )


class _Clock:
    """Lap times of one turn, for the record (and the overhead benchmark)."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = now - self.last
        self.last = now

    def total(self) -> float:
        return round(time.perf_counter() - self.start, 4)

    def rounded(self) -> dict[str, float]:
        return {k: round(v, 5) for k, v in self.laps.items()}
