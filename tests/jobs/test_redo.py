"""``run nightly --redo DATE``: a day reflected again as if its first run never happened.

Real roots, real files; a real second process holds the nightly lock; a real subprocess
dies at each step of a redo (os._exit from a sitecustomize, no hook in the product).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.markers import load_marker, marker_path, save_marker
from evolving_agent.jobs.nightly import TODAY_FILES, NightlyPlan, run_nightly
from evolving_agent.jobs.redo import redo_nightly
from evolving_agent.jobs.redo_journal import journal_path
from evolving_agent.jobs.weekly import run_weekly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.devices import TodayWriter, set_today_writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import (
    add_hypothesis,
    check_register,
    edit_hypothesis,
    fold_root,
)
from evolving_agent.paths import MemoryRoot
from tests.helpers import REPO, run_cli
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import at

D0 = date(2026, 11, 2)
UNTAGGED = "pasted the whole log instead of the failing lines"


def today_files(root: MemoryRoot) -> dict[str, bytes | None]:
    return {
        name: (root.today / name).read_bytes() if (root.today / name).exists() else None
        for name in TODAY_FILES
    }


def everything(root: MemoryRoot) -> dict[str, bytes]:
    """Every file of the root but git's own: what 'nothing changed' compares."""
    return {
        str(p.relative_to(root.path)): p.read_bytes()
        for p in sorted(root.path.rglob("*"))
        if p.is_file() and ".git" not in p.parts and p.suffix != ".lock"
    }


def live(root: MemoryRoot, days: int, pattern: list[int] | None = None) -> list[str]:
    """Three human hypotheses and ``days`` days of friction (``pattern[i]`` picks day i's
    mix); returns the hypothesis ids."""
    ids = [
        add_hypothesis(root, text, ts=at(D0, 8)).id
        for text in (
            "give one answer, not a menu",
            "the user wants long explanations",
            "ask before a wide refactor",
        )
    ]
    session = Writer(root, "session")
    for i in range(days):
        day, mix = D0 + timedelta(days=i), (pattern or [i])[i % len(pattern or [i])]
        if mix % 3 == 0:
            session.append("friction", "offered options unasked", supports=ids[0], ts=at(day, 10))
        if mix % 4 == 1:
            session.append("friction", "user said shorter", contradicts=ids[1], ts=at(day, 11))
        if mix % 5 == 2:
            session.append("friction", "asked first; user glad", supports=ids[2], ts=at(day, 12))
        if mix % 2 == 1:
            session.append("friction", UNTAGGED, ts=at(day, 13))
    return ids


def run_days(root: MemoryRoot, days: int) -> None:
    for i in range(days):
        day = D0 + timedelta(days=i)
        run_nightly(root, day, now=at(day + timedelta(days=1), 3))


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


LAST = D0 + timedelta(days=4)
MORNING = LAST + timedelta(days=1)


def test_a_redo_is_the_run_as_if_the_first_had_never_happened(tmp_path: Path) -> None:
    # The owner reshapes a hypothesis after the morning's bias; the redo's day is what a
    # first run after that edit would have given — and the old bias stays in Evidence.
    first, twin = fresh_root(tmp_path / "a"), fresh_root(tmp_path / "b")
    for r in (first, twin):
        ids = live(r, 5)
        run_days(r, 4)
    run_nightly(first, LAST, now=at(MORNING, 3))
    old_bias = (first.today / "bias.md").read_text()
    for r in (first, twin):
        edit_hypothesis(r, ids[0], do="give the one answer you would pick", ts=at(MORNING, 9))
    result = redo_nightly(first, LAST, now=at(MORNING, 10))
    run_nightly(twin, LAST, now=at(MORNING, 10))
    assert result.status == "redone"
    assert today_files(first) == today_files(twin)
    assert (first.today / "bias.md").read_text() != old_bias
    assert "give the one answer you would pick" in (first.today / "bias.md").read_text()
    assert check_register(first) == [] and fold_root(first) == fold_root(twin)
    redo = [r for r in EvidenceLog(first).iter_all() if r.kind == "job" and r.data["job"] == "redo"]
    assert len(redo) == 1
    assert redo[0].data["bias"] + "\n" == old_bias
    assert redo[0].data["superseded"] == result.superseded
    assert run_cli("--root", str(first.path), "verify").exit_code == 0


def test_a_redo_with_the_same_reflector_gives_the_same_today_and_keeps_the_old_record(
    root: MemoryRoot,
) -> None:
    live(root, 5)
    run_days(root, 5)
    before = today_files(root)
    old = load_marker(root, "nightly", LAST)
    assert old is not None
    result = redo_nightly(root, LAST, now=at(MORNING, 10))
    assert today_files(root) == before
    assert check_register(root) == []
    # The first run's records are all still there, and the run it was is kept beside.
    ids = {r.id for r in EvidenceLog(root).iter_all()}
    assert set(old.record_ids) <= ids and set(result.record_ids) <= ids
    kept = marker_path(root, "nightly", LAST).with_suffix(f".superseded-{old.run_id}.json")
    assert json.loads(kept.read_text())["run_id"] == old.run_id
    assert not journal_path(root, LAST).exists()
    # Twice is fine: each redo supersedes the one before.
    first_redo = load_marker(root, "nightly", LAST)
    assert first_redo is not None and first_redo.run_id != old.run_id
    again = redo_nightly(root, LAST, now=at(MORNING, 11))
    assert again.superseded == first_redo.run_id
    assert today_files(root) == before and check_register(root) == []


def last_plan(root: MemoryRoot) -> NightlyPlan:
    marker = load_marker(root, "nightly", LAST)
    assert marker is not None
    return NightlyPlan.model_validate(marker.plan)


RAISES_LAST = [0, 0, 0, 1, 1]  # untagged friction on the last two days: raised on the last


def test_a_raised_hypothesis_is_withdrawn_and_raised_once_again(root: MemoryRoot) -> None:
    live(root, 5, pattern=RAISES_LAST)
    run_days(root, 5)
    raised = last_plan(root).raised
    assert raised is not None
    redo_nightly(root, LAST, now=at(MORNING, 10))
    assert check_register(root) == []
    withdrawn = [r for r in EvidenceLog(root).iter_all() if r.data.get("withdrawn")]
    assert [r.data["withdrawn"] for r in withdrawn] == [raised.id]
    again = last_plan(root).raised
    assert again is not None and again.id == raised.id and raised.id in fold_root(root)
    raises = [r for r in EvidenceLog(root).iter_all() if r.kind == "hypothesis"
              and r.actor == "nightly"]  # fmt: skip
    assert len(raises) == 2  # raised, withdrawn, raised: the fold holds it once


def test_the_cli_says_what_was_redone(root: MemoryRoot) -> None:
    live(root, 5)
    run_days(root, 5)
    old = load_marker(root, "nightly", LAST)
    assert old is not None
    with freeze_time(at(MORNING, 10)):
        res = run_cli("--root", str(root.path), "run", "nightly", "--redo", LAST.isoformat())
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == f"nightly {LAST}: redone (reflector: rules)"
    assert lines[1] == (
        f"note: redo: supersedes run {old.run_id} (its records and bias stay in Evidence)"
    )
    assert f"the superseded run's bias (kept in Evidence, run {old.run_id}):" in lines


def _refusal(root: MemoryRoot, *args: str, now: datetime | None = None) -> tuple[int, str]:
    before = everything(root)
    with freeze_time(now or at(MORNING, 10)):
        res = run_cli("--root", str(root.path), "run", "nightly", *args)
    assert everything(root) == before, "a refused redo changes nothing"
    return res.exit_code, res.output


def test_redo_refusals_are_one_line_and_change_nothing(root: MemoryRoot) -> None:
    live(root, 5)
    run_days(root, 4)
    assert _refusal(root, "--redo", LAST.isoformat()) == (
        4,
        f"error: the nightly job never ran for {LAST}: there is nothing to redo "
        f"(run 'evolving-agent run nightly --date {LAST}')\n",
    )
    earlier = LAST - timedelta(days=2)
    assert _refusal(root, "--redo", earlier.isoformat()) == (
        4,
        f"error: {LAST - timedelta(days=1)} was reflected after {earlier}: a redo of {earlier} "
        f"would undo it (only the last reflected day, {LAST - timedelta(days=1)}, can be "
        "redone)\n",
    )
    future = MORNING + timedelta(days=1)
    assert _refusal(root, "--redo", future.isoformat()) == (
        4,
        f"error: {future} is in the future (today is {MORNING})\n",
    )
    code, out = _refusal(root, "--redo", "2026-11-31")
    assert code == 2 and "'2026-11-31' is not a real date (November 2026 has 30 days)" in out
    code, out = _refusal(root, "--redo", str(D0), "--date", str(D0))
    assert code == 2 and out.startswith("error: --redo DATE names the day: leave --date out")


def test_a_weekly_run_since_the_day_is_refused(root: MemoryRoot) -> None:
    live(root, 7)
    run_days(root, 7)
    day = D0 + timedelta(days=6)
    run_weekly(root, day, now=at(day + timedelta(days=1), 5))
    code, out = _refusal(root, "--redo", day.isoformat(), now=at(day + timedelta(days=1), 9))
    assert code == 4
    assert out == (
        f"error: the weekly run for {day} read {day}'s reflection after it was written: a "
        f"redo of {day} would leave that run built on words that are gone (nothing was "
        "changed)\n"
    )


def test_an_unfinished_or_pre_redo_run_is_refused(root: MemoryRoot) -> None:
    live(root, 5)
    run_days(root, 5)
    marker = load_marker(root, "nightly", LAST)
    assert marker is not None
    plan = dict(marker.plan)
    plan.pop("before")
    save_marker(root, marker.model_copy(update={"plan": plan}))
    code, out = _refusal(root, "--redo", LAST.isoformat())
    assert (code, out) == (
        4,
        f"error: the nightly run for {LAST} was made before redo kept the state it started "
        "from: it cannot be undone exactly\n",
    )
    save_marker(root, marker.model_copy(update={"phase": "planned"}))
    code, out = _refusal(root, "--redo", LAST.isoformat())
    assert code == 4 and out.startswith(f"error: the nightly run for {LAST} did not finish:")


def test_a_hand_edit_of_the_state_file_is_refused(root: MemoryRoot) -> None:
    live(root, 5)
    run_days(root, 5)
    state = json.loads((root.today / "nightly.json").read_text())
    state["recent_types"] = []
    Writer(root, "human").write("today", "nightly.json", json.dumps(state))
    code, out = _refusal(root, "--redo", LAST.isoformat())
    assert code == 4 and out.startswith("error: today/nightly.json changed since the nightly")


def test_a_hypothesis_the_run_raised_and_the_owner_changed_is_refused(root: MemoryRoot) -> None:
    live(root, 5, pattern=RAISES_LAST)
    run_days(root, 5)
    plan = last_plan(root)
    assert plan.raised is not None
    edit_hypothesis(root, plan.raised.id, do="show the failing lines only", ts=at(MORNING, 9))
    code, out = _refusal(root, "--redo", LAST.isoformat())
    assert (code, out) == (
        4,
        f"error: hypothesis {plan.raised.id}, which the nightly run for {LAST} added, was "
        "changed since: a redo would lose that change (nothing was changed)\n",
    )


def test_a_device_that_does_not_write_today_is_denied(root: MemoryRoot) -> None:
    live(root, 5)
    run_days(root, 5)
    set_today_writer(root, TodayWriter(device="laptop-0000", since=at(MORNING, 1)))
    code, out = _refusal(root, "--redo", LAST.isoformat())
    assert code == 3 and out.startswith("error: ") and out.count("\n") == 1


HOLDER = """
import sys
from pathlib import Path
from evolving_agent.jobs.markers import nightly_lock
from evolving_agent.paths import MemoryRoot
with nightly_lock(MemoryRoot(Path(sys.argv[1]))):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_redo_while_another_nightly_runs_is_refused(root: MemoryRoot) -> None:
    live(root, 5)
    run_days(root, 5)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n", holder.communicate()
        code, out = _refusal(root, "--redo", LAST.isoformat())
        assert code == 3
        assert out.startswith(
            f"error: another nightly run is under way, so {LAST} cannot be redone (user "
        )
        assert f"pid {holder.pid}" in out and out.endswith(
            "nightly.lock); nothing was changed, try again after it\n"
        )
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait()
    assert redo_nightly(root, LAST, now=at(MORNING, 10)).status == "redone"


# A sitecustomize the subprocess imports at start: it makes the redo die (os._exit, as
# a kill would) at one step.  Nothing in the product knows about it.
CRASH = """
import os
from evolving_agent.jobs import redo, redo_journal

step = os.environ["EA_TEST_CRASH"]

def die(*_a, **_k):
    os._exit(137)

if step == "plan":
    redo._plan = die
elif step == "evidence":
    real = redo_journal.append_once
    def after_evidence(*a, **k):
        real(*a, **k)
        die()
    redo_journal.append_once = after_evidence
elif step == "today":
    real_many = redo_journal.Writer.write_many
    def half(self, area, files, **k):
        first = dict(list(files.items())[:1])
        real_many(self, area, first, **k)
        die()
    redo_journal.Writer.write_many = half
elif step == "marker":
    redo_journal.finish = die
"""


@pytest.mark.parametrize("step", ["plan", "evidence", "today", "marker"])
def test_a_redo_killed_at_any_step_leaves_the_old_state_or_ends_in_the_new(
    tmp_path: Path, step: str
) -> None:
    root, twin = fresh_root(tmp_path / "a"), fresh_root(tmp_path / "b")
    for r in (root, twin):
        ids = live(r, 5)
        run_days(r, 5)
        edit_hypothesis(r, ids[2], do="name the files first", ts=at(MORNING, 9))
    redo_nightly(twin, LAST, now=at(MORNING, 10))
    before = everything(root)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(textwrap.dedent(CRASH))
    env = {**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{REPO}", "EA_TEST_CRASH": step}
    cmd = [sys.executable, "-m", "evolving_agent", "--root", str(root.path), "run", "nightly"]
    died = subprocess.run([*cmd, "--redo", LAST.isoformat()], env=env, capture_output=True)
    assert died.returncode == 137, died.stderr
    if step == "plan":  # before the commit point: the old state, every byte of it
        assert everything(root) == before
        assert not journal_path(root, LAST).exists()
    else:  # after it: the journal is there, and the next nightly run finishes it
        assert journal_path(root, LAST).exists()
    # The next nightly run finishes it; so does the same redo, once (not a second redo).
    # Only the death needs a process of its own: the run after it is the CLI in-process.
    finish = ["--redo", LAST.isoformat()] if step in ("today", "plan") else ["--date", str(LAST)]
    again = run_cli("--root", str(root.path), "run", "nightly", *finish)
    assert again.exit_code == 0, again.output
    assert not journal_path(root, LAST).exists()
    if step == "plan":  # nothing had begun: the redo asked again is the whole redo
        assert again.stdout.startswith(f"nightly {LAST}: redone (reflector: rules)")
        assert today_files(root) == today_files(twin)
        return
    assert today_files(root) == today_files(twin)
    assert check_register(root) == [] and fold_root(root) == fold_root(twin)
    kinds = [r.kind for r in EvidenceLog(root).iter_all() if r.actor == "nightly"]
    twin_kinds = [r.kind for r in EvidenceLog(twin).iter_all() if r.actor == "nightly"]
    assert kinds == twin_kinds  # the batch once, not once per attempt
    assert run_cli("--root", str(root.path), "verify").exit_code == 0


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    pattern=st.lists(st.integers(0, 59), min_size=1, max_size=5),
    days=st.integers(1, 6),
    edit=st.sampled_from([None, 0, 1, 2]),
)
def test_any_life_redone_is_the_life_run_once_with_the_later_edit(
    tmp_path_factory: pytest.TempPathFactory, pattern: list[int], days: int, edit: int | None
) -> None:
    base = tmp_path_factory.mktemp("life")
    first, twin = fresh_root(base / "a"), fresh_root(base / "b")
    last, morning = D0 + timedelta(days=days - 1), D0 + timedelta(days=days)
    for r in (first, twin):
        ids = live(r, days, pattern)
        run_days(r, days - 1)
    run_nightly(first, last, now=at(morning, 3))
    if edit is not None:
        try:  # the owner edits what they can: not one the last run retired
            edit_hypothesis(first, ids[edit], when="a reply is due", ts=at(morning, 9))
        except InvalidInput:
            pass
        else:
            edit_hypothesis(twin, ids[edit], when="a reply is due", ts=at(morning, 9))
    redo_nightly(first, last, now=at(morning, 10))
    run_nightly(twin, last, now=at(morning, 10))
    assert today_files(first) == today_files(twin)
    assert check_register(first) == []
    assert fold_root(first) == fold_root(twin)


def test_the_drift_watch_counts_a_redone_night_once(root: MemoryRoot) -> None:
    # Each redo appends the night's job record again; the watch reads the last one.
    # Counted per record, ten redos of one night made a "monopoly" of its carry.
    from evolving_agent.review.drift import watch

    live(root, 5)
    run_days(root, 5)
    for i in range(10):
        redo_nightly(root, LAST, now=at(MORNING, 10) + timedelta(minutes=i))
    report = watch(root, today=MORNING)
    assert [f.kind for f in report.flags if f.kind == "monopoly"] == []
