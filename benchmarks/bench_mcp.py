"""The MCP server's start against a bare Python start, side by side in one run.

Clients give a stdio server a short window: Codex waits about a second for an optional
server before the first model request goes out without its tools.  So what counts is
the time from spawning ``evolving-agent --root R mcp`` to its ``initialize`` answer.
Each round runs, in turn, ``python -c pass`` (spawn to exit), the console script, and
``python -m evolving_agent`` (spawn to the ``initialize`` answer on stdout), then a
first ``tools/call`` (``boot``) on the same server, which pays for the memory code the
server loads after ``initialize``.  The report is each median and its ratio to
``python -c pass``; the target is ``initialize`` within 3x a bare Python start (about
0.1 s on an idle 2-core machine; the ratio holds when the machine is busy).

Run:  python benchmarks/bench_mcp.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.root import init_root

TARGET_X = 3.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
BOOT_CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "boot", "arguments": {}},
}


def bare() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def server(argv: list[str]) -> tuple[float, float]:
    """(spawn -> initialize answered, initialize answered -> first boot call answered)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    initialized = time.perf_counter()
    assert answer["id"] == 1 and "result" in answer, answer
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.write(json.dumps(BOOT_CALL).encode() + b"\n")
    proc.stdin.flush()
    booted = json.loads(proc.stdout.readline())
    called = time.perf_counter()
    assert booted["result"]["isError"] is False, booted
    proc.stdin.close()
    proc.wait(timeout=30)
    return initialized - start, called - initialized


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    script = shutil.which("evolving-agent") or str(Path(sys.executable).parent / "evolving-agent")
    with tempfile.TemporaryDirectory() as tmp:
        root = init_root(Path(tmp) / "memory")
        Writer(root, "human").write("today", "bias.md", "Lead with the answer.\n")
        entries = {
            "console script": [script, "--root", str(root.path), "mcp"],
            "python -m": [sys.executable, "-m", "evolving_agent", "--root", str(root.path), "mcp"],
        }
        server(entries["console script"])  # warm the page cache and .pyc files
        times: dict[str, list[float]] = {"python -c pass": []}
        for name in entries:
            times[f"{name}: initialize"] = []
            times[f"{name}: first boot call"] = []
        for _ in range(args.rounds):
            times["python -c pass"].append(bare())
            for name, argv in entries.items():
                init, call = server(argv)
                times[f"{name}: initialize"].append(init)
                times[f"{name}: first boot call"].append(call)
    base = statistics.median(times["python -c pass"])
    print(f"MCP server start, median of {args.rounds} rounds (target: initialize <= {TARGET_X:g}x)")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"  {name:<34} {med * 1000:8.1f} ms  {med / base:6.1f}x python -c pass")
    worst = max(statistics.median(v) for k, v in times.items() if k.endswith("initialize"))
    ratio = worst / base
    verdict = "meets" if ratio <= TARGET_X else "MISSES"
    print(f"initialize {verdict} the target: {worst:.3f} s, {ratio:.1f}x python -c pass")


if __name__ == "__main__":
    main()
