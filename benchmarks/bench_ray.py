"""Throughput of the local and Ray executors, and Ray's overhead per turn.

Run:  python benchmarks/bench_ray.py [--turns-per-agent N] [--agents 1,2,4,8]
                                     [--ray-address ADDR]

A cheap agent (a shell command writing one line) and a trivial scorer (``cat`` of the
candidate's one file), the ``parallel`` policy, so every turn is committed, shipped,
verified and scored and nothing but the harness costs time.  For each agent count it
runs the same search on the ``local`` executor and on the ``ray`` executor and prints
turns per second of the turn loop (seed scoring, round setup and the final summary
excluded).  One unmeasured Ray run first lets Ray start its worker processes.
Without ``--ray-address`` a local Ray is started once for all runs (its start-up is
printed apart).

Ray's overhead per turn is the difference of the mean wall time of one turn with one
agent (no contention): bundling the round start and the visible commits, the task
round trip, rebuilding or resetting the node-local workspace, the turn bundle back,
its verification and fetch, and the scoring task with its own bundle.
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


def run(executor: str, agents: int, turns_per_agent: int, tmp: Path) -> tuple[float, float]:
    """(turns per second of the turn loop, mean wall seconds per turn)."""
    name = f"{executor}-{agents}"
    cand = tmp / name / "candidate"
    cand.mkdir(parents=True)
    (cand / "value.txt").write_text("0\n")
    task = tmp / name / "task.md"
    task.write_text("benchmark\n")
    marks: dict[str, float] = {}

    def progress(event: ProgressEvent) -> None:
        marks.setdefault(event.kind, time.perf_counter())
        if event.kind == "done":
            marks["done"] = time.perf_counter()

    summary = run_search(
        SearchConfig(
            candidate=cand,
            task=task,
            score_cmd='cat "$EA_CANDIDATE/value.txt"',
            agent="command",
            agent_cmd='echo "$EA_AGENT$EA_TURN" > value.txt',
            policy="parallel",
            agents=agents,
            turns=agents * turns_per_agent,
            out=tmp / name / "run",
            workdir=tmp / name,
            executor=executor,
        ),
        progress=progress,
    )
    rows = [json.loads(x) for x in (summary.run_dir / "log.jsonl").read_text().splitlines()]
    assert all(r["score"] is not None for r in rows), "a benchmark turn failed"
    loop = marks["done"] - marks["round"]
    return len(rows) / loop, statistics.fmean(r["wall_s"] for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns-per-agent", type=int, default=6)
    parser.add_argument("--agents", default="1,2,4,8")
    parser.add_argument("--ray-address", default=None)
    args = parser.parse_args()
    counts = [int(n) for n in args.agents.split(",")]

    import ray

    started = time.perf_counter()
    ray.init(address=args.ray_address, include_dashboard=False, log_to_driver=False)
    cpus = ray.cluster_resources().get("CPU", 0)
    print(f"ray: {len(ray.nodes())} node(s), {cpus:g} CPUs, ready in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    per_turn: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ea-bench-ray-") as tmp:
        # Warm-up, not measured: Ray starts its worker processes on first demand.
        started = time.perf_counter()
        run("ray", max(counts), 1, Path(tmp) / "warm-up")
        print(f"ray warm-up run: {time.perf_counter() - started:.1f} s")
        print(f"{'agents':>6}  {'local turns/s':>13}  {'ray turns/s':>11}")
        for agents in counts:
            local, local_wall = run("local", agents, args.turns_per_agent, Path(tmp))
            remote, ray_wall = run("ray", agents, args.turns_per_agent, Path(tmp))
            if agents == counts[0]:
                per_turn = {"local": local_wall, "ray": ray_wall}
            print(f"{agents:>6}  {local:>13.2f}  {remote:>11.2f}")
    ray.shutdown()
    overhead = (per_turn["ray"] - per_turn["local"]) * 1000
    print(
        f"one turn with {counts[0]} agent(s): local {per_turn['local'] * 1000:.0f} ms, "
        f"ray {per_turn['ray'] * 1000:.0f} ms; ray overhead {overhead:.0f} ms per turn"
    )


if __name__ == "__main__":
    main()
