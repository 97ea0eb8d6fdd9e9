"""Bounded inputs: boot against the Live Bus's size, nightly on a huge day.

1. Boot as a whole process (``evolving-agent boot``, the hook's entry point) with 0,
   1,000 (the key limit, through the writer) and 100,000 Live Bus keys (planted behind
   the writer's back, past the limit).  Median of --rounds alternating runs; target:
   the largest allowed (1,000) within 1.2x of empty.  100k is reported beside it.
2. One nightly run (a real subprocess) for a day of --small (3,000) and of --events
   (300,000) friction events: wall time and peak RSS of that process, per event, and
   the large day against the small one (target: flat peak RSS, linear time).

    .venv/bin/python benchmarks/bench_bounds.py [--rounds 15] [--events 300000] [--small 3000]
    .venv/bin/python benchmarks/bench_bounds.py --skip-boot     (the nightly part only)
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
from datetime import date, datetime, timedelta
from datetime import time as dtime
from pathlib import Path

from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog
from evolving_agent.memory.ops import live
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot

TARGET = 1.2
DAY = date(2026, 11, 29)


def live_root(path: Path, keys: int) -> MemoryRoot:
    root = init_root(path)
    allowed = min(keys, live.MAX_KEYS)
    for i in range(allowed):
        live.set_entry(root, "session", f"thread-{i}", f"stopped at step {i} of the migration")
    for i in range(allowed, keys):  # past the limit: only by hand, behind the writer
        entry = {"key": f"x{i}", "text": f"planted {i}", "actor": "session", "updated": "2026"}
        (root.live / f"x{i}.json").write_text(json.dumps(entry))
    return root


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{cmd}: exit {done.returncode}: {done.stderr.decode()[:300]}")
    return time.perf_counter() - t


def bench_boot(tmp: Path, rounds: int, env: dict[str, str]) -> bool:
    script = Path(sys.executable).parent / "evolving-agent"
    roots = {n: live_root(tmp / f"live-{n}", n) for n in (0, 1_000, 100_000)}
    cmds = {n: [str(script), "boot", "--root", str(r.path)] for n, r in roots.items()}
    for cmd in cmds.values():
        timed(cmd, env)  # the first boot attests identity (as after a Canon change)
    samples: dict[int, list[float]] = {n: [] for n in cmds}
    for _ in range(rounds):
        for n, cmd in cmds.items():
            samples[n].append(timed(cmd, env))
    base = statistics.median(samples[0])
    print(f"boot (evolving-agent boot, whole process, median of {rounds} alternating runs)")
    for n, times in samples.items():
        med = statistics.median(times)
        print(f"  {n:>7,} Live Bus keys  {med * 1000:7.1f} ms  {med / base:5.2f}x empty")
    ratio = statistics.median(samples[1_000]) / base
    ok = ratio <= TARGET
    print(
        f"largest allowed (1,000 keys) vs empty: {ratio:.2f}x (target <= {TARGET}x): "
        + ("OK" if ok else "MISSED")
    )
    return ok


def big_day(path: Path, events: int) -> MemoryRoot:
    """A root whose one day holds ``events`` friction events: untagged, like a flood
    through the MCP tool, and one in 50 tagged to one of two hypotheses."""
    root = init_root(path)
    first = datetime.combine(DAY - timedelta(days=1), dtime(8)).astimezone()
    hyps = [add_hypothesis(root, f"hypothesis {n}", ts=first).id for n in ("one", "two")]
    log = EvidenceLog(root)
    base = datetime.combine(DAY, dtime(6)).astimezone()
    batch: list[EvidenceDraft] = []
    for i in range(events):
        tag = hyps[i % 2] if i % 50 == 0 else None
        batch.append(
            EvidenceDraft(
                ts=base + timedelta(microseconds=i * 100),
                kind="friction",
                actor="session",
                text=f"offered options the user had not asked for, case {i}",
                supports=tag,
            )
        )
        if len(batch) == 5_000:
            log.append_many(batch)
            batch = []
    if batch:
        log.append_many(batch)
    return root


def nightly_child(root: MemoryRoot, env: dict[str, str]) -> tuple[float, float, int]:
    """One ``run nightly`` as its own process: wall and CPU seconds and its peak RSS in
    bytes (``wait4`` gives the rusage of exactly this child; CPU time is what a shared
    machine's load does not inflate)."""
    cmd = [sys.executable, "-m", "evolving_agent", "--root", str(root.path),
           "run", "nightly", "--date", DAY.isoformat()]  # fmt: skip
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd}: exit {os.waitstatus_to_exitcode(status)}: {err[:300]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024  # Linux: KiB


def bench_nightly(tmp: Path, sizes: list[int], env: dict[str, str]) -> None:
    print("nightly on one day of N friction events (a real subprocess each; peak RSS by wait4)")
    rows = []
    for n in sizes:
        t = time.perf_counter()
        root = big_day(tmp / f"day-{n}", n)
        built = time.perf_counter() - t
        size = EvidenceLog(root).day_file(DAY).stat().st_size
        wall, cpu, peak = nightly_child(root, env)
        rows.append((n, cpu, peak))
        print(
            f"  {n:>8,} events ({size / 2**20:5.1f} MiB day, built in {built:5.1f} s): "
            f"wall {wall:6.2f} s, CPU {cpu:6.2f} s ({cpu / n * 1e6:6.1f} us/event), "
            f"peak RSS {peak / 2**20:6.1f} MiB ({peak / n:8.0f} B/event)"
        )
    if len(rows) >= 2:
        (n0, c0, p0), (n1, c1, p1) = rows[0], rows[-1]
        print(
            f"  {n1:,} vs {n0:,}: peak RSS {p1 / p0:.2f}x "
            f"({(p1 - p0) / (n1 - n0):+.1f} B per extra event), CPU {c1 / c0:.1f}x "
            f"for {n1 / n0:.0f}x the events ({(c1 - c0) / (n1 - n0) * 1e6:.1f} us per extra event)"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--events", type=int, default=300_000)
    ap.add_argument("--small", type=int, default=3_000, help="the day to compare with")
    ap.add_argument("--skip-nightly", action="store_true")
    ap.add_argument("--skip-boot", action="store_true")
    args = ap.parse_args()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    os.environ.update(env)
    with tempfile.TemporaryDirectory() as tmp:
        ok = args.skip_boot or bench_boot(Path(tmp), args.rounds, env)
        if not args.skip_nightly:
            bench_nightly(Path(tmp), [args.small, args.events], env)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
