"""The comparison's plot (``search/compare_plot.py``): a real PNG from real run logs, and
the step curves and zoom it is drawn with."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.compare_plot import PlottedRun, _spend, _step_at, _zoom, plot_comparison
from evolving_agent.search.rundir import TurnRecord

SHA = "0" * 40


def _record(seq: int, score: float | None, **kw: object) -> TurnRecord:
    fields = {
        "seq": seq,
        "round": 1,
        "agent": 1,
        "turn": seq,
        "round_turn": seq,
        "session": "s",
        "new_session": seq == 1,
        "base_commit": SHA,
        "commit": SHA,
        "score": score,
        "empty": False,
        "lines_changed": 1,
        "wall_s": 1.0,
        "ts": "2026-11-01T10:00:00+00:00",
    }
    return TurnRecord.model_validate({**fields, **kw})


def _run(tmp: Path, name: str, scores: list[float | None], **kw: object) -> str:
    run = tmp / name
    run.mkdir()
    lines = [_record(i + 1, s, **kw).model_dump_json() for i, s in enumerate(scores)]
    (run / "log.jsonl").write_text("\n".join(lines) + "\n")
    return str(run)


@pytest.mark.slow  # matplotlib's first figure in a process
def test_two_policies_make_one_png(tmp_path: Path) -> None:
    (tmp_path / "cmp").mkdir()
    runs = [
        PlottedRun("single", _run(tmp_path, "a", [10.0, 9.0, None]), 12.0, final=9.0),
        PlottedRun("forget-team", _run(tmp_path, "b", [11.0, 8.0], cost_usd=0.1), 12.0, 8.0),
    ]
    out = plot_comparison(
        runs, ["single", "forget-team"], minimize=True, repeats=1, out=tmp_path / "cmp"
    )
    assert out == tmp_path / "cmp" / "compare.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_nothing_to_show_is_no_plot(tmp_path: Path) -> None:
    gone = PlottedRun("single", str(tmp_path / "missing"), None)
    assert plot_comparison([gone], ["single"], minimize=True, repeats=1, out=tmp_path) is None
    assert not (tmp_path / "compare.png").exists()


@settings(max_examples=40)
@given(
    st.lists(st.tuples(st.floats(0, 100), st.floats(-5, 5)), min_size=1, max_size=8),
    st.floats(-10, 110),
)
def test_a_step_curve_holds_the_last_value_at_or_before_x(
    points: list[tuple[float, float]], x: float
) -> None:
    points.sort(key=lambda p: p[0])
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    before = [y for xi, y in points if xi <= x]
    assert _step_at(xs, ys, x) == (before[-1] if before else ys[0])


def test_spend_accumulates_dollars_or_tokens() -> None:
    recs = [_record(1, 1.0, cost_usd=0.5, input_tokens=10), _record(2, 1.0, output_tokens=5)]
    assert _spend(recs, "cost_usd") == [0.5, 0.5]
    assert _spend(recs, "tokens") == [10.0, 15.0]


def test_the_plot_zooms_past_a_seed_far_worse_than_every_run() -> None:
    low, high = _zoom([98892.0], [10800.0, 12000.0]) or (0.0, 0.0)
    assert (low, high) == (10800 - 96, 12000 + 96)
    assert _zoom([11000.0], [10800.0, 12000.0]) is None and _zoom([], [1.0]) is None
