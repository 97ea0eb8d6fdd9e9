"""The search loop: rounds of parallel agent turns, judged, recorded, forgotten.

``run_search`` checks the configuration, creates the run directory, scores the seed
``score_repeats`` times (its spread is the noise floor) and then runs rounds until
the turn or money budget is spent.  ``resume_search`` continues from the run
directory alone.  A round runs on a logical clock
(``schedule.py``): at each step the reducer, over the records of earlier steps only,
says which agents take a turn, whether their sessions continue and what they may
see; the step's turns run at once, each agent in its own thread and private
workspace.  The harness commits whatever an agent left, the judge scores it on a
clean export, and the records are appended to ``log.jsonl`` (fsynced) in the
schedule's order before anything depends on them -- so a seed, task and agents make
the same run whatever the threads, executor or load.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.process import kill_with_env, subreaper
from evolving_agent.search import holdout as holdout_gate
from evolving_agent.search.aftermath import PlayedTurn, Tally, turn_record
from evolving_agent.search.agents import agent_for, check_agent
from evolving_agent.search.agents.base import Agent
from evolving_agent.search.certify import remove_leftovers
from evolving_agent.search.certify import verdict as certify_verdict
from evolving_agent.search.config import (
    SearchConfig,
    agent_turn_shares,
    validate_config,
)
from evolving_agent.search.executors import make_executor
from evolving_agent.search.executors.base import Executor
from evolving_agent.search.forecast import forecast, round_bests
from evolving_agent.search.judge import (
    SCORE_FD_VAR,
    JudgeTampered,
    Seal,
    SealChanged,
    seal_command,
    sealed_judge,
)
from evolving_agent.search.notes import (
    close_notes,
    notes_sandbox,
    open_notes,
    save_notes,
    with_notes,
)
from evolving_agent.search.private import (
    RUN_ID_VAR,
    private_root,
    remove_root,
    run_ident,
)
from evolving_agent.search.reducer import plan_round
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
from evolving_agent.search.rundir import (
    TAMPERED,
    ForgetReason,
    RunDir,
    SearchSummary,
    SeedInfo,
    TurnRecord,
)
from evolving_agent.search.sandbox import (
    SANDBOX_VAR,
    absolute_command,
    check_sandbox,
    default_sandbox,
    isolation,
    missing_protections,
    not_forgotten,
)
from evolving_agent.search.schedule import Slot, Step, next_step, run_rules
from evolving_agent.search.stats import noise_floor

# The turn itself (re-exported: callers and tests import it from the runner).
from evolving_agent.search.turn import (
    TurnJob,
    TurnOutcome,
    execute_turn,
    play_turn,
    turn_request,
)
from evolving_agent.search.workspace import (
    copy_candidate,
    export_commit,
    init_round_repo,
    tag_candidates,
)

__all__ = [
    "ProgressEvent",
    "TurnJob",
    "TurnOutcome",
    "TurnsFailed",
    "execute_turn",
    "new_dir",
    "resume_search",
    "run_search",
]


class TurnsFailed(InvalidInput):
    """Every turn (of the run, or of this resume) failed.  The summary was written and
    rides along, so ``search run --json`` can still print it."""

    def __init__(self, message: str, summary: SearchSummary, *, file: Path) -> None:
        self.summary = summary
        super().__init__(message, file=file)


ProgressKind = Literal["seed", "round", "turn", "done"]


@dataclass(frozen=True)
class ProgressEvent:
    """What a progress display needs; emitted after setup, each turn and each round."""

    kind: ProgressKind
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
    """Run a search from scratch; returns the summary also written to ``summary.json``.

    Raises ``InvalidInput`` (exit 4) when every turn failed, and ``JudgeTampered``
    (exit 5) when the judge found its scorer changed; the run directory keeps the
    records either way.
    """
    validate_config(config)
    # Local agents' abandoned processes come back here to be swept (not on Ray).
    with subreaper(config.executor == "local"):
        return _run_search(config, progress)


def _run_search(config: SearchConfig, progress: ProgressFn | None) -> SearchSummary:
    chosen = config.out is not None
    config = _resolved(config)
    assert config.sandbox is not None
    check_sandbox(config.sandbox)
    check_agent(config)  # a missing agent program is refused before anything exists
    assert config.out is not None
    # The executor seam: built before the run directory, so a missing Ray or an
    # unreachable cluster fails before anything exists; closed whatever happens.
    executor = make_executor(config)
    try:
        return _run_new(config, chosen, executor, progress)
    finally:
        executor.close()


def _run_new(
    config: SearchConfig, chosen: bool, executor: Executor, progress: ProgressFn | None
) -> SearchSummary:
    assert config.out is not None
    out = config.out
    if not chosen:
        # Two runs started in the same second must not share the default folder.
        out = new_dir(out)
        config = config.model_copy(update={"out": out})
        created = True
    else:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise UsageError(
                f"output directory is not empty: {out} (use `search resume {out}` to continue)"
            )
        created = not out.exists()
        out.mkdir(parents=True, exist_ok=True)
    run = RunDir(out)
    lock = run.lock()
    try:
        executor.bind(run.path)
        run.write_config(config)
        seal = _seal_and_score_seed(config, run, executor)
        if holdout_gate.seal_holdout(config, run.path) is not None:
            _holdout(config, run, executor)  # a seed the holdout refuses: refused here
    except BaseException:
        # Nothing worth keeping yet: leave no half-made run directory behind.
        os.close(lock)
        if created:
            shutil.rmtree(out, ignore_errors=True)
        else:
            for child in out.iterdir():
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        raise
    try:
        return _Runner(config, run, progress, seal, executor).run()
    except KeyboardInterrupt:
        raise SearchInterrupted(run.path) from None
    finally:
        os.close(lock)


class SearchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run, saying how to finish it: every finished turn is kept.

    Still a KeyboardInterrupt, so a library caller's Ctrl-C handling is unchanged; the
    CLI prints the message and exits 130, as for any Ctrl-C.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        super().__init__(
            f"every finished turn is kept; finish the run with: "
            f"evolving-agent search resume {shlex.quote(str(run_dir))}"
        )


def resume_search(run_dir: Path, *, progress: ProgressFn | None = None) -> SearchSummary:
    """Finish the planned turns of an interrupted run, repeating and losing none.

    Refuses (``JudgeTampered``, exit 5) a run whose ``run.json``, ``seed.json``, task
    copy or sealed scorer files changed since the run began.
    """
    run = RunDir(Path(run_dir).absolute())
    config = run.read_config()
    with subreaper(config.executor == "local"):
        return _resume(run, config, progress)


def _resume(run: RunDir, config: SearchConfig, progress: ProgressFn | None) -> SearchSummary:
    check_agent(config, candidate=False)
    lock = run.lock()
    # Canaries a killed probe left (in the scorer's folder too): gone before the seal check.
    remove_leftovers(run)
    try:
        executor = make_executor(config)  # the executor seam
        executor.bind(run.path)
    except BaseException:
        os.close(lock)
        raise
    try:
        seal = run.read_seal()
        if run.read_seed() is None:
            # Stopped before the seed was scored: no agent ever ran; start over.
            shutil.rmtree(run.path / "rounds", ignore_errors=True)
            shutil.rmtree(run.judge_dir, ignore_errors=True)
            seal = _seal_and_score_seed(config, run, executor)
        elif seal is None:
            # Killed between seed.json and the seal, or a run made before runs were
            # sealed: seal what is there now and go on.
            assert config.workdir is not None
            score_cmd, files = seal_command(config.score_cmd, config.workdir)
            run.write_seal(score_cmd, files, config.task.read_text(encoding="utf-8"))
            seal = {"score_cmd": score_cmd, "files": files}
        else:
            # Agents of a harness that was killed outlive it: end them before their
            # worktrees are made again.
            end_run_processes(run_id(run))
            changed = run.changed_since_seal(seal)
            changed += Seal(seal["files"]).changed()
            changed += holdout_gate.changed(run.path)
            if changed:
                raise SealChanged(changed, f"refusing to resume {run.path}")
        return _Runner(config, run, progress, seal, executor).run()
    except KeyboardInterrupt:
        raise SearchInterrupted(run.path) from None
    finally:
        executor.close()
        os.close(lock)


def run_id(run: RunDir) -> str:
    """The run's identity in its agents' environment (``RUN_ID_VAR``)."""
    return run_ident(run.path)


def end_run_processes(ident: str) -> list[int]:
    """Kill every process whose environment carries ``EA_RUN_ID=ident`` (Linux /proc)."""
    return kill_with_env(RUN_ID_VAR, ident)


def new_dir(path: Path) -> Path:
    """Create ``path``, or ``path-2``, ``path-3``… if taken; the one made is ours alone.

    ``mkdir`` without ``exist_ok`` is atomic, so concurrent callers never get the same one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 10_000):
        candidate = path if n == 1 else path.with_name(f"{path.name}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise UsageError(f"too many runs named {path.name}* in {path.parent}; pass --out")


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
            "score_cwd": config.score_cwd.absolute() if config.score_cwd else None,
            # ./agent.sh means the user's file: an agent runs in its workspace.
            "agent_cmd": absolute_command(config.agent_cmd, workdir, config.candidate.absolute())
            if config.agent_cmd
            else None,
            # --sandbox > $EA_SANDBOX > bwrap when installed; stored for resume.
            "sandbox": config.sandbox or os.environ.get(SANDBOX_VAR) or default_sandbox(),
        }
    )


def _holdout(config: SearchConfig, run: RunDir, executor: Executor) -> holdout_gate.Holdout | None:
    """The run's holdout (``holdout.py``), its seed checked; None without one."""
    seal = holdout_gate.read_seal(run.path)
    if seal is None:
        return None
    judge = sealed_judge(config, seal, channel="auto")

    def verdict(repo: Path, commit: str) -> tuple[float | None, str]:
        found = executor.judge(judge=judge, repo=repo, commit=commit)
        return found.score, (found.feedback.splitlines() or [""])[0][:300]

    gate = holdout_gate.Holdout(
        run.path, verdict, minimize=config.minimize, margin=config.holdout_margin,
        repo_of=lambda number: seed_repo(run) if number <= 1 else round_repo(run, number),
    )  # fmt: skip
    seed = run.read_seed()
    assert seed is not None
    gate.check_seed(seed.commit, seed.score)
    return gate


def _seal_and_score_seed(config: SearchConfig, run: RunDir, executor: Executor) -> dict[str, Any]:
    """Seal the judge, build round 1's one-commit repository, score the seed.

    The seed is scored ``score_repeats`` times; the seal (run.json, seed.json, the
    task text and the scorer's files) is written last.
    """
    assert config.workdir is not None
    score_cmd, files = seal_command(config.score_cmd, config.workdir)
    seal: dict[str, Any] = {"score_cmd": score_cmd, "files": files}
    task = config.task.read_text(encoding="utf-8")
    repo = seed_repo(run)
    with tempfile.TemporaryDirectory(prefix="ea-seed-") as tmp:
        files_dir = Path(tmp) / "files"
        copy_candidate(config.candidate, files_dir)
        commit = init_round_repo(repo, files_dir, "round 1: the seed candidate")
    # What the scorer loads beyond the files it names (its folder, its imports, its
    # site) is sealed too, from one verbose run on the seed (judge.seal_reach).
    judge = sealed_judge(config, seal)
    reach = judge.reach(repo, commit, exclude=[run.path, private_root(run.path)])
    files = {**reach, **files}
    seal["files"] = files
    verdict = executor.judge(judge=sealed_judge(config, seal), repo=repo, commit=commit)
    if verdict.score is None:
        first = (verdict.feedback.splitlines() or ["no output"])[0]
        hint = ""
        if config.score_cwd is None and "(exit " in first:
            hint = " (it runs inside the candidate's clean export; --score-cwd DIR runs it there)"
        raise InvalidInput(
            f"score command gave no number on the seed candidate ({first}): "
            f"{config.score_cmd}{hint}"
        )
    floor = noise_floor(verdict.scores)  # see stats.noise_floor for the derivation
    seed = SeedInfo(
        commit=commit,
        scores=verdict.scores,
        score=verdict.score,
        noise_floor=floor,
        feedback=verdict.feedback,
    )
    run.write_seed(seed)
    # Which channel the scorer used on the seed holds for the whole run: a scorer that
    # wrote $EA_SCORE_FD is never again read from its (forgeable) stdout.
    seal["channel"] = verdict.channel or "stdout"
    run.write_seal(score_cmd, files, task, channel=seal["channel"])
    return seal


class _Runner:
    """One run's loop: rounds of steps (``schedule.py``), each step's turns in parallel
    threads, recorded in this thread in the schedule's order.  ``self.lock`` guards what
    the turns' threads read (the tally's known scores)."""

    def __init__(
        self,
        config: SearchConfig,
        run: RunDir,
        progress: ProgressFn | None,
        seal: dict[str, Any],
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
        self.judge = sealed_judge(config, seal)
        self.sandbox = config.agent_confinement(run.path)
        # keep-notes: one notes file for the whole team and run (notes.py).
        self.notes = open_notes(run.path) if self.preset.keeps_notes else None
        if self.notes is not None:
            self.sandbox = notes_sandbox(self.sandbox, self.notes)
        self.agent: Agent = agent_for(config)
        self.holdout = _holdout(config, run, executor)
        # The sealed copy: the task file itself may have changed since.
        self.task = run.task_copy.read_text(encoding="utf-8")
        self.lock = threading.Lock()
        self.records = run.recover_log()
        self.resumed_at = len(self.records)
        self.run_id = run_id(run)
        # The best and the known scores: a fold of the log (resume rebuilds the same).
        self.tally = Tally.start(
            seed.score, seed.commit, minimize=config.minimize, floor=seed.noise_floor,
            records=self.records,
        )  # fmt: skip
        self.closing: ForgetReason | None = None  # why the current round ends early
        self.stop: Literal["failed", "judge-tampered"] | None = None  # the run stops here
        self.round: OpenRound | None = None
        self.best_moved = False  # best/ lags the tally until the round ends

    @property
    def best_repo(self) -> Path:
        best = self.tally.best
        return seed_repo(self.run_dir) if best is None else round_repo(self.run_dir, best.round)

    # -- the loop ----------------------------------------------------------------

    def notices(self) -> list[str]:
        """What the user must know about this run's protections (said once)."""
        found = []
        if self.judge.channel != "fd":
            found.append(
                f"the scorer prints its score on stdout: candidate code it runs can forge "
                f"that number; a scorer that writes it to ${SCORE_FD_VAR} cannot be forged "
                f"that way (docs/search.md, 'The score channel')"
            )
        missing = missing_protections(self.sandbox.kind, self.config.agent)
        if missing:
            found.append(missing)
        level = isolation(self.sandbox.kind, self.config.agent)
        if self.preset.resets_sessions and level != "bwrap":
            found.append(not_forgotten(level))
        if self.holdout is not None:
            warn = holdout_gate.alarm(
                self.holdout.checks, minimize=self.config.minimize, floor=self.seed.noise_floor
            )
            found += [warn] if warn else []
        return found

    def run(self) -> SearchSummary:
        # Said once, with the seed: what this run's protections lack.
        notes = "".join(f"\n  note: {notice}" for notice in self.notices())
        self._emit("seed", 0, message=f"seed score {self.seed.score:g}{notes}")
        number = latest_ready(self.run_dir)
        if number is not None and closed_reason(self.run_dir, number) is None:
            self.round = reopen_round(self.run_dir, number, self.records)
        else:
            self.round = self._next_round((number or 0) + 1, closed_reason_of=number)
        while self.round is not None:
            rnd = self.round
            self.closing = None
            message = f"round {rnd.plan.number} starts"
            if rnd.plan.number == 3:  # the budget forecaster speaks after round 2
                curve = round_bests(self.records, self.seed.score, minimize=self.config.minimize)
                made = forecast(
                    curve[:3], rounds=self.config.effective_rounds,
                    turns_per_round=sum(rnd.plan.quotas), minimize=self.config.minimize,
                )  # fmt: skip
                message += f"; {made.line()}" if made else ""
            self._emit("round", rnd.plan.number, message=message)
            if self.config.certify:
                self._certify(rnd)
            try:
                with ThreadPoolExecutor(max_workers=self.agents) as pool:
                    self._play_round(rnd, pool)
            except BaseException:
                self._refresh_best()  # Ctrl-C: best/ as the records say, then stop
                raise
            self._tag_round(rnd)
            self._refresh_best()
            if self.stop is not None:
                break  # the round stays open: a resume continues it
            if self.notes is not None:
                save_notes(self.run_dir.path)
            close_round(self.run_dir, rnd.plan.number, self.closing or "rounds")
            if not self.preset.forgets:
                break
            self.round = self._next_round(rnd.plan.number + 1, closed_reason_of=rnd.plan.number)
        if self.holdout is not None and self.stop is None:
            best = self.tally.best
            self.holdout.check_final(
                self.tally.best_commit, self.tally.best_score, best.round if best else 1,
                last_round=max((r.round for r in self.records), default=1),
            )  # fmt: skip
        # Nothing of the run stays on disk outside its directory.
        remove_root(private_root(self.run_dir.path))
        if self.notes is not None:
            close_notes(self.run_dir.path)
        summary = self._summary()
        self.run_dir.write_summary(summary)
        self._emit("done", summary.rounds, message="done")
        failed = [r for r in self.records if r.error]
        if self.stop == TAMPERED:
            why = next(r.error for r in failed if r.tampered)
            raise JudgeTampered(f"{why}; the run stopped: {self.run_dir.path}")
        # A turn that improved the best despite its error (a denied call) produced a
        # result: the run exits 0 and the summary flags it (improved_flagged).
        if self.records and all(_lost(r) for r in self.records):
            raise TurnsFailed(
                f"every turn failed ({len(failed)} of {len(self.records)}); the first: "
                f"{failed[0].error}",
                summary,
                file=self.run_dir.path,
            )
        if self.stop == "failed":
            mine = self.records[self.resumed_at :]
            raise TurnsFailed(
                f"every turn of this resume failed ({len(mine)}); the run stopped; the "
                f"first: {mine[0].error}",
                summary,
                file=self.run_dir.path,
            )
        return summary

    def _certify(self, rnd: OpenRound) -> None:
        """Canaries and the probe (certify.py) before the round's first turn; a round a
        resume reopens after its first turn is not probed again."""
        from evolving_agent.search.certify import certified_rounds, certify_round, probe_site

        number = rnd.plan.number
        remove_leftovers(self.run_dir)
        if number in certified_rounds(self.run_dir.path) or any(
            r.round == number for r in self.records
        ):
            return
        site = probe_site(
            self.config, self.run_dir, self.executor, self.sandbox, self.task,
            repo=rnd.repo, plan=rnd.plan, workspace=rnd.workspaces[0],
            env={RUN_ID_VAR: self.run_id},
        )  # fmt: skip
        found = certify_round(site, self.records, k=self.config.canaries)
        said = f"canary probe: {len(found.findings)} of {found.canaries} found"
        said += " (round certified)" if found.certified else f" {found.error or ''}".rstrip()
        self._emit("round", number, message=said)

    def _tag_round(self, rnd: OpenRound) -> None:
        """Name every candidate of the round (one git call for the lot)."""
        tags = {
            f"cand/r{r.round:02d}-a{r.agent}-t{r.turn:03d}": r.commit
            for r in self.records
            if r.round == rnd.plan.number and not r.empty
        }
        tag_candidates(rnd.repo, tags)

    def _next_round(self, number: int, *, closed_reason_of: int | None) -> OpenRound | None:
        if number > 1 and not self.preset.forgets:
            return None
        plan = plan_round(
            number=number,
            previous=[r for r in self.records if r.round < number],
            shares=self.shares,
            rounds=self.config.effective_rounds,
            start_commit=self.tally.best_commit,
            start_score=self.tally.best_score,
            budget_usd=self.config.budget_usd,
            budget_tokens=self.config.budget_tokens,
        )
        if plan is None:
            return None
        best_repo = self.best_repo
        if self.holdout is not None and number > 1:
            # The gate: the round restarts from a candidate the holdout passes.
            best = self.tally.best
            start = self.holdout.restart_seed(
                number,
                self.records,
                holdout_gate.Restart(
                    plan.start_commit, plan.start_score, best.round if best else 1
                ),
            )
            plan = dataclasses.replace(plan, start_commit=start.commit, start_score=start.score)
            best_repo = round_repo(self.run_dir, start.round)
        reason = closed_reason(self.run_dir, closed_reason_of) if closed_reason_of else None
        rnd = open_round(
            self.run_dir,
            plan=plan,
            preset=self.preset,
            agents=self.agents,
            best_repo=best_repo,
            forget_reason=reason,
        )
        self.tally.known.setdefault(rnd.plan.start_commit, rnd.plan.start_score)
        return rnd

    def _play_round(self, rnd: OpenRound, pool: ThreadPoolExecutor) -> None:
        """Step after step of the round's schedule until it ends or the run stops."""
        rules = run_rules(self.config)
        while self.stop is None:
            if self._failing():
                self.stop = "failed"
                return
            step = next_step(self.records, rnd.plan, rules)
            if step.end_round is not None:
                self.closing = step.end_round
                return
            if not step.slots:
                return  # every quota spent: the round's fixed boundary
            self._play_step(rnd, step, pool)

    def _play_step(self, rnd: OpenRound, step: Step, pool: ThreadPoolExecutor) -> None:
        """The step's turns at once; their records in the schedule's order, each as soon
        as it and every one before it is done."""
        futures = [pool.submit(self._play, rnd, slot) for slot in step.slots]
        pending = list(zip(step.slots, futures, strict=True))
        try:
            while pending:
                slot, future = pending[0]
                played = future.result()
                pending.pop(0)
                self._record(rnd, slot, played)
        except BaseException:
            # Ctrl-C or a harness error: the turns in flight finish and are recorded, in
            # order, and no new one starts; the round stays open for resume.  (An
            # executor that can, e.g. Ray, cancels them instead: a cancelled turn is not
            # recorded, nor any after it in the step, and resume runs them again.)
            self.executor.cancel()
            for slot, future in pending:
                try:
                    played = future.result()
                except BaseException:  # noqa: BLE001 - the first failure is re-raised below
                    break
                self._record(rnd, slot, played)
            raise

    def _failing(self) -> bool:
        """Every turn this process ran failed, and enough of them to stop trying."""
        enough = max(3, 2 * self.agents)
        mine = self.records[self.resumed_at :]
        return len(mine) >= enough and all(_lost(r) for r in mine)

    def _known(self, commit: str) -> tuple[bool, float | None]:
        with self.lock:
            return self.tally.known_score(commit)

    def _play(self, rnd: OpenRound, slot: Slot) -> PlayedTurn:
        """One slot's turn, in a pool thread: everything it needs was decided before."""
        clock = _Clock()
        agent = slot.agent
        workspace = rnd.workspaces[agent - 1]
        # The workspace is at the agent's last recorded candidate (or the round start):
        # nothing else moves it within a round, and reopening a round resets it there.
        base = slot.last.commit if slot.last is not None else rnd.plan.start_commit
        request = turn_request(
            self.config,
            task=self.task,
            decision=slot.decision,
            last=slot.last,
            workspace=workspace,
            round=rnd.plan.number,
            agent=agent,
            turn=slot.turn,
            state_dir=self.run_dir.agent_state,
            env={RUN_ID_VAR: self.run_id},
            sandbox=self.sandbox,
        )
        if self.notes is not None:
            request = with_notes(request, self.notes)
        job = TurnJob(
            request=request,
            base=base,
            message=f"round {rnd.plan.number} agent {agent} turn {slot.turn}",
            retries=self.config.retries,
            retry_backoff=self.config.retry_backoff,
        )
        clock.lap("setup")
        # The executor seam: execute_turn, in this thread in the agent's private
        # workspace (local) or on a worker with the commit brought back (ray).
        played = play_turn(
            self.executor,
            self.agent,
            job,
            judge=self.judge,
            repo=rnd.repo,
            start=rnd.plan.start_commit,
            label=f"r{rnd.plan.number:02d}-a{agent}-t{slot.turn:03d}",
            known=self._known,
        )
        verdict = played.verdict
        clock.laps.update(played.outcome.laps)
        clock.laps["judge"] = verdict.export_s + verdict.score_s
        clock.laps["export"], clock.laps["score"] = verdict.export_s, verdict.score_s
        return PlayedTurn(played, base, dict(clock.laps), clock.total())

    def _record(self, rnd: OpenRound, slot: Slot, turn: PlayedTurn) -> None:
        """Append the turn's record (fsynced) and fold it into the tally."""
        number = rnd.plan.number
        first_in_round = not any(r.round == number for r in self.records)
        with self.lock:
            record = turn_record(
                turn, slot=slot, seq=len(self.records) + 1, number=number, tally=self.tally,
                forget=rnd.forget_reason if first_in_round else None,
            )  # fmt: skip
            self.run_dir.append(record)
            self.records.append(record)
            self.tally.add(record)
        if record.tampered and self.stop is None:
            self.stop = TAMPERED
        # best/ follows at the round's end (one export, not one per improvement).
        self.best_moved = self.best_moved or record.improved
        self._emit("turn", number, record=record)

    # -- outputs -----------------------------------------------------------------

    def _refresh_best(self) -> None:
        if self.best_moved:
            self._export_best()
            self.best_moved = False

    def _export_best(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix=".best.", dir=self.run_dir.path))
        shutil.rmtree(tmp)
        export_commit(self.best_repo, self.tally.best_commit, tmp)
        self.run_dir.replace_best(tmp)

    def _emit(
        self,
        kind: ProgressKind,
        number: int,
        *,
        record: TurnRecord | None = None,
        message: str = "",
    ) -> None:
        if self.progress is None:
            return
        self.progress(
            ProgressEvent(
                kind=kind,
                round=number,
                turns_done=len(self.records),
                turns_planned=self.planned,
                best_score=self.tally.best_score,
                cost_usd=sum(r.cost_usd or 0.0 for r in self.records),
                tokens=sum(r.tokens for r in self.records),
                record=record,
                message=message,
            )
        )

    def _summary(self) -> SearchSummary:
        if not self.run_dir.best.is_dir():
            self._export_best()
        best = self.tally.best
        rounds = max((r.round for r in self.records), default=1)
        # The search-time best won a selection among noisy scores; scoring it afresh
        # (score_repeats times, median) tells how good it really is.
        rescored = self.executor.judge(
            judge=self.judge, repo=self.best_repo, commit=self.tally.best_commit
        )
        return SearchSummary(
            run_dir=self.run_dir.path,
            policy=self.config.policy,
            agent=self.config.agent,
            direction="minimize" if self.config.minimize else "maximize",
            best_score=self.tally.best_score,
            best_commit=self.tally.best_commit,
            best_round=best.round if best else None,
            best_agent=best.agent if best else None,
            best_rescored=rescored.score,
            best_rescores=rescored.scores,
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
            empty_turns=sum(1 for r in self.records if r.empty and not r.error),
            failed_turns=sum(1 for r in self.records if r.error),
            improved_flagged=sum(1 for r in self.records if r.improved and (r.error or r.denied)),
            denied_calls=sum(r.denied or 0 for r in self.records),
            failed_commands=sum(r.failed_commands or 0 for r in self.records),
            unscored_turns=sum(1 for r in self.records if r.score is None and not r.error),
            first_error=next((r.error for r in self.records if r.error), None),
            complete=self.stop is None,
            notices=self.notices(),
            isolation=isolation(self.sandbox.kind, self.config.agent),
            certify=certify_verdict(
                self.run_dir.path, isolation(self.sandbox.kind, self.config.agent)
            ),
            forgotten=(
                isolation(self.sandbox.kind, self.config.agent) == "bwrap"
                if self.preset.resets_sessions
                else None
            ),
            stopped=self.stop or ("turns" if len(self.records) >= self.planned else "budget"),
        )


def _lost(record: TurnRecord) -> bool:
    """A turn that failed and gave the run nothing (an error and no improvement)."""
    return bool(record.error) and not record.improved


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
