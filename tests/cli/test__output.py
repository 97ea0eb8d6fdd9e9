"""Everything the CLI prints (``cli/_output.py``): neutralised, and paged only on a terminal.

The pager on a real pseudo-terminal is tested with the hostile views, in test_views.py."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from evolving_agent.cli._output import _pager_command, echo, paged, typed_ahead


def test_no_command_module_prints_around_the_neutraliser() -> None:
    # Every view prints through cli/_output.echo; a raw click.echo would bypass it.
    cli_dir = Path(__file__).parents[2] / "evolving_agent" / "cli"
    raw = re.compile(r"click\.(?:s?echo|echo_via_pager)\(|(?<![\w.])print\(|sys\.stdout\.write")
    offenders = [
        p.name for p in cli_dir.glob("*.py") if p.name != "_output.py" and raw.search(p.read_text())
    ]
    assert offenders == []


def test_echo_neutralises_on_stdout_and_stderr() -> None:
    @click.command()
    def show() -> None:
        echo("a\x1b[2Kb \u202eevil")
        echo("warn\x07", err=True)

    result = CliRunner().invoke(show)
    assert result.stdout == "a\\u001b[2Kb \\u202eevil\n"
    assert result.stderr == "warn\\u0007\n"


def test_a_paged_command_off_a_terminal_prints_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAGER", f"{sys.executable} -c 'raise SystemExit(9)'")

    @click.command()
    @paged
    def long_view() -> None:
        for n in range(300):
            echo(f"line {n}")

    result = CliRunner().invoke(long_view)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [f"line {n}" for n in range(300)]


@pytest.mark.parametrize(
    ("ea_pager", "pager", "expected"),
    [
        (None, "cat", None),  # PAGER=cat: no pager
        (None, "no-such-pager-xyz", None),  # not installed: print as it is
        (None, "less -R 'unclosed", None),  # not a command line
        ("less -S", "more", ["less", "-S"]),  # the product's own variable first
        (None, "less -X", ["less", "-X"]),
    ],
)
def test_the_pager_command_is_chosen_or_declined(
    ea_pager: str | None, pager: str, expected: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if ea_pager is None:
        monkeypatch.delenv("EVOLVING_AGENT_PAGER", raising=False)
    else:
        monkeypatch.setenv("EVOLVING_AGENT_PAGER", ea_pager)
    monkeypatch.setenv("PAGER", pager)
    if expected and shutil.which(expected[0]) is None:
        pytest.skip(f"{expected[0]} is not installed")
    assert _pager_command() == expected


def test_nothing_is_typed_ahead_when_stdin_is_no_terminal() -> None:
    assert typed_ahead() == 0
