"""The ``search`` group (``cli/search_cmds.py``): its commands, and its example as a real
command line of ``search run``."""

from __future__ import annotations

import pytest

from evolving_agent.cli import search_cmds
from evolving_agent.cli.search_cmds import search_group
from tests.helpers import REPO
from tests.helpers.docexamples import examples, parses


@pytest.fixture(autouse=True)
def _registered(monkeypatch: pytest.MonkeyPatch) -> None:
    import click

    monkeypatch.chdir(REPO)  # the examples name examples/tsp/ from the repository
    search_cmds.register(click.Group("top"))


def test_the_group_holds_run_resume_report_compare_and_plateau_test() -> None:
    assert {"run", "resume", "report", "compare", "plateau-test"} <= set(search_group.commands)


def test_the_groups_example_is_a_search_run_the_parser_accepts() -> None:
    [example] = examples(search_group)
    assert example[:2] == ["search", "run"]
    ctx = parses(search_group, example[1:])
    assert ctx.params["agent"] == "tsp-example" and ctx.params["policy"] == "forget-team"
    assert (ctx.params["agents"], ctx.params["rounds"], ctx.params["turns"]) == (2, 3, 24)
    assert ctx.params["minimize"] is True
