"""Harness overhead per search turn, with a no-op agent and a trivial scorer.

Run:  python benchmarks/bench_search.py [--turns N]

Two runs of the ``single`` policy, both measured in one invocation:

* ``no-op``: the agent command is ``true``: every turn is empty, so the judge is
  skipped (an unchanged candidate keeps its score);
* ``one-line edit``: the agent writes one line, so every turn is committed, exported
  and scored by ``echo 1``.

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
import statistics
import tempfile
import time
from pathlib import Path

from evolving_agent.search.config import SearchConfig
from evolving_agent.search.runner import ProgressEvent, run_search


def bench(name: str, agent_cmd: str, turns: int, tmp: Path) -> None:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ea-bench-") as tmp:
        bench("no-op", "true", args.turns, Path(tmp))
        bench("one-line edit", 'echo "$EA_TURN" > value.txt', args.turns, Path(tmp))


if __name__ == "__main__":
    main()
