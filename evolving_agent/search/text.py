"""How the search side writes numbers and tables for people: one formatter of each.

Reports, comparisons and plateau tests print the same kinds of values; writing them in
one place keeps ``0.000123`` from reading three ways in three files.
"""

from __future__ import annotations

from collections.abc import Sequence

MISSING = "—"


def fmt_number(value: float | None) -> str:
    """A score or gain: six significant digits, an em dash when there is none."""
    return MISSING if value is None else f"{value:.6g}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table, one string per line (no trailing newline)."""

    def line(cells: Sequence[str]) -> str:
        return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"

    return [line(header), "|" + "|".join("---" for _ in header) + "|", *map(line, rows)]
