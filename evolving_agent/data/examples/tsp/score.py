"""Score a TSP candidate: the tour length of its solver on 200 fixed cities (lower is better).

Usage: python examples/tsp/score.py [CANDIDATE_DIR]   (default: $EA_CANDIDATE)

The scorer lives outside the candidate: it owns the cities (generated from a fixed
seed; ``cities.txt`` beside this file is the copy handed to the solver), runs
``solve.py`` from the candidate directory, checks the output is a permutation of all
cities and prints the tour length on the last line.  An invalid tour exits 1.

Under the search harness the verdict goes to ``$EA_SCORE_FD`` instead (the harness's
score channel, see docs/search.md): the solver, a child process, does not inherit
that descriptor, and this process makes itself non-dumpable first, so the solver
cannot open ``/proc/<this pid>/fd/...`` either.  What the solver prints, or writes to
this process's stdout, is feedback at most.
"""

from __future__ import annotations

import ctypes
import math
import os
import random
import subprocess
import sys
from pathlib import Path

N_CITIES = 200
SEED = 2024
HERE = Path(__file__).resolve().parent


def cities() -> list[tuple[float, float]]:
    rng = random.Random(SEED)
    return [
        (round(rng.uniform(0, 1000), 3), round(rng.uniform(0, 1000), 3)) for _ in range(N_CITIES)
    ]


def cities_file(points: list[tuple[float, float]]) -> Path:
    path = HERE / "cities.txt"
    text = "".join(f"{x} {y}\n" for x, y in points)
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_name(f".cities.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)  # parallel scorers never see half a file
    return path


def tour_length(points: list[tuple[float, float]], tour: list[int]) -> float:
    return sum(math.dist(points[tour[i - 1]], points[tour[i]]) for i in range(len(tour)))


def score_channel() -> int | None:
    """Take the harness's score descriptor for this process alone (None: no harness)."""
    fd = os.environ.pop("EA_SCORE_FD", None)
    if fd is None:
        return None
    os.set_inheritable(int(fd), False)
    try:  # PR_SET_DUMPABLE = 4: our /proc/PID/fd and memory closed to same-user processes
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    return int(fd)


def main() -> int:
    channel = score_channel()
    candidate = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["EA_CANDIDATE"])
    points = cities()
    proc = subprocess.run(
        [sys.executable, "solve.py", str(cities_file(points))],
        cwd=candidate,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        print(f"solve.py crashed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
        return 1
    try:
        tour = [int(tok) for tok in proc.stdout.split()]
    except ValueError:
        print("invalid tour: solve.py must print city indices")
        return 1
    if sorted(tour) != list(range(N_CITIES)):
        print(f"invalid tour: not a permutation of 0..{N_CITIES - 1} ({len(tour)} indices)")
        return 1
    length = tour_length(points, tour)
    print(f"valid tour of {N_CITIES} cities; length {length:.3f}")
    if channel is not None:
        os.write(channel, f"{length:.3f}\n".encode())  # one message: the verdict
    print(f"{length:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
