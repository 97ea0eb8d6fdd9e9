"""The CPU the common commands cost, as whole processes against a bare Python start.

The test suite runs thousands of ``python -m evolving_agent`` processes, and a user pays
each command's start on every call, so what matters is CPU (user + system, the child's
own and its git calls'), not wall-clock time, which other processes on a shared machine
make unreliable.  Each round runs, in turn, ``python -c pass`` and each command once
against one small root (a few friction events, a hypothesis, a reflected night); the
report is each command's median CPU over the rounds and its ratio to ``python -c pass``.

``friction`` runs through the full CLI (``EVOLVING_AGENT_RAISE=1`` makes the fast path
decline); ``init`` creates a new root each round; ``run nightly`` re-runs a night already
run (which changes nothing, and reads everything).

``-X importtime`` on the same commands shows what is left to cut.

Run:  python benchmarks/bench_commands.py [--rounds 11]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _process_env import bench_env  # benchmarks/, the script's own folder


def cpu(cmd: list[str], env: dict[str, str]) -> float:
    """User + system seconds of ``cmd`` and every child it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{cmd}: exit {done.returncode}: {done.stderr.decode()[:300]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    ea = [sys.executable, "-m", "evolving_agent"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        env = bench_env(EVOLVING_AGENT_ROOT=str(root))
        env.pop("EVOLVING_AGENT_RAISE", None)
        cpu([*ea, "init", str(root)], env)
        for text in ("the answer buried the command", "asked twice for the same file"):
            cpu([*ea, "friction", text], env)
        cpu([*ea, "hypothesis", "add", "short answers land better"], env)
        cpu([*ea, "run", "nightly"], env)
        full = {**env, "EVOLVING_AGENT_RAISE": "1"}
        fresh = iter(range(10**6))
        cases = {
            "python -c pass": lambda: cpu([sys.executable, "-c", "pass"], env),
            "hypothesis list": lambda: cpu([*ea, "hypothesis", "list"], env),
            "verify": lambda: cpu([*ea, "verify"], env),
            "run nightly": lambda: cpu([*ea, "run", "nightly"], env),
            "review list": lambda: cpu([*ea, "review", "list"], env),
            "live show": lambda: cpu([*ea, "live", "show"], env),
            "evidence show": lambda: cpu([*ea, "evidence", "show"], env),
            "friction (full CLI)": lambda: cpu([*ea, "friction", "a felt miss"], full),
            "init": lambda: cpu([*ea, "init", str(Path(tmp) / f"new{next(fresh)}")], env),
        }
        for case in cases.values():  # warm the page cache and .pyc files
            case()
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, case in cases.items():
                samples[name].append(case())
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':22} {'median CPU':>11} {'ratio':>7}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:22} {median * 1000:9.1f}ms {median / base:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
