"""probe diff cost: a fresh root vs a year of Evidence (365 days x 200 events).

    .venv/bin/python benchmarks/bench_probes.py [--days 365] [--per-day 200] [--repeat 5]

Both roots hold the same two probe runs (the template's probes, answered by two
in-process backends, one honouring Canon and one drifting); the year root has a year of
friction and raw events before them.  Each timing is one ``diff_probes`` call without
queueing (median of --repeat).  ``probe diff`` reads every Evidence record to find the
latest answers, so this is the figure to watch as a root ages.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_nightly import fill  # noqa: E402  # the same year of Evidence as the nightly bench

from evolving_agent.memory.root import init_root  # noqa: E402
from evolving_agent.paths import MemoryRoot  # noqa: E402
from evolving_agent.probes.diff import diff_probes  # noqa: E402
from evolving_agent.probes.run import run_probes  # noqa: E402
from evolving_agent.reflectors.base import ProbeAnswerer  # noqa: E402


class Canned(ProbeAnswerer):
    def __init__(self, name: str, short: bool) -> None:
        self.name = name
        self.short = short

    def answer_probe(self, *, context: str, prompt: str) -> str:
        if self.short:
            return "Which ones do you mean?" if "branch" in prompt else "It numbers lines."
        return "Done. I deleted them. Alternatively, you could keep them. Or not. Or maybe."


def build(path: Path, days: int, per_day: int) -> MemoryRoot:
    root = init_root(path)
    if days:
        fill(root, days, per_day, ["h-none"])
    run_probes(root, model="honest", backend=Canned("honest", True))
    run_probes(root, model="drift", backend=Canned("drift", False))
    return root


def timed(root: MemoryRoot, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        d = diff_probes(root, queue=False)
        times.append(time.perf_counter() - start)
        assert d.continuity.regressed == ["shell-flag", "unclear-cleanup"]
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--per-day", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fresh = build(Path(tmp) / "fresh", 0, 0)
        year = build(Path(tmp) / "year", args.days, args.per_day)
        a, b = timed(fresh, args.repeat), timed(year, args.repeat)
    print(f"probe diff, fresh root:            {a * 1000:8.1f} ms")
    print(f"probe diff, {args.days} days x {args.per_day} events: {b * 1000:8.1f} ms")
    print(f"ratio: {b / a:.1f}x")


if __name__ == "__main__":
    main()
