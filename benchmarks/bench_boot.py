"""Boot as a whole process against a bare Python start, side by side in one run.

Boot runs on every session start (the Claude Code hook), so what counts is the whole
process: interpreter start, imports, reading the root, printing.  Each round runs, in
turn, ``python -c pass``, the console script ``evolving-agent boot``, ``python -m
evolving_agent boot`` (both on the fast path), and the full click path for reference;
the report is the median of each over the rounds and its ratio to ``python -c pass``
(target <= 5x for both entry points, and for the hook as documented, with
``--write-file``).

The root is a lived-in one: a named identity, a bias and a carry, a Canon note and a few
Live Bus entries.  One full boot runs first, as the first session start after a Canon
change would, and writes the identity attestation the fast path checks against.

Run:  python benchmarks/bench_boot.py [--rounds 21] [--format claude-hook]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _process_env import bench_env  # benchmarks/, the script's own folder

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon.canon import IDENTITY_TEMPLATE
from evolving_agent.memory.ops import live
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot

TARGET = 5.0


def lived_root(path: Path) -> MemoryRoot:
    root = init_root(path)
    human = Writer(root, "human")
    human.write("canon", "identity.yaml", IDENTITY_TEMPLATE.replace("Assistant", "Wren"))
    human.write("canon", "style.md", "# Style\n\nShort answers; code before prose.\n")
    human.write("today", "bias.md", "Lead with the answer.\nAsk before refactoring.\n")
    carry = {"type": "vow", "text": "Ask before a refactor.", "date": "2026-11-29"}
    human.write("today", "carry.json", json.dumps(carry) + "\n")
    for i in range(5):
        live.set_entry(root, "session", f"thread-{i}", f"stopped at step {i} of the migration")
    return root


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - t
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"{cmd}: exit {done.returncode}: {done.stderr.decode()[:300]}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--format", default="claude-hook", choices=["markdown", "json", "claude-hook"])
    args = ap.parse_args()
    script = Path(sys.executable).parent / "evolving-agent"
    with tempfile.TemporaryDirectory() as tmp:
        env = bench_env()
        os.environ.update(env)
        root = lived_root(Path(tmp) / "memory")
        boot = ["boot", "--root", str(root.path), "--format", args.format]
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "evolving-agent boot": [str(script), *boot],
            "python -m evolving_agent boot": [sys.executable, "-m", "evolving_agent", *boot],
            # The documented Claude Code hook also refreshes the CLAUDE.md @import copy.
            "  ... --write-file (the hook)": [
                str(script),
                *boot,
                "--write-file",
                str(Path(tmp) / "evolving-agent-boot.md"),
            ],
            "full path (click, pydantic)": [
                sys.executable,
                "-c",
                "from evolving_agent.cli import main; main()",
                *boot,
            ],
        }
        timed(cases["full path (click, pydantic)"], env)  # the first boot: attests identity
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, cmd in cases.items():
                samples[name].append(timed(cmd, env))
    base = statistics.median(samples["python -c pass"])
    print(f"boot --format {args.format}, whole process, median of {args.rounds} alternating runs")
    ratios = {}
    for name, times in samples.items():
        med = statistics.median(times)
        ratios[name] = med / base
        print(f"  {name:32} {med * 1000:8.1f} ms   {ratios[name]:5.2f}x python -c pass")
    fast = max(
        ratios["evolving-agent boot"],
        ratios["python -m evolving_agent boot"],
        ratios["  ... --write-file (the hook)"],
    )
    ok = fast <= TARGET
    print(
        f"boot ratio (worst entry point): {fast:.2f}x (target <= {TARGET:g}x): "
        + ("OK" if ok else "MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
