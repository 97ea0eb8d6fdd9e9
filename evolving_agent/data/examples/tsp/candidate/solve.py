"""TSP solver: prints a tour (city indices) for the cities file named by argv[1]."""

import math
import sys

CONSTRUCTION = "index"
START = 0
TWO_OPT_PASSES = 0
OR_OPT_PASSES = 0


def read_cities(path):
    with open(path) as fh:
        return [tuple(map(float, line.split())) for line in fh if line.strip()]


def distances(pts):
    return [[math.dist(a, b) for b in pts] for a in pts]


def construct(pts, d, start):
    return list(range(len(pts)))


def main():
    pts = read_cities(sys.argv[1])
    d = distances(pts)
    tour = construct(pts, d, START)
    print(" ".join(map(str, tour)))


if __name__ == "__main__":
    main()
