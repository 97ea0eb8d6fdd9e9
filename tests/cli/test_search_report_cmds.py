"""``search report / compare / plateau-test`` (``cli/search_report_cmds.py``): their
examples parse, and a run directory that is not one is a one-line error."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from evolving_agent.cli import search_cmds
from evolving_agent.cli.search_cmds import search_group
from tests.helpers import REPO, run_cli
from tests.helpers.docexamples import examples, parses


@pytest.fixture(autouse=True)
def _registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the examples name examples/tsp/ from the repository
    search_cmds.register(click.Group("top"))


@pytest.mark.parametrize("name", ["report", "compare", "plateau-test"])
def test_each_example_is_accepted_by_its_commands_parser(name: str) -> None:
    command = search_group.commands[name]
    found = examples(command)
    assert found, f"search {name} has no example"
    for example in found:
        assert example[:2] == ["search", name]
        parses(search_group, example[1:])


def test_compare_names_its_policies_and_repeats_in_the_example() -> None:
    [example] = examples(search_group.commands["compare"])
    ctx = parses(search_group, example[1:])
    assert ctx.params["policies"] == "single,parallel,forget-team"
    assert ctx.params["repeats"] == 3


def test_a_report_of_nothing_or_of_a_directory_without_a_log_is_one_line(tmp_path: Path) -> None:
    missing = run_cli("search", "report", str(tmp_path / "norun"))
    assert missing.exit_code == 4
    assert missing.stderr == f"error: run directory not found: {tmp_path / 'norun'}\n"
    (tmp_path / "empty").mkdir()
    empty = run_cli("search", "report", str(tmp_path / "empty"))
    assert empty.exit_code == 4 and empty.stderr.endswith(
        "not a search run directory (no log.jsonl)\n"
    )
    assert not list((tmp_path / "empty").iterdir())  # nothing written there


def test_plateau_test_needs_its_turns() -> None:
    result = run_cli("search", "plateau-test", "runs/x")
    assert result.exit_code == 2 and "Missing option '--turns'" in result.stderr
