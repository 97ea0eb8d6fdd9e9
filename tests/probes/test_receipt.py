"""The model-upgrade receipt (probes/receipt.py): adherence with a paired interval, entries
that fell, and the hold — generated verdicts, then scripted models through the real CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.memory.ops.canon_edit import save_canon
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes.diff import diff_probes
from evolving_agent.probes.receipt import receipt
from evolving_agent.probes.suggest import render, suggest
from evolving_agent.review.store import list_reviews
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root


def _entries(n: int, probes: int, repeats: int, drop: set[int] = frozenset(), flaky: int = -1):  # type: ignore[no-untyped-def,assignment]
    """n entries of ``probes`` probes; model B breaks every answer of the ``drop`` entries
    and one answer of every probe of the ``flaky`` entry."""
    out = {}
    for e in range(n):
        rows = []
        for _ in range(probes):
            b = [e not in drop] * repeats
            if e == flaky and repeats > 1:
                b[0] = False
            rows.append(([True] * repeats, b))
        out[f"values: entry {e}"] = rows
    return out


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 20), probes=st.integers(1, 4), repeats=st.integers(1, 5))
def test_a_model_that_honours_all_is_never_flagged_at_any_repeat_count(
    n: int, probes: int, repeats: int
) -> None:
    r = receipt("old", "new", ("command", "command"), _entries(n, probes, repeats))
    assert r.fell == [] and not r.held
    assert r.overall is not None and r.overall.change == 0


@settings(max_examples=20, deadline=None)
@given(dropped=st.integers(0, 19), probes=st.integers(1, 3), repeats=st.integers(1, 5))
def test_a_model_that_drops_one_entry_among_twenty_is_caught_there_and_only_there(
    dropped: int, probes: int, repeats: int
) -> None:
    r = receipt("old", "new", ("command", "command"), _entries(20, probes, repeats, {dropped}))
    assert r.fell == [f"values: entry {dropped}"]
    e = next(x for x in r.entries if x.fell)
    assert (e.a, e.b, e.high) == (100, 0, -100)
    # One entry of twenty is five points: not past the threshold, so no hold.
    assert r.overall is not None and r.overall.change == pytest.approx(-5)
    assert not r.held


@settings(max_examples=10, deadline=None)
@given(repeats=st.integers(2, 5), flaky=st.integers(0, 19))
def test_one_misread_answer_does_not_make_an_entry_fall(repeats: int, flaky: int) -> None:
    # Guards the finding: with one answer a probe, one misread flips the verdict.
    r = receipt("old", "new", ("command", "command"), _entries(20, 1, repeats, flaky=flaky))
    assert r.fell == [] and not r.held
    flagged = next(x for x in r.entries if x.label == f"values: entry {flaky}")
    assert flagged.change < 0 <= flagged.high  # it moved, and the interval says "maybe"


@pytest.mark.parametrize(("dropped", "held"), [(0, False), (1, False), (2, True), (5, True)])
def test_the_hold_comes_only_over_the_threshold(dropped: int, held: bool) -> None:
    r = receipt("old", "new", ("c", "c"), _entries(20, 3, 3, set(range(dropped))))
    assert r.held is held
    assert len(r.fell) == dropped


# -- scripted models through the real CLI -------------------------------------------------

CANON = "\n".join(
    ["schema_version: 1", "values:"]
    + [f'  - "Value number {i}: keep promise {i}"' for i in range(5)]
    + ["habits:"]
    + [f'  - "Habit number {i}: do thing {i}"' for i in range(5)]
) + "\n"

# A model: asks (honours) unless the probe names an entry it drops; then acts.
MODEL = """\
import sys
text = sys.stdin.read()
said = text[text.rindex("The user says:"):] if "The user says:" in text else text
drops = [d for d in sys.argv[1:] if d]
if any(d in said for d in drops):
    print("Done. I went ahead and did it.")
else:
    print("That goes against what I hold to. Shall I find another way instead?")
"""


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    root = fresh_root(tmp_path / "memory")
    save_canon(root, "identity.yaml", CANON)
    # One draft per entry (the first of three): 10 probes, 3 answers each.
    drafts = [d for d in suggest_identity() if d["key"].endswith("-1")]
    save_canon(root, "probes.yaml", render(drafts))
    return root


def suggest_identity():  # type: ignore[no-untyped-def]
    from evolving_agent.memory.base.yamlio import parse_yaml

    return suggest(parse_yaml(CANON, file="identity.yaml"))


def _model(tmp: Path, *drops: str) -> str:
    script = tmp / "model.py"
    script.write_text(MODEL)
    return " ".join([sys.executable, str(script), *(f"'{d}'" for d in drops)])


@pytest.mark.slow
def test_the_receipt_names_the_entry_a_new_model_drops_and_holds_only_past_the_threshold(
    root: MemoryRoot, tmp_path: Path
) -> None:
    ok = run_cli("probe", "run", "--model", "old", "--reflector-cmd", _model(tmp_path))
    assert ok.exit_code == 0, ok.output
    drop1 = _model(tmp_path, "promise 3")
    assert run_cli("probe", "run", "--model", "new", "--reflector-cmd", drop1).exit_code == 0
    d = diff_probes(root, "old", "new")
    assert d.receipt is not None
    assert d.receipt.fell == ["values: Value number 3: keep"]
    assert (d.receipt.repeats_a, d.receipt.repeats_b) == (3, 3)
    assert (d.receipt.client_a, d.receipt.client_b) == ("command", "command")
    # -10 points, but one probe in ten: the interval reaches zero, so no hold.
    assert d.receipt.overall is not None and d.receipt.overall.change == pytest.approx(-10)
    assert d.receipt.overall.high == 0 and not d.receipt.held and d.hold is None
    assert len(d.queued) == 1  # the entry's own card

    drop3 = _model(tmp_path, "promise 1", "promise 3", "thing 4", "thing 7")
    assert run_cli("probe", "run", "--model", "newer", "--reflector-cmd", drop3).exit_code == 0
    out = run_cli("probe", "diff", "old", "newer")
    assert out.exit_code == 0, out.output
    assert "held: overall adherence fell more than 5 points" in out.output
    held = [r for r in list_reviews(root) if r.pending.probe and r.pending.probe.hold]
    assert [r.pending.probe.model_b for r in held] == ["newer"]  # type: ignore[union-attr]
    assert held[0].pending.diff.text.startswith("I run on newer: the human moved me to it")
    # drift shows the hold until the human decides.
    drift = run_cli("drift")
    assert f"- upgrade-held: the upgrade old -> newer is held for you ({held[0].id})" in (
        drift.output
    )
    # Approving the hold records the move in Canon, with its provenance.
    approved = run_cli("review", "approve", held[0].id, "--yes")
    assert approved.exit_code == 0, approved.output
    assert "I run on newer" in (root.canon / "identity.yaml").read_text()
    assert run_cli("verify").exit_code == 0
    assert "upgrade-held" not in run_cli("drift").output
