"""Bounded inputs: boot against the Live Bus's size, nightly on a huge day.

1. Boot as a whole process (``evolving-agent boot``, the hook's entry point) with 0,
   1,000 (the key limit, through the writer) and 100,000 Live Bus keys (planted behind
   the writer's back, past the limit).  Median of --rounds alternating runs; target:
   the largest allowed (1,000) within 1.2x of empty.  100k is reported beside it.
2. One nightly run (a real subprocess) for a day of --events friction events: wall time
   and peak RSS, and both per event.

    .venv/bin/python benchmarks/bench_bounds.py [--rounds 15] [--events 300000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timedelta
from datetime import time as dtime
from pathlib import Path

from evolving_agent.memory import live
from evolving_agent.memory.evidence import EvidenceDraft, EvidenceLog
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


def bench_nightly(tmp: Path, events: int, env: dict[str, str]) -> None:
    root = init_root(tmp / "big-day")
    log = EvidenceLog(root)
    base = datetime.combine(DAY, dtime(6)).astimezone()
    batch: list[EvidenceDraft] = []
    for i in range(events):
        batch.append(
            EvidenceDraft(
                ts=base + timedelta(microseconds=i * 100),
                kind="friction",
                actor="session",
                text=f"offered options the user had not asked for, case {i}",
            )
        )
        if len(batch) == 5_000:
            log.append_many(batch)
            batch = []
    if batch:
        log.append_many(batch)
    size = log.day_file(DAY).stat().st_size
    cmd = [sys.executable, "-m", "evolving_agent", "--root", str(root.path),
           "run", "nightly", "--date", DAY.isoformat()]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    wall = timed(cmd, env)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kib <= before:
        print("  (peak RSS of the child not separable from earlier children)")
    print(f"nightly on one day of {events:,} events ({size / 2**20:.0f} MiB day file)")
    print(f"  wall {wall:6.1f} s   ({wall / events * 1e6:6.1f} us per event)")
    print(
        f"  peak RSS {peak_kib / 1024:6.0f} MiB ({peak_kib * 1024 / events:6.0f} bytes per event)"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--events", type=int, default=300_000)
    ap.add_argument("--skip-nightly", action="store_true")
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
        ok = bench_boot(Path(tmp), args.rounds, env)
        if not args.skip_nightly:
            bench_nightly(Path(tmp), args.events, env)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
