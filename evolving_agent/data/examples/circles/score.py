"""Verify and score a circle packing: 26 circles in the unit square, sum of radii (higher is better).

Usage: python examples/circles/score.py [--strict] [CANDIDATE_DIR]   (default: $EA_CANDIDATE)

The verifier lives outside the candidate.  It runs ``pack.py`` from the candidate
directory and accepts the packing only when every check holds, computed **exactly** on
the printed numbers (``fractions.Fraction``, no floating point), with the tolerance
stated in the task (:data:`TOL`):

* exactly :data:`N` lines, each three plain decimal numbers (no NaN, no infinity, no
  hex, no padding tricks; at most :data:`MAX_DIGITS` characters a number);
* every radius > 0;
* every circle inside the square: ``r - TOL <= x <= 1 - r + TOL``, and the same for y;
* no two circles overlap: ``(xi - xj)² + (yi - yj)² >= (ri + rj - TOL)²``.

A refused packing exits 1 and says which check failed, on which line.  A sum above the
best known (:data:`BEST_KNOWN`) is still scored, with a note asking for a second look.

``--strict`` is the holdout (``search run --holdout``): tolerance 0 and the same
packing printed on a second run; the agents never see it.  Under the search harness the
verdict goes to ``$EA_SCORE_FD`` (the score channel; see docs/search.md), which the
packing program, a child process, does not inherit.
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

N = 26
TOL = Fraction(1, 10**9)
BEST_KNOWN = 2.635983
MAX_DIGITS = 40
NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d{1,3})?")


class Refused(Exception):
    """The packing is not one: the message says which check failed."""


def parse(text: str) -> list[tuple[Fraction, Fraction, Fraction]]:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) != N:
        raise Refused(f"wrong count: {len(lines)} circles, the task asks for exactly {N}")
    circles = []
    for no, line in enumerate(lines, 1):
        fields = line.split()
        if len(fields) != 3:
            raise Refused(f"line {no}: {len(fields)} fields, want 'x y r'")
        for field in fields:
            if len(field) > MAX_DIGITS or not NUMBER.fullmatch(field):
                what = "NaN or infinity" if re.search(r"(?i)nan|inf", field) else "not a number"
                raise Refused(f"line {no}: {field[:20]!r} is {what}")
        x, y, r = (Fraction(f) for f in fields)
        circles.append((x, y, r))
    return circles


def check(circles: list[tuple[Fraction, Fraction, Fraction]], tol: Fraction) -> Fraction:
    """The exact sum of radii of a valid packing; ``Refused`` names the first failure."""
    for i, (x, y, r) in enumerate(circles, 1):
        if r <= 0:
            raise Refused(f"circle {i}: radius {float(r)} is not positive")
        for name, v in (("x", x), ("y", y)):
            if v - r < -tol or v + r > 1 + tol:
                raise Refused(
                    f"circle {i}: outside the square ({name} = {float(v)}, r = {float(r)})"
                )
    for i in range(N):
        xi, yi, ri = circles[i]
        for j in range(i + 1, N):
            xj, yj, rj = circles[j]
            reach = ri + rj - tol
            if reach > 0 and (xi - xj) ** 2 + (yi - yj) ** 2 < reach * reach:
                raise Refused(f"circles {i + 1} and {j + 1} overlap")
    return sum((r for _, _, r in circles), Fraction(0))


def run_pack(candidate: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "pack.py"],
        cwd=candidate,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise Refused(f"pack.py crashed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
    return proc.stdout


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


def main(argv: list[str]) -> int:
    channel = score_channel()
    strict = "--strict" in argv
    args = [a for a in argv if a != "--strict"]
    candidate = Path(args[0] if args else os.environ["EA_CANDIDATE"])
    tol = Fraction(0) if strict else TOL
    try:
        text = run_pack(candidate)
        if strict and run_pack(candidate) != text:
            raise Refused("pack.py printed another packing on a second run")
        total = float(check(parse(text), tol))
    except Refused as e:
        print(f"invalid packing: {e}")
        return 1
    except subprocess.TimeoutExpired:
        print("invalid packing: pack.py ran over 30 s")
        return 1
    print(f"valid packing of {N} circles ({'tolerance 0' if strict else 'tolerance 1e-9'})")
    if total > BEST_KNOWN + 1e-6:
        print(
            f"note: {total:.6f} is above the best known {BEST_KNOWN}: look again before you believe it"
        )
    if channel is not None:
        os.write(channel, f"{total:.6f}\n".encode())  # one message: the verdict
    print(f"{total:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
