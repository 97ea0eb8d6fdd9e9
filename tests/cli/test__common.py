"""cli/_common.py: the shared option types (a day, YYYY-MM-DD; the reflector pair)."""

from __future__ import annotations

from datetime import date

import click
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.cli._common import DAY, reflector_options
from tests.helpers import run_cli


def test_an_impossible_day_is_named_as_such_on_every_date_option() -> None:
    # A newcomer's 2026-02-30 was answered "does not match the format".
    run_cli("init")
    for args in (
        ["run", "nightly", "--date", "2026-02-30"],
        ["evidence", "show", "--date", "2026-02-30"],
        ["drift", "--since", "2026-02-30"],
    ):
        result = run_cli(*args)
        assert result.exit_code == 2
        assert "'2026-02-30' is not a real date (February 2026 has 28 days)" in result.output
        assert "does not match the format" not in result.output
    typo = run_cli("evidence", "show", "--date", "26-02-03")
    assert "does not match the format" in typo.output  # a wrong shape is still said so


@given(st.integers(1000, 9999), st.integers(0, 99), st.integers(0, 99))
def test_a_day_of_the_right_shape_parses_iff_it_exists(year: int, month: int, day: int) -> None:
    text = f"{year:04d}-{month:02d}-{day:02d}"
    try:
        real = date(year, month, day)
    except ValueError:
        with pytest.raises(click.BadParameter, match="is not a real date"):
            DAY.convert(text, None, None)
    else:
        assert DAY.convert(text, None, None).date() == real


def test_the_reflector_options_are_one_pair_with_each_commands_own_help() -> None:
    @click.command()
    @reflector_options(("rules", "command"), which="Who answers.", cmd="What runs.")
    def cmd(reflector: str | None, reflector_cmd: str | None) -> None:
        click.echo(f"{reflector} {reflector_cmd}")

    runner = CliRunner()
    assert runner.invoke(cmd, ["--reflector", "command", "--reflector-cmd", "x y"]).output == (
        "command x y\n"
    )
    assert runner.invoke(cmd, []).output == "None None\n"
    refused = runner.invoke(cmd, ["--reflector", "gpt"])
    assert refused.exit_code == 2 and "'gpt' is not one of 'rules', 'command'" in refused.output
    shown = runner.invoke(cmd, ["--help"]).output
    assert "--reflector [rules|command]  Who answers." in shown
    assert "--reflector-cmd CMD" in shown and "What runs." in shown
