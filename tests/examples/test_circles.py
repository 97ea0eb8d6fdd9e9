"""The circle-packing example's verifier (examples/circles/score.py): no hack scores.

Each hack class that evaluators in the field accepted (NaN centres, overlapping circles,
circles outside the square, the wrong count) is refused with its reason, through the real
script in a real process; a known valid packing is accepted with its exact sum; the
holdout (``--strict``) refuses what only the tolerance let through.  Generated packings
check the verdict against an independent float check away from the tolerance.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.config import SearchConfig
from evolving_agent.search.runner import run_search
from tests.helpers.search import records

CIRCLES = Path(__file__).resolve().parents[2] / "examples" / "circles"
SCORE = CIRCLES / "score.py"

# The seed: a 5 x 5 grid of r = 0.1 and one circle in a gap (2.5 + 0.041420).
GRID = [(0.1 + 0.2 * i, 0.1 + 0.2 * j, 0.1) for i in range(5) for j in range(5)]
SEED = [*GRID, (0.2, 0.2, 0.041420)]


def _load_verifier():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("circles_score", SCORE)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VERIFIER = _load_verifier()


def accepted(text: str) -> bool:
    """The verifier's own parse and exact check, in this process (no pack.py run)."""
    try:
        VERIFIER.check(VERIFIER.parse(text), VERIFIER.TOL)
    except VERIFIER.Refused:
        return False
    return True


def lines(circles: list[tuple[float, float, float]]) -> str:
    return "".join(f"{x!r} {y!r} {r!r}\n" for x, y, r in circles)


def candidate(tmp: Path, printed: str, name: str = "cand") -> Path:
    """A candidate whose pack.py prints ``printed`` as it is."""
    cand = tmp / name
    cand.mkdir()
    (cand / "pack.py").write_text(f"import sys\nsys.stdout.write({printed!r})\n")
    return cand


def verify(cand: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCORE), *flags, str(cand)], capture_output=True, text=True, timeout=60
    )


def test_the_bundled_seed_is_a_valid_packing_with_its_exact_sum() -> None:
    for flags in ((), ("--strict",)):
        proc = verify(CIRCLES / "candidate", *flags)
        assert proc.returncode == 0, proc.stdout
        assert proc.stdout.splitlines()[-1] == "2.541420"


def test_a_known_valid_packing_is_accepted(tmp_path: Path) -> None:
    proc = verify(candidate(tmp_path, lines(SEED)))
    assert proc.returncode == 0, proc.stdout
    assert float(proc.stdout.splitlines()[-1]) == pytest.approx(2.541420, abs=1e-6)


def _moved(i: int, x: float, y: float, r: float) -> list[tuple[float, float, float]]:
    out = list(SEED)
    out[i] = (x, y, r)
    return out


HACKS = {
    "nan-centre": (lines(SEED).replace("0.2 0.2 0.04142", "nan 0.2 0.04142"), "NaN or infinity"),
    "nan-radius": (lines(SEED).replace("0.2 0.2 0.04142", "0.2 0.2 NaN"), "NaN or infinity"),
    "infinite-radius": (lines(SEED).replace("0.2 0.2 0.04142", "0.2 0.2 inf"), "NaN or infinity"),
    "overlap": (lines(_moved(25, 0.2, 0.2, 0.05)), "overlap"),
    "overlap-by-a-hair": (lines(_moved(25, 0.2, 0.2, 0.0414214 + 1e-7)), "overlap"),
    "duplicate-circle": (lines([*GRID, GRID[0]]), "overlap"),
    "outside-the-square": (lines(_moved(0, 0.05, 0.1, 0.1)), "outside the square"),
    "outside-by-a-hair": (lines(_moved(0, 0.1 - 1e-7, 0.1, 0.1)), "outside the square"),
    "negative-radius": (lines(_moved(25, 0.2, 0.2, -0.5)), "not positive"),
    "zero-radius": (lines(_moved(25, 0.2, 0.2, 0.0)), "not positive"),
    "too-few": (lines(SEED[:25]), "wrong count: 25"),
    "too-many": (lines([*SEED, (0.6, 0.6, 0.001)]), "wrong count: 27"),
    "empty": ("", "wrong count: 0"),
    "extra-field": (lines(SEED).replace("0.2 0.2 0.04142", "0.2 0.2 0.04142 1"), "4 fields"),
    "hex-float": (lines(SEED).replace("0.2 0.2 0.04142", "0x1p-3 0.2 0.04142"), "not a number"),
    "underscore-digits": (lines(SEED).replace("0.2 0.2 0.04142", "0.2 0.2 0.041_42"), "not"),
    "a-thousand-digits": (lines(SEED).replace("0.04142", "0.04142" + "0" * 1000), "not a number"),
}


@pytest.mark.parametrize("hack", HACKS, ids=list(HACKS))
def test_every_hack_class_is_refused_with_its_reason(tmp_path: Path, hack: str) -> None:
    printed, reason = HACKS[hack]
    proc = verify(candidate(tmp_path, printed))
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout.startswith("invalid packing:") and reason in proc.stdout, proc.stdout
    assert not [line for line in proc.stdout.splitlines() if _is_number(line)]  # no score line


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_a_crash_and_a_hang_are_refused(tmp_path: Path) -> None:
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "pack.py").write_text("raise SystemExit('no packing today')\n")
    proc = verify(crash)
    assert proc.returncode == 1 and "pack.py crashed (exit 1): no packing today" in proc.stdout


def test_the_holdout_refuses_what_only_the_tolerance_let_through(tmp_path: Path) -> None:
    # Every radius inflated by 4e-10 (a pair by 8e-10): inside the stated tolerance, not a
    # packing.
    inflated = [(x, y, r + 4e-10) for x, y, r in SEED[:25]] + [SEED[25]]
    cand = candidate(tmp_path, lines(inflated))
    assert verify(cand).returncode == 0
    strict = verify(cand, "--strict")
    assert strict.returncode == 1 and "outside the square" in strict.stdout


def test_the_holdout_refuses_a_packing_that_changes_between_runs(tmp_path: Path) -> None:
    cand = tmp_path / "flaky"
    cand.mkdir()
    (cand / "pack.py").write_text(
        "import pathlib\n"
        f"seen = pathlib.Path({str(tmp_path / 'seen')!r})\n"
        "r = 0.04 if seen.exists() else 0.0414\n"
        "seen.touch()\n"
        f"print({lines(GRID)!r}, end='')\n"
        "print(0.2, 0.2, r)\n"
    )
    assert "another packing on a second run" in verify(cand, "--strict").stdout


def test_a_claim_above_the_best_known_is_flagged_for_a_second_look(tmp_path: Path) -> None:
    # Not a packing anyone has: the verifier must refuse it, and would flag it if valid.
    proc = verify(candidate(tmp_path, lines([(0.5, 0.5, 0.11)] * 26)))
    assert proc.returncode == 1 and "overlap" in proc.stdout
    assert VERIFIER.BEST_KNOWN == 2.635983


def test_the_verdict_goes_to_the_score_channel_only(tmp_path: Path) -> None:
    read, write = os.pipe()
    proc = subprocess.run(
        [sys.executable, str(SCORE), str(CIRCLES / "candidate")],
        capture_output=True,
        text=True,
        env={**os.environ, "EA_SCORE_FD": str(write)},
        pass_fds=(write,),
        timeout=60,
    )
    os.close(write)
    assert proc.returncode == 0
    assert os.read(read, 100) == b"2.541420\n"
    os.close(read)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.-+eEnaifx_ \n", max_size=400))
def test_generated_text_is_never_a_packing_by_accident_of_parsing(text: str) -> None:
    # Whatever the program prints, a verdict is a packing or a one-line refusal.
    try:
        total = VERIFIER.check(VERIFIER.parse(text), VERIFIER.TOL)
    except VERIFIER.Refused:
        return
    assert len([ln for ln in text.splitlines() if ln.strip()]) == 26 and total > 0


# -- generated packings -------------------------------------------------------------------

_coord = st.floats(min_value=-0.05, max_value=1.05, allow_nan=False)
_radius = st.floats(min_value=0.001, max_value=0.12, allow_nan=False)
MARGIN = 1e-6  # far from the 1e-9 tolerance: the independent float check is exact enough


def _violation(circles: list[tuple[float, float, float]]) -> float:
    """The worst violation of any check (negative: every check holds with that slack)."""
    worst = -math.inf
    for x, y, r in circles:
        worst = max(worst, r - x, x + r - 1, r - y, y + r - 1)
    for i, (xi, yi, ri) in enumerate(circles):
        for xj, yj, rj in circles[i + 1 :]:
            worst = max(worst, ri + rj - math.dist((xi, yi), (xj, yj)))
    return worst


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_coord, _coord, _radius), min_size=26, max_size=26))
def test_generated_packings_are_judged_as_an_independent_check_judges_them(
    circles: list[tuple[float, float, float]],
) -> None:
    worst = _violation(circles)
    if abs(worst) < MARGIN:
        return  # on the edge: the tolerance, not the geometry, decides
    assert accepted(lines(circles)) == (worst < 0), worst


def _spread_out(n: int) -> list[tuple[float, float, float]]:
    # Valid by construction: a 6 x 5 grid of small circles, 26 of its cells used.
    cells = [(0.1 + 0.16 * i, 0.1 + 0.2 * j) for j in range(5) for i in range(6)][:n]
    return [(x, y, 0.05) for x, y in cells]


@settings(max_examples=300, deadline=None)
@given(
    which=st.integers(0, 25),
    dx=st.floats(min_value=-0.2, max_value=0.2, allow_nan=False),
    dy=st.floats(min_value=-0.2, max_value=0.2, allow_nan=False),
    grow=st.floats(min_value=0.0, max_value=0.1, allow_nan=False),
)
def test_moving_or_growing_one_circle_of_a_valid_packing_is_judged_exactly(
    which: int, dx: float, dy: float, grow: float
) -> None:
    # Near-valid packings are where a lenient evaluator slips: one circle moved and grown.
    circles = _spread_out(26)
    x, y, r = circles[which]
    circles[which] = (x + dx, y + dy, r + grow)
    worst = _violation(circles)
    if abs(worst) < MARGIN:
        return
    assert accepted(lines(circles)) == (worst < 0), worst


# -- through the search loop ----------------------------------------------------------------

HACK_AGENT = """
import pathlib, os
hacks = ["nan 0.5 0.1\\n" * 26, "0.5 0.5 0.5\\n" * 26, "0.5 0.5 0.1\\n" * 25]
turn = int(os.environ["EA_TURN"])
body = hacks[(turn - 1) % len(hacks)]
pathlib.Path("pack.py").write_text("print(" + repr(body) + ", end='')\\n")
"""


@pytest.mark.slow
def test_a_hacking_agent_never_beats_the_seed_in_a_search_run(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(HACK_AGENT)
    cfg = SearchConfig(
        candidate=CIRCLES / "candidate",
        task=CIRCLES / "task.md",
        score_cmd=f"{sys.executable} {SCORE}",
        agent="command",
        agent_cmd=f"{sys.executable} {agent}",
        policy="single",
        turns=3,
        out=tmp_path / "run",
        workdir=tmp_path,
        score_timeout=60,
        turn_timeout=60,
        retry_backoff=0.01,
    )
    summary = run_search(cfg)
    rows = records(tmp_path / "run")
    assert len(rows) == 3
    assert all(r["score"] is None and not r["improved"] for r in rows), rows
    assert all("invalid packing" in (r["feedback"] or "") for r in rows)
    assert summary.best_score == pytest.approx(2.541420)
