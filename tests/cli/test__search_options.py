"""The options ``search run`` and ``search compare`` share (``cli/_search_options.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.cli._search_options import _FIELDS, task_options, token_prices
from evolving_agent.errors import UsageError


def test_token_prices_come_inline_or_from_a_file_as_floats(tmp_path: Path) -> None:
    assert token_prices(None) is None
    assert token_prices('{"input": 3, "output": 15.5}') == {"input": 3.0, "output": 15.5}
    prices = tmp_path / "prices.json"
    prices.write_text('{"output": 10}')
    assert token_prices(str(prices)) == {"output": 10.0}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("{output: 10}", "--token-prices must be JSON or a JSON file: "),
        ('["output", 10]', "--token-prices must map names to numbers"),
        ('{"output": "ten"}', "--token-prices must map names to numbers"),
    ],
)
def test_bad_token_prices_are_a_usage_error(value: str, says: str) -> None:
    with pytest.raises(UsageError, match=f"^{says}"):
        token_prices(value)


@settings(max_examples=25)  # each example also asks the file system
@given(st.dictionaries(st.text(max_size=10), st.floats(allow_nan=False, allow_infinity=False)))
def test_any_json_price_table_reads_back_as_it_was(table: dict[str, float]) -> None:
    assert token_prices(json.dumps(table)) == table


def test_inline_prices_longer_than_a_file_name_are_read_as_json() -> None:
    # Hypothesis found it: Path(value).is_file() raised "File name too long" (ENAMETOOLONG)
    # on inline JSON over 255 bytes, and the CLI said "file name too long", exit 4.
    table = {f"kind-{n:03d}": float(n) for n in range(40)}
    assert len(json.dumps(table)) > 255
    assert token_prices(json.dumps(table)) == table


def test_the_command_gets_one_settings_dict_of_exactly_the_shared_fields(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    @click.command()
    @task_options
    @click.option("--extra", default="x")
    def fake(settings: dict[str, Any], extra: str) -> None:
        seen.update(settings, extra=extra)

    args = [
        "--candidate",
        "c",
        "--task",
        "t.md",
        "--score",
        "python s.py",
        "--agent",
        "tsp-example",
        "--token-prices",
        '{"output": 2}',
        "--sandbox-ro",
        "ro",
    ]
    result = CliRunner().invoke(fake, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert set(seen) == {*_FIELDS, "extra"} and seen["extra"] == "x"
    assert seen["token_prices"] == {"output": 2.0}
    assert seen["candidate"] == Path("c")
    assert seen["sandbox_net"] is True  # --sandbox-net on, the default
    assert seen["sandbox_ro"] == [str(Path("ro").absolute())]
