"""The ``tsp-example`` agent (``builtin`` before): an offline, deterministic-with-seed
editor for the TSP example.

It behaves like the coding agents the search loop is about, in miniature:

* it starts each turn from the best candidate it may see (its own history or a
  peer's best, as the reducer allowed), reading that candidate's ``solve.py``;
* a **fresh session** is bold for its first few turns: it rewrites the solver's structure — another
  construction (nearest neighbour, greedy edge, farthest insertion, angular sweep,
  space-filling curve), adds or drops 2-opt, or-opt, multi-start or double-bridge
  kicks, and picks new knob values — tens of lines changed; a bold rewrite may land in
  a better basin or a worse one;
* a **continued session anchors**: the longer it runs, the likelier a turn is a one-line
  knob nudge (a pass count, the start city, a few kicks more or less) rather than a
  rewrite, and the likelier it ends a turn with no edit at all, having "reached the
  practical limit".

The agent knows only whether its session is fresh or continued (and how many turns it
has taken), its seed and what the reducer lets it see; it never knows the policy.  It
keeps its solvers within the task's "well under a second" by its own rough running-time
estimate (``example_tsp.solver.cost``).  The score is whatever the scorer measures on the tour
the written solver prints.

Sessions are real: their state is a JSON file per session id under the run's
``agent-state/builtin/`` (the directory keeps the old name, so runs made before the
rename resume their sessions), so continuing and resetting are observable.  The randomness
is seeded from the run seed, round, agent and turn, so a seed repeats a run.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from evolving_agent.search.agents.base import TurnRequest, TurnResult
from evolving_agent.search.agents.example_base import ExampleAgent
from evolving_agent.search.example_tsp.solver import CONSTRUCTIONS, Genome, cost, parse, render

SOLVER = "solve.py"
MAX_TWO_OPT = 6
MAX_OR_OPT = 3
MAX_STARTS = 8
MAX_KICKS = 400
TIME_BUDGET = 0.2  # seconds, by the agent's own estimate: "well under a second"
# A fresh session rewrites on its first turn and likely (BOLD_FIRST) on its next
# FRESH_TURNS - 1; after that every turn it continues makes a rewrite less likely ...
FRESH_TURNS = 3
BOLD_FIRST = 0.9
BOLD_DECAY = 0.35
# ... and a turn without any edit more likely (from turn FRESH_TURNS + 2 on).
EMPTY_STEP = 0.12
EMPTY_MAX = 0.7


def fits(candidate: Path) -> bool:
    """Can the tsp-example agent work on this candidate?  Only on the bundled TSP example's
    shape: a ``solve.py`` it can read (the bundled seed, or one it wrote)."""
    solver = candidate / SOLVER
    try:
        return solver.is_file() and parse(solver.read_text(encoding="utf-8")) is not None
    except (OSError, UnicodeDecodeError):
        return False


class TspExampleAgent(ExampleAgent):
    name = "tsp-example"
    STATE_DIR = "builtin"  # under agent-state/; the pre-rename name, so old runs resume

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        solver = request.workspace / SOLVER
        if refused := self.refused(request, solver):
            return refused
        session = self._load(request)
        rng = self.turn_rng(request)
        genome = self._best_start(request) or parse(solver.read_text()) or Genome()
        turns_in_session = int(session.get("turns", 0))
        new, message = choose(genome, session, rng)
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
        source = self.best_peer_file(request, SOLVER)
        return parse(source) if source else None


def choose(genome: Genome, session: dict[str, Any], rng: random.Random) -> tuple[Genome, str]:
    """This turn's edit: a rewrite, a nudge or nothing, by how long the session has run.

    A session that has started nudging keeps nudging the same knob (its "focus"):
    anchored on one idea, it explores one dimension with ever smaller returns.
    """
    turns_in_session = int(session.get("turns", 0))
    if turns_in_session == 0:
        new = bold_move(genome, rng)
        return new, f"fresh look: rewrote the solver as {describe(new)}"
    bold = BOLD_FIRST * BOLD_DECAY ** max(0, turns_in_session - FRESH_TURNS + 1)
    empty = min(EMPTY_MAX, EMPTY_STEP * max(0, turns_in_session - FRESH_TURNS))
    draw = rng.random()
    if draw < bold:
        new = bold_move(genome, rng)
        return new, f"another approach: rewrote the solver as {describe(new)}"
    if draw < bold + empty:
        return genome, "I think this is close to the practical limit; no further edits."
    focus = session.get("focus")
    if not isinstance(focus, str) or focus not in knobs_of(genome):
        focus = rng.choice(knobs_of(genome))
        session["focus"] = focus
    new = small_move(genome, focus, rng)
    return new, f"small tweak of {focus}: {describe(new)}"


def bold_move(genome: Genome, rng: random.Random) -> Genome:
    """A rewrite: at least two structural changes, read off the solver it starts from.

    Like a fresh pair of eyes it mostly adds what is missing (an improvement operator,
    kicks) and seldom drops what is there; it may swap the construction or trade
    multi-start for kicks.  Rewritten parts get fresh knob values, the rest keeps its
    own, and whatever time the budget leaves goes to kicks, if the solver has them.
    """
    construction = genome.construction
    two_opt, or_opt, starts, kicks = genome.two_opt, genome.or_opt, genome.starts, genome.kicks
    changes = 0
    while changes < 2:
        if construction == "index" or rng.random() < 0.5:
            others = [c for c in CONSTRUCTIONS if c not in ("index", construction)]
            construction = rng.choice(others)
            changes += 1
        if rng.random() < (0.1 if two_opt else 0.6):
            two_opt = 0 if two_opt else rng.randint(1, MAX_TWO_OPT)
            changes += 1
        if rng.random() < (0.1 if or_opt else 0.5):
            or_opt = 0 if or_opt else rng.randint(1, MAX_OR_OPT)
            changes += 1
        if rng.random() < (0.4 if starts > 1 else 0.3):
            starts = 1 if starts > 1 else rng.randint(2, MAX_STARTS)
            changes += 1
        if rng.random() < (0.1 if kicks else 0.4):
            kicks = 0 if kicks else MAX_KICKS
            changes += 1
    new = Genome(
        construction=construction,
        start=rng.randrange(200) if construction != genome.construction else genome.start,
        two_opt=two_opt,
        or_opt=or_opt,
        starts=starts,
        neighbours=rng.randint(5, 12) if changes > 2 else genome.neighbours,
        kicks=MAX_KICKS if kicks else 0,
        kick_seed=rng.randrange(1000) if kicks and not genome.kicks else genome.kick_seed,
    )
    return affordable(new)


def affordable(genome: Genome) -> Genome:
    """Trim kicks (to a multiple of 10), then starts, until the solver fits the agent's
    time budget."""
    while cost(genome) > TIME_BUDGET and genome.kicks > 0:
        genome = genome.nudged(kicks=max(0, (genome.kicks - 1) // 10 * 10))
    while cost(genome) > TIME_BUDGET and genome.starts > 1:
        genome = genome.nudged(starts=genome.starts - 1)
    return genome


def knobs_of(genome: Genome) -> list[str]:
    """The knobs of the structure already there."""
    knobs = ["start", "neighbours"]
    knobs += ["two_opt"] if genome.two_opt else []
    knobs += ["or_opt"] if genome.or_opt else []
    knobs += ["starts"] if genome.starts > 1 else []
    knobs += ["kicks"] if genome.kicks else []
    return knobs


def small_move(genome: Genome, knob: str, rng: random.Random) -> Genome:
    """An anchored session's nudge: one knob, one line."""
    step = rng.choice((-1, 1))
    if knob == "start":
        new = genome.nudged(start=(genome.start + step * rng.randint(1, 2)) % 200)
    elif knob == "neighbours":
        new = genome.nudged(neighbours=min(12, max(4, genome.neighbours + step)))
    elif knob == "two_opt":
        new = genome.nudged(two_opt=min(MAX_TWO_OPT, max(1, genome.two_opt + step)))
    elif knob == "or_opt":
        new = genome.nudged(or_opt=min(MAX_OR_OPT, max(1, genome.or_opt + step)))
    elif knob == "starts":
        new = genome.nudged(starts=min(MAX_STARTS, max(2, genome.starts + step)))
    else:
        new = genome.nudged(kicks=max(1, genome.kicks + step * rng.randint(1, 5)))
    return new if cost(new) <= TIME_BUDGET else genome


def describe(genome: Genome) -> str:
    parts = [f"{genome.construction} from city {genome.start}"]
    if genome.starts > 1:
        parts.append(f"best of {genome.starts} starts")
    if genome.two_opt:
        parts.append(f"{genome.two_opt} 2-opt passes")
    if genome.or_opt:
        parts.append(f"{genome.or_opt} or-opt passes")
    if genome.kicks:
        parts.append(f"{genome.kicks} kicks (seed {genome.kick_seed})")
    if genome.local_search:
        parts.append(f"{genome.neighbours} neighbours")
    return ", ".join(parts)
