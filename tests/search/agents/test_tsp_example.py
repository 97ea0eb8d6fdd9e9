"""The offline agent of the bundled example (``search/agents/tsp_example.py``): which
candidates it takes, and that its moves stay within the solver's time budget."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.agents.tsp_example import (
    TIME_BUDGET,
    affordable,
    choose,
    describe,
    fits,
    knobs_of,
    small_move,
)
from evolving_agent.search.example_tsp.solver import CONSTRUCTIONS, Genome, cost, render
from tests.helpers import REPO

GENOMES = st.builds(
    Genome,
    construction=st.sampled_from(CONSTRUCTIONS),
    start=st.integers(0, 199),
    two_opt=st.integers(0, 6),
    or_opt=st.integers(0, 3),
    starts=st.integers(1, 8),
    neighbours=st.integers(4, 12),
    kicks=st.integers(0, 400),
    kick_seed=st.integers(0, 999),
)
SESSIONS = st.fixed_dictionaries({"turns": st.integers(0, 30)})


def test_it_takes_the_bundled_seed_and_solvers_it_wrote_and_nothing_else(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    shutil.copytree(REPO / "examples" / "tsp" / "candidate", seed)
    assert fits(seed)
    (seed / "solve.py").write_text(render(Genome(construction="greedy", two_opt=2)))
    assert fits(seed)
    (seed / "solve.py").write_text("print('my own solver')\n")
    assert not fits(seed)
    (seed / "solve.py").write_bytes(b"\xff\xfe not text")
    assert not fits(seed)
    assert not fits(tmp_path / "empty")


@settings(max_examples=30)
@given(GENOMES)
def test_affordable_trims_any_genome_into_the_budget_keeping_its_structure(g: Genome) -> None:
    fitted = affordable(g)
    assert cost(fitted) <= TIME_BUDGET
    assert (fitted.construction, fitted.two_opt, fitted.or_opt) == (
        g.construction,
        g.two_opt,
        g.or_opt,
    )
    assert fitted.kicks <= g.kicks and fitted.starts <= g.starts


@settings(max_examples=30)
@given(GENOMES.map(affordable), SESSIONS, st.integers(0, 2**32))
def test_every_move_stays_affordable_and_the_same_seed_makes_the_same_move(
    g: Genome, session: dict[str, int], seed: int
) -> None:
    new, message = choose(g, dict(session), random.Random(seed))
    assert cost(new) <= TIME_BUDGET and message
    assert choose(g, dict(session), random.Random(seed)) == (new, message)


@settings(max_examples=30)
@given(GENOMES.map(affordable), st.integers(0, 2**32))
def test_a_small_move_changes_at_most_the_one_knob(g: Genome, seed: int) -> None:
    for knob in knobs_of(g):
        new = small_move(g, knob, random.Random(seed))
        changed = {k for k in g.__dict__ if getattr(g, k) != getattr(new, k)}
        assert changed <= {knob} and cost(new) <= TIME_BUDGET


def test_describe_names_the_structure_in_words() -> None:
    g = Genome(construction="greedy", start=3, two_opt=2, starts=4, kicks=40, kick_seed=7)
    assert describe(g) == (
        "greedy from city 3, best of 4 starts, 2 2-opt passes, 40 kicks (seed 7), 8 neighbours"
    )
    assert describe(Genome()) == "index from city 0"
