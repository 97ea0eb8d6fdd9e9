"""The ``circles-example`` agent: an offline, seeded editor for the circle-packing example.

The test agent of ``examples/circles`` (no model), built like ``tsp-example``:

* it starts each turn from the best candidate it may see (its own history or a peer's
  best), running that candidate's ``pack.py`` to read its packing;
* a **fresh session** is bold: it takes out the smallest few circles and puts each
  back where the most room is (the best of many random points), then grows every
  circle as far as its neighbours and the walls allow;
* a **continued session anchors**: it nudges circles (:data:`CLIMB` tries, each kept
  only if its own sum went up) by a step that shrinks as the session ages; the older
  the session, the likelier a turn with no edit at all.  A turn whose packing is not
  better than the one it started from leaves the candidate as it was.

It writes ``pack.py`` as a literal list of circles, each radius rounded *down* at 12
decimals with a margin of 1e-10 from its neighbours and the walls, so its packings
pass the verifier's exact check and the strict holdout (tolerance 0) alike: the agent
never games the verifier.  Sessions are a JSON file per session id under the run's
``agent-state/circles/``; randomness is seeded from the run seed, round, agent and turn.
With a notes file (``--policy keep-notes``, ``$EA_NOTES``) it appends one line a turn.
"""

from __future__ import annotations

import math
import random
import sys
import tempfile
from pathlib import Path

from evolving_agent.process import run_process
from evolving_agent.search.agents.base import TurnRequest, TurnResult
from evolving_agent.search.agents.example_base import ExampleAgent

PACKER = "pack.py"
MARGIN = 1e-10
PLACES = 300  # random points tried for a circle put back
CLIMB = 40  # nudges a turn
FRESH_TURNS = 2
EMPTY_STEP = 0.1
EMPTY_MAX = 0.6

Circle = tuple[float, float, float]


def read_packing(source: str) -> list[Circle] | None:
    """The packing ``pack.py`` prints (run in a scratch folder), or None."""
    with tempfile.TemporaryDirectory(prefix="ea-circles-") as tmp:
        script = Path(tmp) / PACKER
        script.write_text(source)
        done = run_process([sys.executable, str(script)], cwd=Path(tmp), timeout=20)
        if done.returncode is None:
            return None
    circles = []
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        try:
            x, y, r = (float(p) for p in parts)
        except ValueError:
            return None
        circles.append((x, y, r))
    return circles or None


def render(circles: list[Circle]) -> str:
    rows = "\n".join(f"    ({x:.12f}, {y:.12f}, {r:.12f})," for x, y, r in circles)
    return (
        '"""Prints a packing of 26 circles in the unit square: one "x y r" line per circle."""\n'
        f"\nCIRCLES = [\n{rows}\n]\n\nfor x, y, r in CIRCLES:\n"
        '    print(f"{x:.12f} {y:.12f} {r:.12f}")\n'
    )


def room(x: float, y: float, others: list[Circle]) -> float:
    """The largest radius at (x, y) that keeps MARGIN from the walls and ``others``."""
    limit = min(x, 1 - x, y, 1 - y)
    for ox, oy, orad in others:
        limit = min(limit, math.hypot(x - ox, y - oy) - orad)
    return math.floor((limit - MARGIN) * 1e12) / 1e12


def _centre(v: float) -> float:
    return round(min(1.0, max(0.0, v)), 12)


def grow(circles: list[Circle], rng: random.Random) -> list[Circle]:
    """Every circle as large as the others allow, in a random order."""
    out = list(circles)
    for i in rng.sample(range(len(out)), len(out)):
        x, y, _ = out[i]
        out[i] = (x, y, max(0.0, room(x, y, out[:i] + out[i + 1 :])))
    return out


def total(circles: list[Circle]) -> float:
    return math.fsum(r for _, _, r in circles)


def valid(circles: list[Circle]) -> bool:
    return all(r > 0 for _, _, r in circles)


def bold_move(circles: list[Circle], rng: random.Random) -> list[Circle]:
    """Take out the smallest few and put each back where the most room is."""
    k = rng.randint(2, 6)
    order = sorted(range(len(circles)), key=lambda i: circles[i][2])
    out_ids = set(order[:k]) | {rng.randrange(len(circles))}
    kept = [c for i, c in enumerate(circles) if i not in out_ids]
    for _ in out_ids:
        best: Circle | None = None
        for _ in range(PLACES):
            x, y = _centre(rng.random()), _centre(rng.random())
            r = room(x, y, kept)
            if r > 0 and (best is None or r > best[2]):
                best = (x, y, r)
        if best is None:
            return circles
        kept.append(best)
    return grow(kept, rng)


def small_move(circles: list[Circle], step: float, rng: random.Random) -> list[Circle]:
    """Nudge one circle by about ``step``, shrink it to fit, regrow everyone."""
    out = list(circles)
    i = rng.randrange(len(out))
    x, y, _ = out[i]
    nx, ny = _centre(x + rng.gauss(0, step)), _centre(y + rng.gauss(0, step))
    out[i] = (nx, ny, 0.0)
    out[i] = (nx, ny, max(0.0, room(nx, ny, out[:i] + out[i + 1 :])))
    return grow(out, rng)


def climb(circles: list[Circle], step: float, rng: random.Random) -> list[Circle]:
    """CLIMB nudges, each kept only if the sum went up."""
    for _ in range(CLIMB):
        tried = small_move(circles, step, rng)
        if valid(tried) and total(tried) > total(circles):
            circles = tried
    return circles


class CirclesExampleAgent(ExampleAgent):
    name = "circles-example"
    STATE_DIR = "circles"

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        packer = request.workspace / PACKER
        if refused := self.refused(request, packer):
            return refused
        session = self._load(request)
        turns = int(session.get("turns", 0))
        rng = self.turn_rng(request)
        source = self._best_source(request) or packer.read_text()
        circles = read_packing(source)
        message = "kept the packing"
        new = circles
        if circles and len(circles) == 26:
            empty = min(EMPTY_MAX, EMPTY_STEP * max(0, turns - FRESH_TURNS))
            if turns < FRESH_TURNS:
                new = climb(bold_move(circles, rng), 0.03, rng)
                message = "fresh look: moved the smallest circles, then nudged"
            elif rng.random() < empty:
                new, message = circles, "this packing looks tight; no further edits."
            else:
                step = 0.03 / (1 + turns / 3)
                new = climb(circles, step, rng)
                message = f"nudged circles by about {step:.3f}"
            if not valid(new) or total(new) <= total(circles):
                new = circles
        if new and new is not circles:
            text = render(new)
        else:
            text = source  # no better packing: the best candidate it may see, as it is
        if text != packer.read_text():
            packer.write_text(text)
        session["turns"] = turns + 1
        self._save(request, session)
        self._note(request, message, new)
        return TurnResult(
            session_id=request.session_id,
            input_tokens=len(request.prompt.split()),
            output_tokens=len(text.split()) if new is not circles else 5,
            cost_usd=0.0,
            message=message,
        )

    def _note(self, request: TurnRequest, message: str, circles: list[Circle] | None) -> None:
        notes = request.env.get("EA_NOTES")
        if not notes:
            return
        made = f"{total(circles):.6f}" if circles else "?"
        line = f"- round {request.round} agent {request.agent}: {message} (sum {made})\n"
        try:
            with open(notes, "a", encoding="utf-8") as fh:
                fh.write(line)
        except OSError:
            pass

    def _best_source(self, request: TurnRequest) -> str | None:
        return self.best_peer_file(request, PACKER)
