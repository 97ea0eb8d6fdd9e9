"""Source templates the builtin agent writes into the bundled TSP example's ``solve.py``.

A solver is described by four knobs (its "genome"): the construction (``index``,
``nearest``, ``sweep``), the start city, and how many 2-opt and or-opt passes follow.
``render`` writes a complete, standard-library solver for a genome, including only the
functions it uses, so switching strategy is a large edit and nudging a knob is a
one-line edit; ``parse`` reads the knobs back from any ``solve.py`` it wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

CONSTRUCTIONS = ("index", "nearest", "sweep")


@dataclass(frozen=True)
class Genome:
    construction: str = "index"
    start: int = 0
    two_opt: int = 0
    or_opt: int = 0

    def nudged(self, **changes: int | str) -> Genome:
        return replace(self, **changes)  # type: ignore[arg-type]  # fields checked by caller


_HEADER = '''"""TSP solver: prints a tour (city indices) for the cities file named by argv[1]."""

import math
import sys

CONSTRUCTION = "{construction}"
START = {start}
TWO_OPT_PASSES = {two_opt}
OR_OPT_PASSES = {or_opt}


def read_cities(path):
    with open(path) as fh:
        return [tuple(map(float, line.split())) for line in fh if line.strip()]


def distances(pts):
    return [[math.dist(a, b) for b in pts] for a in pts]
'''

_INDEX = """

def construct(pts, d, start):
    return list(range(len(pts)))
"""

_NEAREST = """

def construct(pts, d, start):
    n = len(pts)
    start %= n
    tour = [start]
    left = set(range(n)) - {start}
    while left:
        here = d[tour[-1]]
        nxt = min(left, key=lambda j: here[j])
        left.remove(nxt)
        tour.append(nxt)
    return tour
"""

_SWEEP = """

def construct(pts, d, start):
    n = len(pts)
    cx = sum(p[0] for p in pts) / n
    cy = sum(p[1] for p in pts) / n
    order = sorted(range(n), key=lambda i: math.atan2(pts[i][1] - cy, pts[i][0] - cx))
    k = start % n
    return order[k:] + order[:k]
"""

_TWO_OPT = """

def two_opt_pass(tour, d):
    n = len(tour)
    improved = False
    for i in range(n - 1):
        a, b = tour[i], tour[i + 1]
        dab = d[a][b]
        for j in range(i + 2, n if i else n - 1):
            c, e = tour[j], tour[(j + 1) % n]
            if d[a][c] + d[b][e] < dab + d[c][e] - 1e-9:
                tour[i + 1 : j + 1] = reversed(tour[i + 1 : j + 1])
                improved = True
                a, b = tour[i], tour[i + 1]
                dab = d[a][b]
    return improved
"""

_OR_OPT = """

def or_opt_pass(tour, d):
    n = len(tour)
    near = [sorted(range(n), key=row.__getitem__)[1:9] for row in d]
    improved = False
    for size in (1, 2, 3):
        for i in range(n):
            seg = [tour[(i + k) % n] for k in range(size)]
            prev, nxt = tour[i - 1], tour[(i + size) % n]
            if prev in seg or nxt in seg:
                continue
            gain = d[prev][seg[0]] + d[seg[-1]][nxt] - d[prev][nxt]
            rest = [c for c in tour if c not in seg]
            pos = {c: k for k, c in enumerate(rest)}
            best, where, flip = 1e-9, None, False
            for c in near[seg[0]] + near[seg[-1]]:
                if c not in pos:
                    continue
                for p in (pos[c] - 1, pos[c]):
                    x, y = rest[p], rest[(p + 1) % len(rest)]
                    base = d[x][y]
                    fwd = gain - (d[x][seg[0]] + d[seg[-1]][y] - base)
                    rev = gain - (d[x][seg[-1]] + d[seg[0]][y] - base)
                    if fwd > best:
                        best, where, flip = fwd, p % len(rest), False
                    if rev > best:
                        best, where, flip = rev, p % len(rest), True
            if where is not None:
                piece = seg[::-1] if flip else seg
                tour[:] = rest[: where + 1] + piece + rest[where + 1 :]
                improved = True
    return improved
"""

_MAIN = """

def main():
    pts = read_cities(sys.argv[1])
    d = distances(pts)
    tour = construct(pts, d, START)
{passes}    print(" ".join(map(str, tour)))


if __name__ == "__main__":
    main()
"""


def render(genome: Genome) -> str:
    """The full source of a solver for ``genome``."""
    parts = [_HEADER.format(**genome.__dict__)]
    parts.append({"index": _INDEX, "nearest": _NEAREST, "sweep": _SWEEP}[genome.construction])
    passes = ""
    if genome.two_opt:
        parts.append(_TWO_OPT)
        passes += (
            "    for _ in range(TWO_OPT_PASSES):\n"
            "        if not two_opt_pass(tour, d):\n"
            "            break\n"
        )
    if genome.or_opt:
        parts.append(_OR_OPT)
        passes += (
            "    for _ in range(OR_OPT_PASSES):\n"
            "        if not or_opt_pass(tour, d):\n"
            "            break\n"
        )
    parts.append(_MAIN.format(passes=passes))
    return "".join(parts)


_KNOBS = {
    "construction": re.compile(r'^CONSTRUCTION = "(\w+)"', re.M),
    "start": re.compile(r"^START = (\d+)", re.M),
    "two_opt": re.compile(r"^TWO_OPT_PASSES = (\d+)", re.M),
    "or_opt": re.compile(r"^OR_OPT_PASSES = (\d+)", re.M),
}


def parse(source: str) -> Genome | None:
    """The genome of a solver written by ``render``; None for anything else."""
    found: dict[str, str] = {}
    for key, pattern in _KNOBS.items():
        match = pattern.search(source)
        if match is None:
            return None
        found[key] = match.group(1)
    if found["construction"] not in CONSTRUCTIONS:
        return None
    return Genome(
        construction=found["construction"],
        start=int(found["start"]),
        two_opt=int(found["two_opt"]),
        or_opt=int(found["or_opt"]),
    )
