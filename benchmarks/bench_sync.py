"""sync time against the number of new events and against the whole history.

Two devices of one self share a bare remote on a local path.  For each case the laptop
appends N new friction events, then ``sync`` runs on the laptop (snapshot + push) and on
the desktop (fetch + check + merge); both are timed, best of the rounds (cases run round-robin).

- *new events*: N = 10, 100, 1000 on a fixed history;
- *history*: 30, 300, 900 days of earlier Evidence (20 events a day), N = 10.

What should hold: time grows with N, and stays flat as the history grows (the snapshot
re-reads only day files that grew, the merge only paths that changed).  Ratios are
printed against the smallest case of each series.

Run:  python benchmarks/bench_sync.py [--rounds 5] [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from datetime import date, datetime, timedelta
from pathlib import Path

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.memory.sync import add_remote, clone, sync
from evolving_agent.paths import MemoryRoot

PER_DAY = 20


def pair(base: Path, history_days: int) -> tuple[MemoryRoot, MemoryRoot]:
    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    laptop = init_root(base / "laptop")
    first = date.today() - timedelta(days=history_days + 1)
    drafts = [
        EvidenceDraft(
            ts=datetime.combine(first + timedelta(days=d), datetime.min.time()).astimezone()
            + timedelta(minutes=i),
            kind="friction",
            actor="session",
            text=f"history day {d} event {i}: offered options unasked",
        )
        for d in range(history_days)
        for i in range(PER_DAY)
    ]
    EvidenceLog(laptop).append_many(drafts)
    add_remote(laptop, "origin", str(remote))
    sync(laptop)
    desktop, _ = clone(str(remote), base / "desktop", name="desktop")
    return laptop, desktop


def one_round(laptop: MemoryRoot, desktop: MemoryRoot, new: int) -> tuple[float, float]:
    writer = Writer(laptop, "session")
    for i in range(new):
        writer.append("friction", f"new event {i}")
    t0 = time.perf_counter()
    sync(laptop)
    t1 = time.perf_counter()
    result = sync(desktop)
    t2 = time.perf_counter()
    assert result.received == new, (result.received, new)
    return t1 - t0, t2 - t1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller cases (a smoke run)")
    args = parser.parse_args()
    for var, value in (("NAME", "bench"), ("EMAIL", "bench@localhost")):
        os.environ.setdefault(f"GIT_AUTHOR_{var}", value)
        os.environ.setdefault(f"GIT_COMMITTER_{var}", value)
    news = (10, 100) if args.quick else (10, 100, 1000)
    histories = (30, 120) if args.quick else (30, 300, 900)
    cases = [("new", n, histories[0]) for n in news] + [("history", 10, d) for d in histories[1:]]
    best: dict[tuple[str, int, int], tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp:
        pairs = {d: pair(Path(tmp) / f"h{d}", d) for d in histories}
        for days in histories:  # warm-up: first-sync costs (caches, packs) are not counted
            one_round(*pairs[days], 1)
        # Round-robin over the cases, best of the rounds: a loaded machine slows every
        # case alike instead of whichever ran during a burst.
        for _ in range(args.rounds):
            for case in cases:
                lap, desk = one_round(*pairs[case[2]], case[1])
                old = best.get(case, (lap, desk))
                best[case] = (min(old[0], lap), min(old[1], desk))
    print(
        f"sync, best of {args.rounds} round(s); laptop = snapshot + push, "
        "desktop = fetch + check + merge"
    )
    print(f"\nnew events (history {histories[0]} days x {PER_DAY} events):")
    print(f"{'new':>6} {'laptop s':>9} {'desktop s':>10} {'ratio':>7}")
    first = sum(best[("new", news[0], histories[0])])
    for n in news:
        lap, desk = best[("new", n, histories[0])]
        print(f"{n:>6} {lap:>9.3f} {desk:>10.3f} {(lap + desk) / first:>6.2f}x")
    print(f"\nhistory (10 new events per sync, {PER_DAY} events a day):")
    print(f"{'days':>6} {'events':>7} {'laptop s':>9} {'desktop s':>10} {'ratio':>7}")
    first = sum(best[("new", 10, histories[0])])
    for days in histories:
        lap, desk = best[("new" if days == histories[0] else "history", 10, days)]
        print(
            f"{days:>6} {days * PER_DAY:>7} {lap:>9.3f} {desk:>10.3f} {(lap + desk) / first:>6.2f}x"
        )


if __name__ == "__main__":
    main()
