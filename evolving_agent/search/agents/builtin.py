"""The ``builtin`` agent: an offline, deterministic-with-seed editor for the TSP example.

It behaves like the coding agents the search loop is about, in miniature:

* it starts each turn from the best candidate it may see (its own history or a
  peer's best, as the reducer allowed), reading that candidate's ``solve.py``;
* a **fresh session** is bold: it rewrites the solver with a new construction, start
  city and pass counts (tens of lines changed);
* a **continued session anchors**: it nudges one knob (a one-line edit), and the
  longer the session the likelier it ends a turn with no edit at all, having
  "reached the practical limit".

Sessions are real: their state is a JSON file per session id under the run's
``agent-state/builtin/``, so continuing and resetting are observable.  The randomness
is seeded from the run seed, round, agent and turn, so a seed repeats a run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from evolving_agent.search.agents.base import Agent, TurnRequest, TurnResult
from evolving_agent.search.agents.tsp_solver import CONSTRUCTIONS, Genome, parse, render
from evolving_agent.search.reducer import better
from evolving_agent.search.workspace import head, read_file_at

SOLVER = "solve.py"
MAX_TWO_OPT = 6
MAX_OR_OPT = 2


class BuiltinAgent(Agent):
    name = "builtin"

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        solver = request.workspace / SOLVER
        if not solver.is_file():
            return TurnResult(
                session_id=request.session_id,
                message="the builtin agent only knows the bundled TSP example (no solve.py)",
            )
        session = self._load(request)
        rng = random.Random(f"{request.seed}:{request.round}:{request.agent}:{request.turn}")
        genome = self._best_start(request) or parse(solver.read_text()) or Genome()
        turns_in_session = int(session.get("turns", 0))
        if turns_in_session == 0:
            new = bold_move(genome, rng)
            message = f"fresh look: rewrote the solver as {describe(new)}"
        elif rng.random() < min(0.7, 0.2 * turns_in_session):
            new = genome
            message = "I think this is close to the practical limit; no further edits."
        else:
            new = small_move(genome, rng)
            message = f"small tweak: {describe(new)}"
        # Reading a peer's best and copying it counts as an edit of this workspace.
        text = render(new)
        if text != solver.read_text():
            solver.write_text(text)
        session["turns"] = turns_in_session + 1
        session.setdefault("history", []).append(describe(new))
        self._save(request, session)
        return TurnResult(
            session_id=request.session_id,
            input_tokens=len(request.prompt.split()),
            output_tokens=len(text.split()) if new != genome else 5,
            cost_usd=0.0,
            message=message,
        )

    def _best_start(self, request: TurnRequest) -> Genome | None:
        """The genome of the best visible candidate, if it beats the workspace's HEAD."""
        current = head(request.workspace)
        scored = [v for v in request.visible if v.score is not None]
        if not scored:
            return None
        best = scored[0]
        for v in scored[1:]:
            assert v.score is not None and best.score is not None
            if better(v.score, best.score, minimize=request.minimize):
                best = v
        if best.commit == current:
            return None
        source = read_file_at(request.workspace, best.commit, SOLVER)
        return parse(source) if source else None

    def _path(self, request: TurnRequest) -> Path | None:
        if request.state_dir is None:
            return None
        return request.state_dir / "builtin" / f"{request.session_id}.json"

    def _load(self, request: TurnRequest) -> dict[str, Any]:
        path = self._path(request)
        if request.new_session or path is None or not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, request: TurnRequest, session: dict[str, Any]) -> None:
        path = self._path(request)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(session))
        tmp.replace(path)


def bold_move(genome: Genome, rng: random.Random) -> Genome:
    """A fresh session's rewrite: several knobs at once, often a new construction."""
    others = [c for c in CONSTRUCTIONS if c not in ("index", genome.construction)]
    construction = genome.construction
    if construction == "index" or rng.random() < 0.4:
        construction = rng.choice(others)
    return Genome(
        construction=construction,
        start=rng.randrange(200),
        two_opt=rng.randint(max(2, genome.two_opt), MAX_TWO_OPT),
        or_opt=rng.randint(genome.or_opt, MAX_OR_OPT),
    )


def small_move(genome: Genome, rng: random.Random) -> Genome:
    """An anchored session's nudge: one knob, one line."""
    knob = rng.choice(("start", "two_opt", "or_opt"))
    if knob == "start":
        return genome.nudged(start=(genome.start + rng.choice((-2, -1, 1, 2))) % 200)
    if knob == "two_opt":
        return genome.nudged(two_opt=min(MAX_TWO_OPT, max(0, genome.two_opt + rng.choice((-1, 1)))))
    return genome.nudged(or_opt=min(MAX_OR_OPT, max(0, genome.or_opt + rng.choice((-1, 1)))))


def describe(genome: Genome) -> str:
    return (
        f"{genome.construction} from city {genome.start}, "
        f"{genome.two_opt} 2-opt and {genome.or_opt} or-opt passes"
    )
