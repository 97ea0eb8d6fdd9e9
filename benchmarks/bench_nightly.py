"""Nightly cost: one day of history vs a year (365 days x 200 events).  Target ratio <= 1.5.

    .venv/bin/python benchmarks/bench_nightly.py [--days 365] [--per-day 200] [--repeat 5]

Both roots hold the same hypotheses and the same last day (200 events, some tagged);
the year root has 364 more days of evidence before it, and its nightly ran every night
up to the day before (the setup runs it once; its first run catches up the last
MAX_CATCH_UP days).  Each timing is one nightly run for the last day (median of
--repeat, restoring Today and the run marker in between).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from datetime import date, datetime, timedelta
from datetime import time as dtime
from pathlib import Path

from evolving_agent.jobs.nightly import MAX_CATCH_UP, run_nightly
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot

LAST = date(2026, 11, 29)


def fill(root: MemoryRoot, days: int, per_day: int, hyps: list[str]) -> None:
    log = EvidenceLog(root)
    for back in range(days - 1, -1, -1):
        day = LAST - timedelta(days=back)
        base = datetime.combine(day, dtime(6)).astimezone()
        drafts = []
        for i in range(per_day):
            tag = hyps[i % len(hyps)] if i % 10 == 0 else None
            drafts.append(
                EvidenceDraft(
                    ts=base + timedelta(seconds=60 * i),
                    kind="friction" if i % 4 == 0 else "raw",
                    actor="session",
                    text=f"event {i} of {day}",
                    supports=tag if i % 20 == 0 else None,
                    contradicts=tag if i % 20 == 10 else None,
                )
            )
        log.append_many(drafts)


def build(path: Path, days: int, per_day: int) -> tuple[MemoryRoot, float]:
    """The root, and how long its first nightly (the catch-up) took (0 for one day)."""
    root = init_root(path)
    first = datetime.combine(LAST - timedelta(days=days), dtime(8)).astimezone()
    hyps = [
        add_hypothesis(root, f"hypothesis number {n}", ts=first).id
        for n in ("one", "two", "three", "four", "five")
    ]
    fill(root, days, per_day, hyps)
    if days > 1:
        # A lived root: the nightly ran every night up to the day before.  (A root whose
        # nightly never ran catches up at most MAX_CATCH_UP days on its first run: that
        # is a one-off, not the cost of each night, so it is done here, in the setup.)
        before = LAST - timedelta(days=1)
        start = time.perf_counter()
        run_nightly(root, before, now=datetime.combine(LAST, dtime(3)).astimezone())
        return root, time.perf_counter() - start
    return root, 0.0


def time_nightly(root: MemoryRoot, repeat: int) -> float:
    saved = root.path.parent / f"{root.path.name}-today"
    shutil.copytree(root.today, saved)
    now = datetime.combine(LAST + timedelta(days=1), dtime(3)).astimezone()
    times = []
    for _ in range(repeat):
        shutil.rmtree(root.today)
        shutil.copytree(saved, root.today)
        for marker in (root.state / "runs").glob("nightly-*.json"):
            marker.unlink()
        start = time.perf_counter()
        result = run_nightly(root, LAST, now=now)
        times.append(time.perf_counter() - start)
        assert result.status == "done"
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--per-day", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for var, val in (("GIT_AUTHOR_NAME", "bench"), ("GIT_AUTHOR_EMAIL", "bench@example.invalid")):
        os.environ.setdefault(var, val)
        os.environ.setdefault(var.replace("AUTHOR", "COMMITTER"), val)
    with tempfile.TemporaryDirectory(prefix="ea-bench-") as tmp:
        t0 = time.perf_counter()
        one, _ = build(Path(tmp) / "one-day", 1, args.per_day)
        year, catch_up = build(Path(tmp) / "year", args.days, args.per_day)
        built = time.perf_counter() - t0
        t_one = time_nightly(one, args.repeat)
        t_year = time_nightly(year, args.repeat)
    ratio = t_year / t_one
    print(f"setup: {args.days} x {args.per_day} events written in {built:.1f}s")
    print(
        f"first nightly of the year root (catches up the last {MAX_CATCH_UP} days, once): "
        f"{catch_up:.1f}s"
    )
    print(
        f"nightly: 1 day {t_one * 1000:.1f} ms | {args.days} days {t_year * 1000:.1f} ms | "
        f"ratio {ratio:.2f} (target <= 1.5) {'OK' if ratio <= 1.5 else 'OVER'}"
    )


if __name__ == "__main__":
    main()
