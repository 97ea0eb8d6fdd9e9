"""The bundled example's solver templates (``search/example_tsp/solver.py``): every genome
renders a solver that ``parse`` reads back and that prints a valid tour."""

from __future__ import annotations

import contextlib
import io
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.example_tsp.solver import CONSTRUCTIONS, Genome, cost, parse, render
from tests.helpers import REPO

GENOMES = st.builds(
    Genome,
    construction=st.sampled_from(CONSTRUCTIONS),
    start=st.integers(0, 29),
    two_opt=st.integers(0, 3),
    or_opt=st.integers(0, 2),
    starts=st.integers(1, 3),
    neighbours=st.integers(2, 10),
    kicks=st.integers(0, 3),
    kick_seed=st.integers(0, 99),
)


def _tour(source: str, cities: Path) -> list[int]:
    out = io.StringIO()
    argv = sys.argv
    sys.argv = ["solve.py", str(cities)]
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "solve.py", "exec"), {"__name__": "__main__"})  # noqa: S102
    finally:
        sys.argv = argv
    return [int(x) for x in out.getvalue().split()]


@pytest.fixture(scope="module")
def cities(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("tsp") / "cities.txt"
    path.write_text(
        "".join(f"{rng.uniform(0, 100):.3f} {rng.uniform(0, 100):.3f}\n" for _ in range(30))
    )
    return path


@settings(max_examples=40)
@given(GENOMES)
def test_parse_reads_back_every_rendered_genome(genome: Genome) -> None:
    assert parse(render(genome)) == genome


@settings(max_examples=20, deadline=None)
@given(genome=GENOMES)
def test_every_rendered_solver_prints_a_tour_of_every_city_once(
    genome: Genome, cities: Path
) -> None:
    assert sorted(_tour(render(genome), cities)) == list(range(30))


def test_the_bundled_seed_parses_with_the_newer_knobs_absent() -> None:
    seed = (REPO / "examples" / "tsp" / "candidate" / "solve.py").read_text()
    genome = parse(seed)
    assert genome is not None
    assert (genome.starts, genome.neighbours, genome.kicks, genome.kick_seed) == (1, 8, 0, 0)
    assert parse("print('hello')") is None
    assert parse(render(Genome()).replace('"index"', '"magic"')) is None


def test_cost_grows_with_starts_kicks_and_heavier_construction() -> None:
    base = Genome(construction="nearest", two_opt=2)
    assert cost(base.nudged(starts=3)) > cost(base) > cost(base.nudged(two_opt=0))
    assert cost(base.nudged(kicks=50)) > cost(base)
    assert cost(base.nudged(construction="greedy")) > cost(base)
