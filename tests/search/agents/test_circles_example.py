"""The circles test agent (search/agents/circles_example.py): its packings always pass the
bundled verifier and its strict holdout, it never hands back a worse packing than the
one it started from, and a turn is a real edit of ``pack.py`` in a real workspace.

The verifier and ``pack.py`` run as real subprocesses (examples/circles/score.py).
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.agents import circles_example as ce
from evolving_agent.search.agents.base import TurnRequest
from tests.helpers.search import REPO
from tests.helpers.turn_agents import git_workspace

CIRCLES = REPO / "examples" / "circles"
SEED_SOURCE = (CIRCLES / "candidate" / "pack.py").read_text()


@pytest.fixture(scope="module")
def seed() -> list[ce.Circle]:
    packing = ce.read_packing(SEED_SOURCE)
    assert packing is not None and len(packing) == 26
    return packing


def _verify(tmp: Path, circles: list[ce.Circle], *flags: str) -> subprocess.CompletedProcess[str]:
    cand = tmp / "cand"
    cand.mkdir(exist_ok=True)
    (cand / "pack.py").write_text(ce.render(circles))
    return subprocess.run(
        [sys.executable, str(CIRCLES / "score.py"), *flags, str(cand)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_circles_agents_moves_pass_the_verifier_and_the_strict_holdout(
    tmp_path: Path, seed: list[ce.Circle]
) -> None:
    rng = random.Random(3)
    moves = [ce.bold_move(seed, rng), ce.grow(seed, rng), ce.small_move(seed, 0.05, rng)]
    moves.append(ce.climb(moves[0], 0.02, rng))
    for circles in moves:
        assert ce.valid(circles)
        for flags in ((), ("--strict",)):
            done = _verify(tmp_path, circles, *flags)
            assert done.returncode == 0, (flags, done.stdout, done.stderr)
            printed = float(done.stdout.strip().splitlines()[-1])
            assert abs(printed - ce.total(circles)) < 1e-6  # it prints 6 decimals


# -- reading and writing pack.py -----------------------------------------------------------


def test_a_rendered_packing_reads_back_as_it_was(seed: list[ce.Circle]) -> None:
    again = ce.read_packing(ce.render(seed))
    assert again is not None and len(again) == 26
    assert all(
        math.isclose(a, b, abs_tol=1e-12) for c, d in zip(seed, again, strict=True)
        for a, b in zip(c, d, strict=True)
    )  # fmt: skip


@pytest.mark.parametrize(
    "source",
    [
        "print('0.5 0.5 nan?')",  # a number that is not one
        "pass",  # prints nothing
        "print('0.5 0.5')",  # no line of three fields
        "import sys; sys.exit(3)",  # fails before printing
    ],
)
def test_a_packer_that_prints_no_packing_reads_as_none(source: str) -> None:
    assert ce.read_packing(source) is None


def test_lines_that_are_not_circles_are_skipped() -> None:
    source = "print('a packing:'); print('0.25 0.25 0.2'); print(''); print('0.75 0.75 0.2')"
    assert ce.read_packing(source) == [(0.25, 0.25, 0.2), (0.75, 0.75, 0.2)]


# -- the geometry ----------------------------------------------------------------------------

POINTS = st.tuples(st.floats(0, 1), st.floats(0, 1))


@settings(max_examples=60, deadline=None)
@given(point=POINTS)
def test_the_room_at_a_point_keeps_the_margin_from_every_circle_and_wall(
    point: tuple[float, float], seed: list[ce.Circle]
) -> None:
    x, y = point
    r = ce.room(x, y, seed)
    if r <= 0:
        return
    assert abs(r * 1e12 - round(r * 1e12)) < 1e-3  # at 12 decimals, as pack.py writes it
    assert min(x, 1 - x, y, 1 - y) - r >= ce.MARGIN - 1e-12
    for ox, oy, orad in seed:
        assert math.hypot(x - ox, y - oy) - orad - r >= ce.MARGIN - 1e-12


@settings(max_examples=8, deadline=None)
@given(n=st.integers(0, 2**32), step=st.floats(0.001, 0.1))
def test_climbing_never_lowers_the_sum_and_the_same_seed_climbs_the_same_way(
    n: int, step: float, seed: list[ce.Circle]
) -> None:
    climbed = ce.climb(seed, step, random.Random(n))
    assert ce.valid(climbed) and len(climbed) == 26
    assert ce.total(climbed) >= ce.total(seed)
    assert ce.climb(seed, step, random.Random(n)) == climbed


# -- a turn ------------------------------------------------------------------------------------


def _request(ws: Path, state: Path, turn: int, **kw: object) -> TurnRequest:
    return TurnRequest(
        workspace=ws, prompt="pack better", session_id="s-1", new_session=turn == 1,
        round=1, agent=1, turn=turn, timeout=30.0, state_dir=state, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def test_turns_improve_or_keep_the_packing_remember_the_session_and_write_notes(
    tmp_path: Path, seed: list[ce.Circle]
) -> None:
    ws, state, notes = tmp_path / "ws", tmp_path / "state", tmp_path / "notes.md"
    git_workspace(ws)
    loose = [(x, y, r / 2) for x, y, r in seed]  # room to grow: a turn must find it
    (ws / ce.PACKER).write_text(ce.render(loose))
    agent = ce.CirclesExampleAgent()
    sums = [ce.total(loose)]
    messages = []
    for turn in (1, 2, 3):
        result = agent.run_turn(request=_request(ws, state, turn, env={"EA_NOTES": str(notes)}))
        assert result.error is None and result.session_id == "s-1"
        assert result.cost_usd == 0.0
        messages.append(result.message)
        packing = ce.read_packing((ws / ce.PACKER).read_text())
        assert packing is not None and ce.valid(packing)
        sums.append(ce.total(packing))
    assert sums == sorted(sums)  # never a worse packing than the one it started from
    assert sums[-1] > sums[0]
    assert messages[:2] == ["fresh look: moved the smallest circles, then nudged"] * 2
    assert json.loads((state / "circles" / "s-1.json").read_text())["turns"] == 3
    lines = notes.read_text().splitlines()
    assert len(lines) == 3 and lines[0].startswith("- round 1 agent 1: fresh look")
    assert lines[-1].endswith(f"(sum {sums[-1]:.6f})")
    final = ce.read_packing((ws / ce.PACKER).read_text())
    assert final is not None and _verify(tmp_path, final, "--strict").returncode == 0


def test_a_workspace_without_pack_py_is_refused_and_left_alone(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    git_workspace(ws)
    result = ce.CirclesExampleAgent().run_turn(request=_request(ws, tmp_path / "state", 1))
    assert result.error == "the circles-example agent only knows its bundled example (no pack.py)"
    assert sorted(p.name for p in ws.iterdir()) == [".git", "value.txt"]
    assert not (tmp_path / "state").exists()


def test_a_packing_it_cannot_read_is_kept_as_it_is(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    git_workspace(ws)
    (ws / ce.PACKER).write_text("print('not a packing')\n")
    result = ce.CirclesExampleAgent().run_turn(request=_request(ws, tmp_path / "state", 1))
    assert result.error is None and result.message == "kept the packing"
    assert (ws / ce.PACKER).read_text() == "print('not a packing')\n"
