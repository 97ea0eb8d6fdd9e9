"""Source templates the tsp-example agent writes into the bundled TSP example's ``solve.py``.

A solver is described by its "genome": a structure (the construction heuristic, which
improvement operators are present, whether it restarts from several cities, whether it
kicks a local optimum and re-improves) and knobs (start city, number of starts,
neighbour-list size, pass counts, kicks and the kick seed).  ``render`` writes a
complete, standard-library solver for a genome, including only the functions it uses,
so switching structure is an edit of tens of lines and nudging a knob is a one-line
edit; ``parse`` reads the genome back from any ``solve.py`` it wrote (and from the
bundled seed, whose newer knobs are missing and default to "absent").

Nothing here knows the cities: the scorer runs the written solver and measures the
tour it prints.  ``cost`` is the agent's rough sense of how slow a solver is, so that it
keeps to the task's "well under a second".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

CONSTRUCTIONS = ("index", "nearest", "greedy", "insertion", "sweep", "spacefill")


@dataclass(frozen=True)
class Genome:
    construction: str = "index"
    start: int = 0
    two_opt: int = 0  # passes; 0 = no 2-opt
    or_opt: int = 0  # passes; 0 = no or-opt
    starts: int = 1  # multi-start: constructions from this many cities, keep the best
    neighbours: int = 8  # candidate-list size of the improvement operators
    kicks: int = 0  # double-bridge kicks, each followed by 2-opt; 0 = none
    kick_seed: int = 0

    def nudged(self, **changes: int | str) -> Genome:
        return replace(self, **changes)  # type: ignore[arg-type]  # fields checked by caller

    @property
    def local_search(self) -> bool:
        return bool(self.two_opt or self.or_opt or self.kicks)


def cost(genome: Genome) -> float:
    """A rough estimate of the solver's running time in seconds (the agent's own sense of
    "fast enough", not a measurement)."""
    construct = {"greedy": 0.02, "insertion": 0.012, "nearest": 0.006}.get(
        genome.construction, 0.002
    )
    improve = 0.003 * min(genome.two_opt, 4) + 0.012 * min(genome.or_opt, 3) * genome.neighbours / 8
    kick = 0.0005 + 0.00004 * genome.neighbours
    return 0.015 + genome.starts * (construct + improve) + genome.kicks * kick


_HEADER = '''"""TSP solver: prints a tour (city indices) for the cities file named by argv[1]."""

import math
import random
import sys

CONSTRUCTION = "{construction}"
START = {start}
STARTS = {starts}
NEIGHBOURS = {neighbours}
TWO_OPT_PASSES = {two_opt}
OR_OPT_PASSES = {or_opt}
KICKS = {kicks}
KICK_SEED = {kick_seed}


def read_cities(path):
    with open(path) as fh:
        return [tuple(map(float, line.split())) for line in fh if line.strip()]


def distances(pts):
    return [[math.dist(a, b) for b in pts] for a in pts]


def length(tour, d):
    return sum(d[tour[i - 1]][tour[i]] for i in range(len(tour)))
'''

_NEIGHBOURS = """

def neighbour_lists(d, k):
    return [sorted(range(len(row)), key=row.__getitem__)[1 : k + 1] for row in d]
"""

_CONSTRUCT = {
    "index": """

def construct(pts, d, start):
    return list(range(len(pts)))
""",
    "nearest": """

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
""",
    "greedy": """

def construct(pts, d, start):
    # Greedy edge matching: shortest edges first, no city of degree 3, no early cycle.
    n = len(pts)
    edges = sorted((d[i][j], i, j) for i in range(n) for j in range(i + 1, n))
    parent = list(range(n))

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    links = [[] for _ in range(n)]
    added = 0
    for _, i, j in edges:
        if len(links[i]) < 2 and len(links[j]) < 2 and root(i) != root(j):
            parent[root(i)] = root(j)
            links[i].append(j)
            links[j].append(i)
            added += 1
            if added == n - 1:
                break
    ends = [c for c in range(n) if len(links[c]) < 2]
    tour, prev = [ends[0]], None
    while len(tour) < n:
        here = tour[-1]
        nxt = next(c for c in links[here] if c != prev)
        prev = here
        tour.append(nxt)
    k = tour.index(start % n)
    return tour[k:] + tour[:k]
""",
    "insertion": """

def construct(pts, d, start):
    # Farthest insertion: add the city farthest from the tour where it costs least.
    n = len(pts)
    start %= n
    tour = [start]
    gap = list(d[start])
    left = set(range(n)) - {start}
    while left:
        city = max(left, key=gap.__getitem__)
        left.remove(city)
        row = d[city]
        best, where = None, 0
        for i in range(len(tour)):
            a, b = tour[i - 1], tour[i]
            extra = d[a][city] + row[b] - d[a][b]
            if best is None or extra < best:
                best, where = extra, i
        tour.insert(where, city)
        for c in left:
            if row[c] < gap[c]:
                gap[c] = row[c]
    return tour
""",
    "sweep": """

def construct(pts, d, start):
    n = len(pts)
    cx = sum(p[0] for p in pts) / n
    cy = sum(p[1] for p in pts) / n
    order = sorted(range(n), key=lambda i: math.atan2(pts[i][1] - cy, pts[i][0] - cx))
    k = start % n
    return order[k:] + order[:k]
""",
    "spacefill": """

def hilbert(x, y, order=64):
    # Position of cell (x, y) along a Hilbert curve over an order x order grid.
    pos, s = 0, order // 2
    while s:
        rx, ry = int(x & s > 0), int(y & s > 0)
        pos += s * s * ((3 * rx) ^ ry)
        if not ry:
            if rx:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        s //= 2
    return pos


def construct(pts, d, start):
    n = len(pts)
    lo_x, lo_y = min(p[0] for p in pts), min(p[1] for p in pts)
    span = max(max(p[0] for p in pts) - lo_x, max(p[1] for p in pts) - lo_y) or 1.0
    cell = [(int((p[0] - lo_x) / span * 63), int((p[1] - lo_y) / span * 63)) for p in pts]
    order = sorted(range(n), key=lambda i: hilbert(*cell[i]))
    k = start % n
    return order[k:] + order[:k]
""",
}

_TWO_OPT = """

def reverse(tour, pos, i, j):
    # Reverse tour[i..j] (cyclic); reversing the shorter side gives the same cycle.
    n = len(tour)
    if i > j:
        i, j = j + 1, i - 1
    if i > j:
        return
    tour[i : j + 1] = tour[i : j + 1][::-1]
    for k in range(i, j + 1):
        pos[tour[k]] = k


def two_opt_pass(tour, d, near):
    n = len(tour)
    pos = [0] * n
    for k, c in enumerate(tour):
        pos[c] = k
    improved = False
    for a in range(n):
        i = pos[a]
        b = tour[(i + 1) % n]
        dab = d[a][b]
        for c in near[a]:
            g1 = dab - d[a][c]
            if g1 <= 0:
                break
            j = pos[c]
            e = tour[(j + 1) % n]
            if c == b or e == a:
                continue
            if g1 + d[c][e] - d[b][e] > 1e-9:
                reverse(tour, pos, (i + 1) % n, j)
                improved = True
                break
    return improved
"""

_OR_OPT = """

def or_opt_pass(tour, d, near):
    # Move a segment of 1-3 cities (either way round) next to one of its neighbours.
    n = len(tour)
    improved = False
    for size in (1, 2, 3):
        pos = {c: k for k, c in enumerate(tour)}
        i = 1
        while i + size <= n:
            seg = tour[i : i + size]
            prev, nxt = tour[i - 1], tour[(i + size) % n]
            gain = d[prev][seg[0]] + d[seg[-1]][nxt] - d[prev][nxt]
            inside = set(seg)
            best, move = 1e-9, None
            for c in near[seg[0]] + near[seg[-1]]:
                if c in inside:
                    continue
                k = pos[c]
                for x, y in ((c, tour[(k + 1) % n]), (tour[k - 1], c)):
                    if x in inside or y in inside:
                        continue
                    base = d[x][y]
                    fwd = gain - (d[x][seg[0]] + d[seg[-1]][y] - base)
                    rev = gain - (d[x][seg[-1]] + d[seg[0]][y] - base)
                    if fwd > best:
                        best, move = fwd, (x, False)
                    if rev > best:
                        best, move = rev, (x, True)
            if move is not None:
                rest = tour[:i] + tour[i + size :]
                at = rest.index(move[0]) + 1
                tour[:] = rest[:at] + (seg[::-1] if move[1] else seg) + rest[at:]
                pos = {c: k for k, c in enumerate(tour)}
                improved = True
            i += 1
    return improved
"""

_KICK = """

def double_bridge(tour, rng):
    n = len(tour)
    a, b, c = sorted(rng.sample(range(1, n), 3))
    return tour[:a] + tour[c:] + tour[b:c] + tour[a:b]
"""


def _improve(genome: Genome) -> str:
    body = ""
    if genome.two_opt:
        body += (
            "    for _ in range(TWO_OPT_PASSES):\n"
            "        if not two_opt_pass(tour, d, near):\n"
            "            break\n"
        )
    if genome.or_opt:
        body += (
            "    for _ in range(OR_OPT_PASSES):\n"
            "        if not or_opt_pass(tour, d, near):\n"
            "            break\n"
        )
    if not body:
        return ""
    return "\n\ndef improve(tour, d, near):\n" + body + "    return tour\n"


def _main(genome: Genome) -> str:
    lines = [
        "",
        "",
        "def main():",
        "    pts = read_cities(sys.argv[1])",
        "    d = distances(pts)",
    ]
    improve = bool(genome.two_opt or genome.or_opt)
    if genome.local_search:
        lines.append("    near = neighbour_lists(d, NEIGHBOURS)")
    if genome.starts > 1:
        lines += [
            "    tour = None",
            "    for s in range(STARTS):",
            "        trial = construct(pts, d, START + s * len(pts) // STARTS)",
        ]
        if improve:
            lines.append("        improve(trial, d, near)")
        lines += [
            "        if tour is None or length(trial, d) < length(tour, d):",
            "            tour = trial",
        ]
    else:
        lines.append("    tour = construct(pts, d, START)")
        if improve:
            lines.append("    improve(tour, d, near)")
    if genome.kicks:
        lines += [
            "    rng = random.Random(KICK_SEED)",
            "    best = length(tour, d)",
            "    for _ in range(KICKS):",
            "        trial = double_bridge(tour, rng)",
            "        while two_opt_pass(trial, d, near):",
            "            pass",
            "        if length(trial, d) < best:",
            "            tour, best = trial, length(trial, d)",
        ]
    lines += [
        '    print(" ".join(map(str, tour)))',
        "",
        "",
        'if __name__ == "__main__":',
        "    main()",
        "",
    ]
    return "\n".join(lines)


def render(genome: Genome) -> str:
    """The full source of a solver for ``genome``."""
    parts = [_HEADER.format(**genome.__dict__)]
    if genome.local_search:
        parts.append(_NEIGHBOURS)
    parts.append(_CONSTRUCT[genome.construction])
    if genome.two_opt or genome.kicks:
        parts.append(_TWO_OPT)
    if genome.or_opt:
        parts.append(_OR_OPT)
    if genome.kicks:
        parts.append(_KICK)
    parts.append(_improve(genome))
    parts.append(_main(genome))
    return "".join(parts)


_KNOBS = {
    "construction": (re.compile(r'^CONSTRUCTION = "(\w+)"', re.M), None),
    "start": (re.compile(r"^START = (\d+)", re.M), None),
    "two_opt": (re.compile(r"^TWO_OPT_PASSES = (\d+)", re.M), None),
    "or_opt": (re.compile(r"^OR_OPT_PASSES = (\d+)", re.M), None),
    "starts": (re.compile(r"^STARTS = (\d+)", re.M), "1"),
    "neighbours": (re.compile(r"^NEIGHBOURS = (\d+)", re.M), "8"),
    "kicks": (re.compile(r"^KICKS = (\d+)", re.M), "0"),
    "kick_seed": (re.compile(r"^KICK_SEED = (\d+)", re.M), "0"),
}


def parse(source: str) -> Genome | None:
    """The genome of a solver written by ``render`` (or the bundled seed); None otherwise."""
    found: dict[str, str] = {}
    for key, (pattern, default) in _KNOBS.items():
        match = pattern.search(source)
        if match is None:
            if default is None:
                return None
            found[key] = default
        else:
            found[key] = match.group(1)
    if found["construction"] not in CONSTRUCTIONS:
        return None
    numbers = {k: int(v) for k, v in found.items() if k != "construction"}
    return Genome(construction=found["construction"], **numbers)
