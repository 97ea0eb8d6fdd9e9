"""Harness overhead per search turn, with a no-op agent and a trivial scorer.

Run:  python benchmarks/bench_search.py [--turns N]

Two runs of the ``single`` policy, both measured in one invocation:

* ``no-op``: the agent command is ``true``: every turn is empty, so the judge is
  skipped (an unchanged candidate keeps its score);
* ``one-line edit``: the agent writes one line, so every turn is committed, exported
  and scored by ``echo 1``.

Beside each, in the same invocation, a **reference-style loop** runs the same agent and
scorer the way the reference harness does, with none of our guards: per turn the agent
subprocess in a git work tree, ``git add -A`` + ``git commit`` (skipped when ``git
status`` shows nothing), ``git archive | tar -x`` into a fresh folder, the scorer
there, the last stdout line parsed and a JSON line appended.  The printed ratio is our
ms per turn over its ms per turn (goal: at most 1.2x for the no-op agent).  Ours runs
with ``--sandbox none`` for that ratio (the reference confines nothing), and once more
under bwrap when it is installed, to show what the sandbox costs.

For each it prints ms per turn (the turn loop only: seed scoring and round setup are
reported separately) and the breakdown from the per-turn ``timing`` in ``log.jsonl``:
agent subprocess, git (``status``; for a changed turn also ``add`` and ``commit``:
three git processes, one for an unchanged turn), export (``git archive`` to a file,
untarred), scorer subprocess, and bookkeeping (reducer, prompt, fsynced record
append, best/ export, progress) as the remainder.  Candidate tags are written once
per round, in one git call.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from evolving_agent.search.config import SearchConfig
from evolving_agent.search.runner import ProgressEvent, run_search


def reference_loop(name: str, agent_cmd: str, turns: int, tmp: Path) -> float:
    """ms per turn of a reference-style loop (no guards), same agent and scorer."""
    work = tmp / f"{name}-reference"
    work.mkdir(parents=True)
    (work / "value.txt").write_text("0\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "r", "GIT_AUTHOR_EMAIL": "r@x",
           "GIT_COMMITTER_NAME": "r", "GIT_COMMITTER_EMAIL": "r@x"}  # fmt: skip

    def sh(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cmd, shell=True, cwd=cwd, env=env, capture_output=True, text=True)

    sh("git init -q && git add -A && git commit -qm seed", work)
    log = tmp / f"{name}-reference.jsonl"
    started = time.perf_counter()
    for turn in range(1, turns + 1):
        subprocess.run(agent_cmd, shell=True, cwd=work, env={**env, "EA_TURN": str(turn)},
                       capture_output=True, stdin=subprocess.DEVNULL)  # fmt: skip
        if sh("git status --porcelain", work).stdout.strip():
            sh(f"git add -A && git commit -qm 'turn {turn}'", work)
        export = Path(tempfile.mkdtemp(prefix="ref-", dir=tmp))
        sh(f"git archive HEAD | tar -x -C {export}", work)
        out = sh("echo 1", export).stdout.strip().splitlines()
        shutil.rmtree(export)
        with log.open("a") as fh:
            fh.write(json.dumps({"turn": turn, "score": float(out[-1])}) + "\n")
    return (time.perf_counter() - started) * 1000 / turns


def bench(name: str, agent_cmd: str, turns: int, tmp: Path, sandbox: str = "none") -> float:
    cand = tmp / name / "candidate"
    cand.mkdir(parents=True)
    (cand / "value.txt").write_text("0\n")
    task = tmp / name / "task.md"
    task.write_text("benchmark\n")
    marks: dict[str, float] = {}

    def progress(event: ProgressEvent) -> None:
        marks.setdefault(event.kind, time.perf_counter())

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
        ),
        progress=progress,
    )
    ended = time.perf_counter()
    rows = [json.loads(x) for x in (summary.run_dir / "log.jsonl").read_text().splitlines()]
    loop_ms = (marks["done"] - marks["round"]) * 1000 / len(rows)

    def mean_ms(*keys: str) -> float:
        return statistics.fmean(sum(r["timing"].get(k, 0.0) for k in keys) for r in rows) * 1000

    agent = mean_ms("agent")
    git = mean_ms("commit", "tag")
    export = mean_ms("export")
    score = mean_ms("score")
    judge_rest = mean_ms("judge") - export - score
    book = loop_ms - agent - git - export - score - judge_rest
    print(
        f"{name}: {loop_ms:.1f} ms per turn over {len(rows)} turns "
        f"(seed scoring + round 1 setup {(marks['round'] - started) * 1000:.0f} ms, "
        f"summary {(ended - marks['done']) * 1000:.0f} ms)"
    )
    for label, value in (
        ("agent subprocess", agent),
        ("git: status (+ add, commit if changed)", git),
        ("export (git archive + untar)", export),
        ("scorer subprocess", score),
        ("judge temp dirs", judge_rest),
        ("bookkeeping (reducer, prompt, record fsync, best/)", book),
    ):
        print(f"  {label:<55} {value:7.1f} ms  {100 * value / loop_ms:5.1f}%")
    return loop_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ea-bench-") as tmp:
        for name, agent in (("no-op", "true"), ("one-line edit", 'echo "$EA_TURN" > value.txt')):
            ours = bench(name, agent, args.turns, Path(tmp))
            reference = reference_loop(name, agent, args.turns, Path(tmp))
            print(
                f"  reference-style loop: {reference:.1f} ms per turn; "
                f"ratio ours / reference = {ours / reference:.2f}x"
            )
            if shutil.which("bwrap"):
                boxed = bench(f"{name} (bwrap)", agent, args.turns, Path(tmp), sandbox="bwrap")
                print(f"  under bwrap: {boxed / reference:.2f}x the reference")


if __name__ == "__main__":
    main()
