"""``search certify RUN``: canary rounds for a run that already ran (``certify.py``).

A module of its own because it needs the runner's run identity and the executors,
and the runner needs ``certify.py``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from evolving_agent.errors import UsageError
from evolving_agent.search.certify import (
    certify_round,
    probe_site,
    remove_leftovers,
    verdict,
)
from evolving_agent.search.config import DEFAULT_CANARIES, MIN_CANARIES
from evolving_agent.search.executors import make_executor
from evolving_agent.search.private import private_root, workspace_path
from evolving_agent.search.rounds import latest_ready, round_repo, stored_plan
from evolving_agent.search.rundir import RunDir, write_json_atomic
from evolving_agent.search.runner import RUN_ID_VAR, run_id
from evolving_agent.search.sandbox import isolation


def certify_run(run_dir: Path, *, k: int = DEFAULT_CANARIES) -> dict[str, Any]:
    """``search certify RUN``: probe every round of an existing run at its start, as
    the run's agents would have run (its executor, sandbox and binds); the verdict is
    written to ``certify.json`` and ``summary.json`` and returned.  Rounds already
    probed are probed again (fresh canaries)."""
    if k < MIN_CANARIES:
        raise UsageError(f"--canaries must be at least {MIN_CANARIES}, got {k}")
    run = RunDir(Path(run_dir).absolute())
    config = run.read_config()
    last = latest_ready(run)
    if last is None:
        raise UsageError(f"no round of {run.path} was set up: nothing to certify")
    lock = run.lock()
    try:
        remove_leftovers(run)
        executor = make_executor(config)
        try:
            executor.bind(run.path)
            records = run.recover_log()
            task = run.task_copy.read_text(encoding="utf-8")
            sandbox = config.agent_confinement(run.path)
            for number in range(1, last + 1):
                plan = stored_plan(run, number)
                workspace = workspace_path(private_root(run.path), number, 1)
                site = probe_site(
                    config, run, executor, sandbox, task, repo=round_repo(run, number),
                    plan=plan, workspace=workspace, env={RUN_ID_VAR: run_id(run)},
                )  # fmt: skip
                certify_round(site, records, k=k)
        finally:
            executor.close()
            shutil.rmtree(private_root(run.path), ignore_errors=True)
        level = isolation(config.sandbox or "none", config.agent)
        result = verdict(run.path, level)
        assert result is not None
        if run.summary_json.is_file():
            summary = json.loads(run.summary_json.read_text(encoding="utf-8"))
            summary["certify"] = result
            write_json_atomic(run.summary_json, summary)
        return result
    finally:
        os.close(lock)
