"""Numbers and tables for people, one formatter each (``evolving_agent/search/text.py``)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.search.text import MISSING, fmt_number, markdown_table

CELL = st.text(st.characters(exclude_characters="|\n", exclude_categories=["Cs"]), max_size=8)


def test_a_number_has_six_significant_digits_and_none_is_a_dash() -> None:
    assert fmt_number(0.000123456789) == "0.000123457"
    assert fmt_number(1410.0) == "1410" and fmt_number(12345678.0) == "1.23457e+07"
    assert fmt_number(None) == MISSING == "—"


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_formatted_number_reads_back_within_six_digits(value: float) -> None:
    back = float(fmt_number(value))
    assert math.isclose(back, value, rel_tol=5e-6, abs_tol=0.0)


def test_a_table_has_a_header_a_rule_and_a_line_per_row_empty_cells_kept() -> None:
    assert markdown_table(["policy", "best"], [["forget", "1410"], ["", "2"]]) == [
        "| policy | best |",
        "|---|---|",
        "| forget | 1410 |",
        "| | 2 |",
    ]


@given(
    st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            st.lists(CELL, min_size=n, max_size=n),
            st.lists(st.lists(CELL, min_size=n, max_size=n), max_size=4),
        )
    )
)
def test_every_line_has_one_cell_per_column(table: tuple[list[str], list[list[str]]]) -> None:
    header, rows = table
    lines = markdown_table(header, rows)
    assert len(lines) == len(rows) + 2
    assert all(line.count("|") == len(header) + 1 for line in lines)
    assert [cell.strip() for cell in lines[0].split("|")[1:-1]] == [c.strip() for c in header]
