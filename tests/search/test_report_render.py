"""The report's three views (``search/report_render.py``): the markdown and the HTML page
show the same tables from one ``RunReport``, escape what a run wrote, and word the
cells a reader judges the run by (small gains, noise, plateau rounds, restarts)."""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.search.report import RunReport, load_run
from evolving_agent.search.report_render import (
    _pct,
    _rounds_cell,
    render_html,
    render_markdown,
    write_report,
)
from tests.helpers.report_runs import make_run


@pytest.fixture
def report(tmp_path: Path) -> RunReport:
    return load_run(make_run(tmp_path))


def _markdown_rows(md: str) -> list[list[str]]:
    """Every body row of every markdown table (header and rule lines left out)."""
    rows: list[list[str]] = []
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        if i + 1 < len(lines) and set(lines[i + 1]) <= {"|", "-", " "} and "-" in lines[i + 1]:
            continue  # a header: the rule follows it
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _html_rows(page: str) -> list[list[str]]:
    return [
        [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>((?:<td>.*?</td>)+)</tr>", page)
    ]


def test_the_page_and_the_markdown_hold_the_same_table_rows(report: RunReport) -> None:
    md_rows = _markdown_rows(render_markdown(report, "report.png"))
    page_rows = _html_rows(render_html(report, b"\x89PNG"))
    # The markdown has tables of its own beyond the page's (holdout, forecast, canaries)
    # only when the run has them; this run has none.
    assert page_rows == md_rows
    assert ["best score", "700"] in page_rows
    assert ["1", "6", "1", "0", "0", "0", "0", "1000", "900", "100", "+10.0%", "$0.0600", "—"] in (
        page_rows
    )


def test_what_a_run_wrote_is_escaped_on_the_page(report: RunReport) -> None:
    hostile = dataclasses.replace(
        report, warnings=["<script>alert(1)</script> & more"], policy="<b>forget</b>"
    )
    page = render_html(hostile, b"png")
    assert "<script>" not in page and "<b>forget</b>" not in page
    assert "<p class='warn'>&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</p>" in page
    assert "<td>&lt;b&gt;forget&lt;/b&gt;</td>" in page
    md = render_markdown(hostile, "report.png")
    assert "> <script>alert(1)</script> & more" in md  # markdown shows it as written


def test_the_plot_is_inline_on_the_page_and_named_in_the_markdown(report: RunReport) -> None:
    assert "src='data:image/png;base64,AAEC'" in render_html(report, b"\x00\x01\x02")
    assert "![best-so-far](plot-7.png)" in render_markdown(report, "plot-7.png")


def test_gains_keep_two_digits_below_one_percent() -> None:
    assert [_pct(None), _pct(0.0), _pct(12.34), _pct(-3.0)] == ["—", "+0.0%", "+12.3%", "-3.0%"]
    assert [_pct(0.1234), _pct(-0.0056)] == ["+0.12%", "-0.0056%"]


def test_a_round_gain_within_the_noise_floor_says_so(report: RunReport) -> None:
    floored = dataclasses.replace(report, noise_floor=150.0)
    rows = _markdown_rows(render_markdown(floored, "report.png"))
    gains = {r[0]: r[9] for r in rows if len(r) == 13}
    # Round 1 gained 100 (within a floor of 150), round 2 gained 200 (beyond it).
    assert gains["1"] == "100 (within noise)" and gains["2"] == "200"


def test_the_rounds_cell_names_plateau_forgetting(report: RunReport) -> None:
    assert _rounds_cell(report) == "3 of 3 planned"
    plateau = dataclasses.replace(report, forget_on_plateau=4)
    assert _rounds_cell(plateau).startswith("3 (3 planned; plateau forgetting after 4 turns")
    unplanned = dataclasses.replace(report, forget_on_plateau=4, rounds_planned=None)
    assert _rounds_cell(unplanned) == "3 (plateau forgetting on)"
    assert _rounds_cell(dataclasses.replace(report, rounds_planned=None)) == "3"


def test_rounds_that_were_restarts_are_not_called_forgetting(report: RunReport) -> None:
    md = render_markdown(report, "report.png")
    assert "Forgets in this run:" in md and "restarts" not in md
    restarts = dataclasses.replace(report, isolation="none", forgotten=False)
    md = render_markdown(restarts, "report.png")
    assert "Isolation none: this run's round boundaries are restarts, not forgetting" in md
    assert "| isolation | none (agents and scorers ran as plain processes of the user); " in md
    assert "Forgets in this run:" not in md and "Restarts in this run:" in md
    kept = dataclasses.replace(report, policy="keep-notes")
    assert "Restarts in this run (keep-notes keeps sessions" in render_markdown(kept, "r.png")


def test_a_rescored_best_follows_the_best_score_row(report: RunReport) -> None:
    rescored = dataclasses.replace(report, best_rescored=712.0, rescore_n=3)
    rows = [r[0] for r in _markdown_rows(render_markdown(rescored, "report.png")) if len(r) == 2]
    assert rows[rows.index("best score") + 1] == "best re-scored"


def test_an_output_folder_that_cannot_be_made_is_one_named_error(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    with pytest.raises(InvalidInput, match="cannot create output directory") as caught:
        write_report(run, out=blocker / "report")
    assert caught.value.exit_code == 4
    assert not (run / "report.md").exists()
