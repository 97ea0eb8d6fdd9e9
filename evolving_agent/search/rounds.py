"""Opening, reopening and closing rounds on disk.

A round is ready once ``rounds/rNN/round.json`` exists (written last, after the
repository is in place) and over once ``closed.json`` exists.  A round directory
without ``round.json`` was interrupted while being built and is rebuilt from scratch;
a ready round that is not closed is reopened with its agents' workspaces removed: each
is rebuilt at its agent's last recorded candidate on its next turn.  The workspaces
themselves never live here but in the run's private folder (``private.py``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolving_agent.search.presets import Preset
from evolving_agent.search.private import enter_round, private_root, workspace_path
from evolving_agent.search.reducer import RoundPlan
from evolving_agent.search.rundir import ForgetReason, RunDir, TurnRecord, write_json_atomic
from evolving_agent.search.workspace import (
    export_commit,
    init_round_repo,
    remove_stale_locks,
)


@dataclass(frozen=True)
class OpenRound:
    plan: RoundPlan
    repo: Path
    workspaces: tuple[Path, ...]  # index 0 = agent 1
    forget_reason: ForgetReason | None  # why the previous round ended (None for round 1)


def seed_repo(run: RunDir) -> Path:
    """Round 1's repository: it holds the seed candidate as its only commit."""
    return run.round_dir(1) / "repo"


def latest_ready(run: RunDir) -> int | None:
    """The highest round number that was fully set up."""
    rounds = run.path / "rounds"
    numbers = (
        [int(p.name[1:]) for p in rounds.glob("r[0-9]*") if (p / "round.json").is_file()]
        if rounds.is_dir()
        else []
    )
    return max(numbers) if numbers else None


def closed_reason(run: RunDir, number: int) -> ForgetReason | None:
    path = run.round_dir(number) / "closed.json"
    if not path.is_file():
        return None
    reason: ForgetReason = json.loads(path.read_text()).get("reason", "rounds")
    return reason


def close_round(run: RunDir, number: int, reason: ForgetReason) -> None:
    write_json_atomic(run.round_dir(number) / "closed.json", {"reason": reason})


def open_round(
    run: RunDir,
    *,
    plan: RoundPlan,
    preset: Preset,
    agents: int,
    best_repo: Path,
    forget_reason: ForgetReason | None,
) -> OpenRound:
    """Build round ``plan.number``: its repository (if fresh) and one worktree per agent."""
    rdir = run.round_dir(plan.number)
    if rdir.exists():  # a half-built round from an interrupted run
        for child in rdir.iterdir():
            if child.name != "repo" or plan.number > 1:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    rdir.mkdir(parents=True, exist_ok=True)
    start = plan.start_commit
    if plan.number == 1:
        repo = seed_repo(run)
    elif preset.fresh_repo:
        # Forgetting: a new repository holding only the best candidate, one commit.
        repo = rdir / "repo"
        with tempfile.TemporaryDirectory(prefix="ea-round-") as tmp:
            files = Path(tmp) / "files"
            export_commit(best_repo, plan.start_commit, files)
            start = init_round_repo(
                repo, files, f"round {plan.number}: start from the best candidate"
            )
    else:
        repo = seed_repo(run)  # fork-and-flush: same repository, history kept
    plan = RoundPlan(
        plan.number, start, plan.start_score, plan.quotas, plan.budget_usd, plan.budget_tokens
    )
    # The boundary: every earlier round's workspaces go; this round's are built (as
    # repositories of their own, outside the run directory) on each agent's first turn.
    root = private_root(run.path)
    enter_round(root, plan.number, fresh=True)
    workspaces = [workspace_path(root, plan.number, a) for a in range(1, agents + 1)]
    write_json_atomic(
        rdir / "round.json",
        {
            "number": plan.number,
            "repo": str(repo),
            "start_commit": start,
            "start_score": plan.start_score,
            "quotas": list(plan.quotas),
            "budget_usd": plan.budget_usd,
            "budget_tokens": plan.budget_tokens,
            "forget_reason": forget_reason,
        },
    )
    return OpenRound(plan, repo, tuple(workspaces), forget_reason)


def reopen_round(run: RunDir, number: int, records: list[TurnRecord]) -> OpenRound:
    """A ready round after a crash: every worktree back at its last recorded candidate."""
    data = _round_json(run, number)
    plan = _plan_of(number, data)
    repo = stored_repo(run, data["repo"])
    remove_stale_locks(repo)
    # Each workspace is rebuilt at its agent's last recorded candidate on its next turn
    # (the runner bases the turn there); whatever a killed harness left is removed.
    root = private_root(run.path)
    enter_round(root, number, fresh=True)
    workspaces = [workspace_path(root, number, a) for a in range(1, len(plan.quotas) + 1)]
    return OpenRound(plan, repo, tuple(workspaces), data.get("forget_reason"))


def round_repo(run: RunDir, number: int) -> Path:
    return stored_repo(run, _round_json(run, number)["repo"])


def stored_plan(run: RunDir, number: int) -> RoundPlan:
    """Round ``number``'s plan as its ``round.json`` keeps it (resume, certify)."""
    return _plan_of(number, _round_json(run, number))


def _plan_of(number: int, data: dict[str, Any]) -> RoundPlan:
    return RoundPlan(
        number=number,
        start_commit=data["start_commit"],
        start_score=float(data["start_score"]),
        quotas=tuple(int(q) for q in data["quotas"]),
        budget_usd=data.get("budget_usd"),
        budget_tokens=data.get("budget_tokens"),
    )


def _round_json(run: RunDir, number: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run.round_dir(number) / "round.json").read_text())
    return data


def stored_repo(run: RunDir, stored: str) -> Path:
    """A round.json's ``repo`` (an absolute path when written) in the run directory as
    it is now: a run directory that was moved or copied resumes on its own repository."""
    parts = Path(stored).parts
    if len(parts) >= 3 and parts[-3] == "rounds":
        return run.path.joinpath(*parts[-3:])
    return Path(stored)
