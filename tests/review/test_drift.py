"""The drift watch: the essay's pendulum is flagged with its evidence ids, a calm month
is not, and each other check fires on what it names and only on that."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import add_hypothesis, hypothesis_id
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.drift import _state_flips, watch
from evolving_agent.review.hold import acknowledge
from tests.helpers import run_cli
from tests.helpers.fixtures import KeptDemo, copy_tree
from tests.helpers.roots import fresh_root

START = date(2026, 11, 2)
SHORT = "Keep answers short"
LONG = "Give the full information the user needs"
ANSWERING = "about to write an answer"


def _at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour)).astimezone()


def _root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _pendulum(root: MemoryRoot) -> list[str]:
    """Two weeks of the essay: 'too long' one day, 'not enough information' the next."""
    # The two pulls share their moment (writing an answer): the relation that makes
    # their turns a pendulum rather than a coincidence.
    add_hypothesis(root, SHORT, when=ANSWERING, do="be concise", ts=_at(START, 8))
    add_hypothesis(root, LONG, when=ANSWERING, do="give more detail", ts=_at(START, 8))
    session = Writer(root, "session")
    ids = []
    for i in range(14):
        day = START + timedelta(days=i)
        if i % 2 == 0:
            text, hid = "The answer was too long; the user skimmed it.", hypothesis_id(SHORT)
        else:
            text = "Not enough information: the user had to ask for the missing steps."
            hid = hypothesis_id(LONG)
        ids.append(session.append("friction", text, supports=hid, ts=_at(day, 10)).id)
    return ids


def test_the_essays_pendulum_is_flagged_with_its_evidence_ids(tmp_path: Path) -> None:
    root = _root(tmp_path)
    ids = _pendulum(root)
    report = watch(root, start=START, end=START + timedelta(days=20), today=date(2026, 11, 30))
    pendulums = [f for f in report.flags if f.kind == "pendulum"]
    assert len(pendulums) == 1
    flag = pendulums[0]
    assert flag.evidence_ids == ids  # every swing, in order, and nothing else
    assert "13 times" in flag.title and "the same trigger" in flag.detail
    assert (flag.first, flag.last) == (START, START + timedelta(days=13))
    assert set(flag.hypotheses) == {hypothesis_id(SHORT), hypothesis_id(LONG)}
    # Both sides are held out until the human looks.
    assert set(report.held) == {hypothesis_id(SHORT), hypothesis_id(LONG)}
    assert [f.kind for f in report.flags] == ["pendulum"]


def test_drift_json_cites_the_ids_and_acknowledging_releases_the_hold(tmp_path: Path) -> None:
    root = _root(tmp_path)
    ids = _pendulum(root)
    args = ["--root", str(root.path), "drift", "--since", "2026-11-01", "--until", "2026-11-20"]
    out = run_cli(*args, "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["flags"][0]["kind"] == "pendulum"
    assert data["flags"][0]["evidence_ids"] == ids
    assert data["held"] == sorted([hypothesis_id(SHORT), hypothesis_id(LONG)])
    text = run_cli(*args)
    assert text.exit_code == 0
    assert f"evidence: {', '.join(ids)}" in text.output
    assert "held until you look" in text.output

    ack = acknowledge(root, hypothesis_id(SHORT), by="owner")
    assert ack.hold.evidence_ids == ids and ack.record_id.startswith("ev-")
    report = watch(root, start=START, end=START + timedelta(days=18))
    assert set(report.held) == {hypothesis_id(LONG)}  # only what was looked at is released


def test_a_calm_month_flags_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path)
    hid = add_hypothesis(root, SHORT, ts=_at(START, 8)).id
    session = Writer(root, "session")
    texts = [
        "Misread which file the user meant; asked too late.",
        "Answered from an old API version; the user corrected it.",
        "Started writing 'or you could also…' though no options were asked for.",
    ]
    for i in range(28):
        day = START + timedelta(days=i)
        for k in range(i % 3):  # 0, 1 or 2 a day: real days vary
            session.append(
                "friction", texts[(i + k) % 3], supports=hid if k else None, ts=_at(day, 9 + k)
            )
        session.append("raw", f"session {i}", ts=_at(day, 8))
    report = watch(root, start=START, end=START + timedelta(days=27), today=date(2026, 11, 30))
    assert report.flags == []
    assert report.held == {}
    out = run_cli(
        "--root", str(root.path), "drift", "--since", "2026-11-02", "--until", "2026-11-29"
    )
    assert out.exit_code == 0
    assert "0 flag(s)" in out.output and "nothing to flag" in out.output


def test_friction_that_stops_while_sessions_run_is_flagged(tmp_path: Path) -> None:
    root = _root(tmp_path)
    session = Writer(root, "session")
    session.append("friction", "Misread the file.", ts=_at(START, 9))
    raw = [
        session.append("raw", f"work {i}", ts=_at(START + timedelta(days=i), 9)).id
        for i in range(1, 10)
    ]
    session.append("friction", "Misread the file again.", ts=_at(START + timedelta(days=10), 9))
    report = watch(root, start=START, end=START + timedelta(days=10))
    assert [f.kind for f in report.flags] == ["friction-stopped"]
    assert report.flags[0].evidence_ids == raw
    assert "9 days" in report.flags[0].title


def test_a_quota_like_rate_of_friction_is_flagged(tmp_path: Path) -> None:
    root = _root(tmp_path)
    session = Writer(root, "session")
    ids = [
        session.append(
            "friction", f"Self-critique {i}-{k}.", ts=_at(START + timedelta(days=i), 9 + k)
        ).id
        for i in range(7)
        for k in range(3)
    ]
    report = watch(root, start=START, end=START + timedelta(days=6))
    assert [f.kind for f in report.flags] == ["friction-flood"]
    assert report.flags[0].evidence_ids == ids
    assert "exactly 3" in report.flags[0].title


def test_model_fallbacks_are_flagged(tmp_path: Path) -> None:
    root = _root(tmp_path)
    fb = Writer(root, "nightly").append(
        "reflector-fallback", "command reflector: invalid JSON; used rules", ts=_at(START, 3)
    )
    report = watch(root, start=START, end=START)
    assert [(f.kind, f.evidence_ids) for f in report.flags] == [("fallback", [fb.id])]


def test_a_hypothesis_that_flips_and_comes_back_is_flagged() -> None:
    d = START
    steps = [
        (d, "emerging", "e1"),
        (d + timedelta(3), "live", "e2"),
        (d + timedelta(8), "split", "e3"),
        (d + timedelta(12), "live", "e4"),
    ]
    flags = _state_flips({"h-1": steps})
    assert [(f.kind, f.evidence_ids, f.hypotheses) for f in flags] == [
        ("state-flip", ["e2", "e3", "e4"], ["h-1"])
    ]
    # The same path spread over two months is a change of mind, not a flip.
    slow = [(d, "live", "a"), (d + timedelta(15), "split", "b"), (d + timedelta(40), "live", "c")]
    assert _state_flips({"h-1": slow}) == []


@pytest.mark.slow
def test_a_review_waiting_over_a_month_is_flagged(kept_demo: KeptDemo, tmp_path: Path) -> None:
    root = MemoryRoot.resolve(copy_tree(kept_demo.directory, tmp_path / "demo") / "memory")
    from evolving_agent.review.store import list_reviews

    review = next(r for r in list_reviews(root) if r.status == "pending")
    later = review.pending.created.date() + timedelta(days=40)
    report = watch(root, today=later)
    stale = [f for f in report.flags if f.kind == "stale-proposal"]
    assert [f.reviews for f in stale] == [[review.id]]
    assert stale[0].evidence_ids == review.pending.evidence_ids
    # It asks for a decision, so it must not hold the review it asks a decision on.
    assert review.pending.hypothesis not in report.held
    assert not [f for f in watch(root).flags if f.kind == "stale-proposal"]


def test_the_carry_alternating_between_opposite_counter_moves_is_a_pendulum() -> None:
    from evolving_agent.memory.ops.hypotheses import Hypothesis
    from evolving_agent.review.drift import _carry_pendulums

    def h(hid: str, when: str) -> Hypothesis:
        return Hypothesis(id=hid, text=hid, when=when, created=START, updated=START)

    register = {"h-short": h("h-short", ANSWERING), "h-long": h("h-long", ANSWERING)}
    register["h-other"] = h("h-other", "about to quote an error")
    nights = ["h-short", "h-long", "h-other", "h-short", "h-long", "h-short"]
    carries = [(START + timedelta(days=i), hid, f"ev-{i}") for i, hid in enumerate(nights)]
    flags = _carry_pendulums(carries, register)
    assert [(f.kind, f.hypotheses) for f in flags] == [("pendulum", ["h-long", "h-short"])]
    assert flags[0].evidence_ids == ["ev-0", "ev-1", "ev-3", "ev-4", "ev-5"]  # not ev-2
    # The same two carried in long runs, not alternating: no flag.
    calm = ["h-short"] * 5 + ["h-long"] * 5
    carries = [(START + timedelta(days=i), hid, f"ev-{i}") for i, hid in enumerate(calm)]
    assert _carry_pendulums(carries, register) == []


def _drift_over_lives(tmp_path: Path, seeds: range) -> None:
    """Invariant 7 on generated lives: recall ≥ 95% of planted pendulums (tagged or
    untagged, any of the generator's languages), ≤ 5% of calm lives flagged, and every
    pendulum flag tied to the evidence of a planted pendulum (none from coincidence)."""
    from tests.helpers.drift_lives import drift_of
    from tests.helpers.lives import describe, generate_life

    grades = []
    for seed in seeds:
        life = generate_life(seed)
        g = drift_of(life, fresh_root(tmp_path / f"life-{seed}"))
        assert not g.stray and not g.untied, (describe(life), g)
        grades.append((life, g))
    planted = [g for _life, g in grades if g.planted]
    calm = [g for _life, g in grades if not g.planted]
    missed = [describe(life) for life, g in grades if g.planted and not g.flagged]
    assert planted and calm
    assert len(missed) <= 0.05 * len(planted), missed
    assert sum(g.calm_flagged for g in calm) <= 0.05 * len(calm)


def test_drift_flags_the_planted_pendulums_of_20_generated_lives(tmp_path: Path) -> None:
    _drift_over_lives(tmp_path, range(20))


@pytest.mark.slow
def test_drift_flags_the_planted_pendulums_of_200_generated_lives(tmp_path: Path) -> None:
    _drift_over_lives(tmp_path, range(1000, 1200))
