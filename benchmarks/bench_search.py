"""Harness overhead per search turn, with a no-op agent and a trivial scorer.

Run:  python benchmarks/bench_search.py [--turns N] [--ray | --only-ray]

Everything below is measured in one invocation, ours beside a **reference-style loop**
that runs the same agent and scorer the way the reference harness does, with none of
our guards: per turn the agent subprocess in a git work tree, ``git add -A`` + ``git
commit`` (skipped when ``git status`` shows nothing), ``git archive | tar -x`` into a
fresh folder, the scorer there, the last stdout line parsed and a JSON line appended.

* **per turn**, for a ``no-op`` agent (``true``: every turn empty, so the judge is
  skipped) and a ``one-line edit`` agent (every turn committed, exported and scored by
  ``echo 1``): our ms per turn with ``--sandbox none`` (the reference confines
  nothing) over the reference's (goal: at most 1.2x for the no-op agent), and ours
  again under bwrap when it is installed, against the reference without a sandbox
  (goal: at most 2x for the no-op agent);
* **fixed cost**: each harness in a process of its own, start-up included: the run's
  wall time minus its turn loop (goal: ours at most 0.5 s over the reference's);
* **git processes per edit turn**: every git the run starts, through a logging ``git``
  first on PATH, over the turns (goal: at most 4; the run's set-up and end included).
* with ``--ray``, the ``ray`` executor against ``local`` on a Ray started once here
  (its start-up printed apart): **per turn** in this process, worker processes reused,
  the ``ray`` and ``local`` runs alternated three times and the median of the pairs'
  differences taken (goal: at most 30 ms over local); **fixed cost**, ``search run
  --executor ray --ray-address ADDR`` in a process of its own against the same command
  with ``--executor local``, the run's wall time minus its turn loop (goal: at most 2 s
  over local); and **git processes per edit turn** on the driver and the workers (every
  git of this part goes through the logging ``git``, for both executors alike).

For each in-process run it prints ms per turn (the turn loop only: seed scoring and
round setup, the round's end and the summary are reported separately) and the
breakdown from the per-turn ``timing`` in ``log.jsonl``: agent subprocess, git
(``status``; for a changed turn ``commit -a`` too), export (``git archive`` to a file,
untarred), scorer subprocess, and bookkeeping (the schedule, prompt, fsynced record
append, progress) as the remainder.  Candidate tags and best/ are written once per
round.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from evolving_agent.search.config import SearchConfig
from evolving_agent.search.runner import ProgressEvent, run_search

REFERENCE = r"""
import json, os, pathlib, shutil, subprocess, sys, tempfile, time
work, agent_cmd, turns = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def sh(cmd, cwd):
    return subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, text=True)
def score(commit_dir):
    export = pathlib.Path(tempfile.mkdtemp(prefix="ref-", dir=work.parent))
    sh(f"git archive HEAD | tar -x -C {export}", commit_dir)
    out = sh("echo 1", export).stdout.strip().splitlines()
    shutil.rmtree(export)
    return float(out[-1])
sh("git init -q && git add -A && git commit -qm seed", work)
score(work)
log = work.parent / (work.name + ".jsonl")
started = time.perf_counter()
for turn in range(1, turns + 1):
    subprocess.run(agent_cmd, shell=True, cwd=work, env={**os.environ, "EA_TURN": str(turn)},
                   capture_output=True, stdin=subprocess.DEVNULL)
    if sh("git status --porcelain", work).stdout.strip():
        sh(f"git add -A && git commit -qm 'turn {turn}'", work)
    with log.open("a") as fh:
        fh.write(json.dumps({"turn": turn, "score": score(work)}) + "\n")
print(time.perf_counter() - started)
"""


def reference_loop(name: str, agent_cmd: str, turns: int, tmp: Path) -> tuple[float, float]:
    """The reference-style loop (no guards) in a process of its own, as a harness of
    its own would run: (ms per turn, fixed ms: start-up, seed commit and score)."""
    work = tmp / f"{name}-reference"
    work.mkdir(parents=True)
    (work / "value.txt").write_text("0\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "r", "GIT_AUTHOR_EMAIL": "r@x",
           "GIT_COMMITTER_NAME": "r", "GIT_COMMITTER_EMAIL": "r@x"}  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", REFERENCE, str(work), agent_cmd, str(turns)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    total = time.perf_counter() - started
    loop = float(done.stdout.split()[-1])
    return loop * 1000 / turns, (total - loop) * 1000


def our_cli_run(
    name: str, agent_cmd: str, turns: int, tmp: Path, executor: tuple[str, ...] = ()
) -> tuple[float, float]:
    """``evolving-agent search run`` in a process of its own: (ms per turn, fixed ms:
    start-up, imports, seed scoring, round set-up, the final re-score and summary)."""
    cand = tmp / f"{name}-cli" / "candidate"
    cand.mkdir(parents=True)
    (cand / "value.txt").write_text("0\n")
    task = cand.parent / "task.md"
    task.write_text("benchmark\n")
    out = cand.parent / "run"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "evolving_agent", "search", "run", "--candidate", str(cand),
         "--task", str(task), "--score", "echo 1", "--agent", "command", "--agent-cmd",
         agent_cmd, "--policy", "single", "--turns", str(turns), "--out", str(out),
         "--sandbox", "none", "--score-cwd", str(cand.parent), "--quiet", *executor],
        cwd=cand.parent, capture_output=True, check=True,
    )  # fmt: skip
    total = time.perf_counter() - started
    rows = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    first = datetime.fromisoformat(rows[0]["ts"]).timestamp() - rows[0]["wall_s"]
    loop = datetime.fromisoformat(rows[-1]["ts"]).timestamp() - first
    return loop * 1000 / turns, (total - loop) * 1000


def git_calls(run: Callable[[], object], tmp: Path) -> list[str]:
    """The git commands ``run`` starts, through a logging ``git`` first on PATH."""
    real = shutil.which("git")
    assert real is not None
    shim_dir = Path(tempfile.mkdtemp(prefix="git-shim-", dir=tmp))
    log = shim_dir / "calls.log"
    (shim_dir / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {real} "$@"\n')
    (shim_dir / "git").chmod(0o755)
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{shim_dir}:{old}"
    try:
        run()
    finally:
        os.environ["PATH"] = old
    return log.read_text().splitlines() if log.exists() else []


def bench(
    name: str,
    agent_cmd: str,
    turns: int,
    tmp: Path,
    sandbox: str = "none",
    executor: str = "local",
    quiet: bool = False,
) -> float:
    cand = tmp / name / "candidate"
    cand.mkdir(parents=True)
    (cand / "value.txt").write_text("0\n")
    task = tmp / name / "task.md"
    task.write_text("benchmark\n")
    marks: dict[str, float] = {}

    def progress(event: ProgressEvent) -> None:
        marks.setdefault(event.kind, time.perf_counter())
        if event.kind == "turn":
            marks["last turn"] = time.perf_counter()

    started = time.perf_counter()
    summary = run_search(
        SearchConfig(
            candidate=cand,
            task=task,
            score_cmd="echo 1",
            agent="command",
            agent_cmd=agent_cmd,
            policy="single",
            score_cwd=tmp / name,
            turns=turns,
            out=tmp / name / "run",
            workdir=tmp / name,
            sandbox=sandbox,
            executor=executor,
        ),
        progress=progress,
    )
    ended = time.perf_counter()
    rows = [json.loads(x) for x in (summary.run_dir / "log.jsonl").read_text().splitlines()]
    loop_ms = (marks["last turn"] - marks["round"]) * 1000 / len(rows)

    def mean_ms(*keys: str) -> float:
        return statistics.fmean(sum(r["timing"].get(k, 0.0) for k in keys) for r in rows) * 1000

    agent = mean_ms("agent")
    git = mean_ms("commit", "tag")
    export = mean_ms("export")
    score = mean_ms("score")
    judge_rest = mean_ms("judge") - export - score
    book = loop_ms - agent - git - export - score - judge_rest
    if quiet:
        return loop_ms
    print(
        f"{name}: {loop_ms:.1f} ms per turn over {len(rows)} turns "
        f"(seed scoring + round 1 setup {(marks['round'] - started) * 1000:.0f} ms, "
        f"round end + summary {(ended - marks['last turn']) * 1000:.0f} ms)"
    )
    for label, value in (
        ("agent subprocess", agent),
        ("git: status (+ commit -a if changed)", git),
        ("export (git archive + untar)", export),
        ("scorer subprocess", score),
        ("judge temp dirs", judge_rest),
        ("bookkeeping (schedule, prompt, record fsync)", book),
    ):
        print(f"  {label:<55} {value:7.1f} ms  {100 * value / loop_ms:5.1f}%")
    return loop_ms


def ray_figures(turns: int, tmp: Path) -> list[str]:
    """The ray executor over local: per turn (in this process) and fixed (own process)."""
    import ray

    # A logging git first on PATH for the workers too (they inherit the raylet's PATH).
    real = shutil.which("git")
    shim_dir = Path(tempfile.mkdtemp(prefix="git-shim-", dir=tmp))
    calls = shim_dir / "calls.log"
    (shim_dir / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {calls}\nexec {real} "$@"\n')
    (shim_dir / "git").chmod(0o755)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{shim_dir}:{old_path}"
    started = time.perf_counter()
    ray.init(include_dashboard=False, log_to_driver=False)
    address = ray.get_runtime_context().gcs_address
    print(f"ray: a local cluster, ready in {time.perf_counter() - started:.1f} s")
    edit = 'echo "$EA_TURN" > value.txt'
    try:
        bench("ray warm-up", edit, 4, tmp, executor="ray", quiet=True)  # workers start
        pairs = []
        for k in range(3):
            local = bench(f"ray-pair-{k}-local", edit, turns, tmp, quiet=True)
            remote = bench(f"ray-pair-{k}-ray", edit, turns, tmp, executor="ray", quiet=True)
            pairs.append(remote - local)
            print(f"  pair {k + 1}: local {local:.1f} ms, ray {remote:.1f} ms per turn")
        per_turn = statistics.median(pairs)
        git_per_turn = {}
        for executor in ("local", "ray"):
            counted = []
            for n in (5, 5 + turns):
                calls.write_text("")
                bench(f"ray-git-{executor}-{n}", edit, n, tmp, executor=executor, quiet=True)
                counted.append(len(calls.read_text().splitlines()))
            git_per_turn[executor] = (counted[1] - counted[0]) / turns
        os.environ["PATH"] = old_path
        _, local_fixed = our_cli_run("ray-fixed-local", edit, turns, tmp)
        ray_turn, ray_fixed = our_cli_run(
            "ray-fixed-ray", edit, turns, tmp, ("--executor", "ray", "--ray-address", address)
        )
    finally:
        os.environ["PATH"] = old_path
        ray.shutdown()
    print(
        f"git processes per edit turn, driver and workers (runs of 5 and {5 + turns} turns): "
        f"ray {git_per_turn['ray']:.2f}, local {git_per_turn['local']:.2f}"
    )
    print(
        f"ray per turn over local (median of 3 pairs, {turns} edit turns each): "
        f"{per_turn:+.1f} ms; fixed cost (own process, joining the cluster): ray "
        f"{ray_fixed:.0f} ms, local {local_fixed:.0f} ms, difference "
        f"{ray_fixed - local_fixed:+.0f} ms (ray's CLI run: {ray_turn:.1f} ms per turn)"
    )
    return [
        f"ray per turn over local: {per_turn:+.1f} ms",
        f"ray git per edit turn: {git_per_turn['ray']:.2f} (local {git_per_turn['local']:.2f})",
        f"ray fixed over local: {ray_fixed - local_fixed:+.0f} ms "
        f"(ray {ray_fixed:.0f} ms, local {local_fixed:.0f} ms)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--ray", action="store_true", help="the ray executor against local")
    parser.add_argument("--only-ray", action="store_true", help="the ray figures alone")
    args = parser.parse_args()
    turns = args.turns
    summary: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ea-bench-") as tmp_name:
        tmp = Path(tmp_name)
        if args.ray or args.only_ray:
            summary += ray_figures(turns, tmp)
        if args.only_ray:
            print("\nsummary:\n  " + "\n  ".join(summary))
            return
        for name, agent in (("no-op", "true"), ("one-line edit", 'echo "$EA_TURN" > value.txt')):
            ours = bench(name, agent, turns, tmp)
            reference, _ = reference_loop(name, agent, turns, tmp)
            print(
                f"  reference-style loop: {reference:.1f} ms per turn; "
                f"ratio ours / reference = {ours / reference:.2f}x"
            )
            summary.append(f"{name}: ours {ours:.1f} ms per turn, reference {reference:.1f} "
                           f"ms ({ours / reference:.2f}x)")  # fmt: skip
            if shutil.which("bwrap"):
                boxed = bench(f"{name} (bwrap)", agent, turns, tmp, sandbox="bwrap")
                print(f"  under bwrap: {boxed / reference:.2f}x the reference (no sandbox)")
                summary.append(f"{name} under bwrap: {boxed:.1f} ms per turn, "
                               f"{boxed / reference:.2f}x the unconfined reference")  # fmt: skip
        # Fixed cost: each harness in a process of its own, start-up included.
        edit = 'echo "$EA_TURN" > value.txt'
        ours_turn, ours_fixed = our_cli_run("fixed", edit, turns, tmp)
        ref_turn, ref_fixed = reference_loop("fixed", edit, turns, tmp)
        print(
            f"fixed cost per run (own process, {turns} edit turns): ours {ours_fixed:.0f} ms, "
            f"reference {ref_fixed:.0f} ms, difference {ours_fixed - ref_fixed:+.0f} ms "
            f"(per turn there: ours {ours_turn:.1f} ms, reference {ref_turn:.1f} ms)"
        )
        summary.append(f"fixed: ours {ours_fixed:.0f} ms, reference {ref_fixed:.0f} ms "
                       f"({ours_fixed - ref_fixed:+.0f} ms)")  # fmt: skip
        # Git processes per edit turn, counted through a logging git on PATH.
        ours_calls = git_calls(lambda: bench("git count", edit, turns, tmp), tmp)
        ref_calls = git_calls(lambda: reference_loop("git count", edit, turns, tmp), tmp)
        print(
            f"git processes per edit turn (the run's total / {turns} turns): ours "
            f"{len(ours_calls) / turns:.2f}, reference {len(ref_calls) / turns:.2f}"
        )
        summary.append(f"git per edit turn: ours {len(ours_calls) / turns:.2f}, reference "
                       f"{len(ref_calls) / turns:.2f}")  # fmt: skip
    print("\nsummary:\n  " + "\n  ".join(summary))


if __name__ == "__main__":
    main()
