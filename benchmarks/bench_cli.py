"""The commands a user feels, as whole processes against a bare Python start, in one run.

``evolving-agent --help`` is a newcomer's first command, a ``friction`` write is what a
session hook or an assistant runs mid-conversation, and ``boot`` runs on every session
start.  Each round runs, in turn, ``python -c pass`` and each command through the
console script; the report is the median of each over the rounds and its ratio to
``python -c pass``.  Targets: ``--help`` and ``friction`` <= 4x, ``boot`` <= 1.5x (issue 33:
what boot imports and reads is the floor a session pays every time it starts).

Each friction write appends a real record to a real root (hash chain, lock, fsync).
``-X importtime`` on the same commands shows what is left to cut.

Run:  python benchmarks/bench_cli.py [--rounds 21]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _process_env import bench_env  # benchmarks/, the script's own folder

TARGETS = {"evolving-agent --help": 4.0, "evolving-agent friction": 4.0, "evolving-agent boot": 1.5}


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{cmd}: exit {done.returncode}: {done.stderr.decode()[:300]}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()
    script = str(Path(sys.executable).parent / "evolving-agent")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        env = bench_env(EVOLVING_AGENT_ROOT=str(root))
        timed([script, "init", str(root)], env)
        timed([script, "boot"], env)  # the first full boot writes the fast path's attestation
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "evolving-agent --help": [script, "--help"],
            "evolving-agent friction": [script, "friction", "the answer buried the command"],
            "evolving-agent boot": [script, "boot"],
        }
        for cmd in cases.values():  # warm the page cache and .pyc files
            timed(cmd, env)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, cmd in cases.items():
                samples[name].append(timed(cmd, env))
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':28} {'median':>9} {'ratio':>7} {'target':>7}")
    failed = False
    for name, values in samples.items():
        median = statistics.median(values)
        ratio = median / base
        target = TARGETS.get(name)
        mark = ""
        if target is not None:
            mark = f"{target:6.1f}x" + ("" if ratio <= target else "  MISSED")
            failed |= ratio > target
        print(f"{name:28} {median * 1000:7.1f}ms {ratio:6.2f}x {mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
