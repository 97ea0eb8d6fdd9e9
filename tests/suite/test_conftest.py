"""The suite's own tables name tests that exist: ``SLOW`` (tests moved to the slow part by
their measured cost) and ``SEED_SECONDS`` (what the longest tests take, for a clean clone's
ordering) are keyed by file and test name, and a renamed file or test silently drops out of
them — a slow test back in the fast part.  Read from the files' text, not by importing them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import SEED_SECONDS, SLOW

TESTS = Path(__file__).resolve().parents[1]


def _defined(module: str) -> set[str]:
    source = (TESTS / f"{module}.py").read_text(encoding="utf-8")
    return set(re.findall(r"^\s*(?:async\s+)?def (test_\w+)", source, re.M))


@pytest.mark.parametrize(
    ("table", "entries"), [("SLOW", SLOW), ("SEED_SECONDS", SEED_SECONDS)], ids=["SLOW", "SEED"]
)
def test_every_entry_names_a_test_file_and_tests_it_defines(
    table: str, entries: dict[str, object]
) -> None:
    stale = []
    for module, names in entries.items():
        if not (TESTS / f"{module}.py").is_file():
            stale.append(f"{table}: no file tests/{module}.py")
            continue
        defined = _defined(module)
        stale += [
            f"{table}: tests/{module}.py defines no {name}"
            for name in names  # type: ignore[attr-defined]
            if name != "*" and name not in defined
        ]
    assert not stale, "\n".join(stale)


def test_no_table_repeats_a_file() -> None:
    """A repeated key in a dict literal silently replaces the earlier entry (merges add
    entries to these tables from several branches)."""
    import ast

    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    repeated = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            repeated += [f"line {node.lineno}: {k}" for k in sorted(set(keys)) if keys.count(k) > 1]
    assert not repeated, repeated


def test_the_files_on_the_sessions_ray_cluster_are_exactly_ray_files() -> None:
    """Every file that asks for ``ray_cluster`` must be in ``RAY_FILES`` (handed to one
    worker with the others), else it starts a second cluster on the other worker; and
    every file listed still asks for it."""
    from tests.helpers.ray_cluster import RAY_FILES

    asking = {
        path.relative_to(TESTS.parent).as_posix()
        for path in TESTS.rglob("test_*.py")
        if re.search(r"\bray_cluster: RayCluster\b", path.read_text(encoding="utf-8"))
    }
    assert asking == set(RAY_FILES)
