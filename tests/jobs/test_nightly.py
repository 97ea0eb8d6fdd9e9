"""The nightly job: typed carry never repeating, idempotence, crash safety, read scope."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.errors import ReadOutOfScope
from evolving_agent.jobs import nightly as nightly_mod
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import add_hypothesis, check_register
from evolving_agent.memory.ops.today import CARRY_TYPES
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.answers import NightlyReflection, WeeklyReflection
from evolving_agent.reflectors.context import NightlyContext, NightlyState
from evolving_agent.reflectors.rules import RulesReflector
from tests.helpers import HELPERS, run_cli
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import at

D0 = date(2026, 11, 2)


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def snapshot(root: MemoryRoot) -> dict[str, bytes]:
    files = [*root.today.glob("*"), *root.evidence.glob("*")]
    return {str(p): p.read_bytes() for p in sorted(files)}


def jobs_for(root: MemoryRoot, day: date) -> list[Any]:
    return [
        r
        for r in EvidenceLog(root).iter_all()
        if r.kind == "job" and r.data.get("job") == "nightly" and r.data["date"] == day.isoformat()
    ]


def test_21_consecutive_nights_never_repeat_a_type(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    b = add_hypothesis(root, "the user wants long explanations", ts=at(D0, 8))
    c = add_hypothesis(root, "ask before a wide refactor", ts=at(D0, 8))
    session = Writer(root, "session")
    types = []
    for i in range(21):
        day = D0 + timedelta(days=i)
        if i % 3 == 0:
            session.append("friction", "offered options unasked", supports=a.id, ts=at(day, 10))
        if i % 5 == 1:
            session.append("friction", "user said shorter", contradicts=b.id, ts=at(day, 11))
        if i % 7 == 2:
            session.append("friction", "asked first; user glad", supports=c.id, ts=at(day, 12))
        if i % 7 == 5:
            session.append("friction", "user: just do it", contradicts=c.id, ts=at(day, 12))
        result = run_nightly(root, day, now=at(day + timedelta(days=1), 3))
        assert result.plan.carry is not None
        types.append(result.plan.carry.type)
        carry = json.loads((root.today / "carry.json").read_text())
        assert carry["type"] == types[-1] and carry["date"] == str(day + timedelta(days=1))
        bias = (root.today / "bias.md").read_text().splitlines()
        assert 1 <= len(bias) <= 3
        assert not any(line.lower().startswith(("i am", "i'm")) for line in bias)
    assert all(t in CARRY_TYPES for t in types)
    assert all(x != y for x, y in zip(types, types[1:], strict=False)), types
    assert len(set(types)) >= 3, types
    assert len([r for r in EvidenceLog(root).iter_all() if r.kind == "job"]) == 21
    assert check_register(root) == []


def test_a_reflector_asked_for_on_a_day_that_ran_is_said_to_be_unused(root: MemoryRoot) -> None:
    # A newcomer's `--reflector command` on a finished day was silently ignored:
    # "already done (nothing changed) (reflector: rules)".
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    assert run_cli("run", "nightly", "--date", D0.isoformat()).exit_code == 0
    before = snapshot(root)
    again = run_cli(
        "run", "nightly", "--date", D0.isoformat(), "--reflector", "command",
        "--reflector-cmd", "false",
    )  # fmt: skip
    assert again.exit_code == 0
    assert again.stderr == (
        "note: --reflector command was not used: this nightly run already happened with "
        f"rules; a day is reflected once ('run nightly --redo {D0} --reflector command' "
        "reflects it again)\n"
    )
    assert snapshot(root) == before
    same = run_cli("run", "nightly", "--date", D0.isoformat(), "--reflector", "rules")
    assert same.stderr == ""  # the reflector that wrote the day: nothing to say


def test_rerun_for_the_same_date_changes_nothing(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    runner = CliRunner()
    first = runner.invoke(cli, ["run", "nightly", "--date", D0.isoformat()])
    assert first.exit_code == 0, first.output
    before = snapshot(root)
    second = runner.invoke(cli, ["run", "nightly", "--date", D0.isoformat()])
    assert second.exit_code == 0
    assert snapshot(root) == before
    assert second.output == first.output.replace(
        f"nightly {D0}: done (reflector: rules)",
        f"nightly {D0}: already done (nothing changed) (reflector: rules)",
    )
    assert first.output == (
        f"nightly {D0}: done (reflector: rules)\n"
        f"{a.id}: emerging -> emerging (new evidence, state unchanged)\n"
        f"carry: experiment on {a.id}: Experiment for today. When it comes up, check whether"
        " this holds before acting on it: “give one answer, not a menu”.\n"
        "bias:\n"
        "  Try it once today and notice what happens. When it comes up, check whether this"
        " holds before acting on it: “give one answer, not a menu”.\n"
        f"  Grounding, {D0}: “menu again”\n"
    )
    assert len(jobs_for(root, D0)) == 1


def test_an_earlier_date_after_a_later_one_is_refused(root: MemoryRoot) -> None:
    run_nightly(root, D0 + timedelta(days=1), now=at(D0 + timedelta(days=2), 3))
    res = CliRunner().invoke(cli, ["run", "nightly", "--date", D0.isoformat()])
    assert res.exit_code == 4
    assert res.output.startswith(f"error: Today already reflects {D0 + timedelta(days=1)};")


@pytest.mark.parametrize("crash_at", ["_write_today", "append_once"])
def test_rerun_after_a_crash_finishes_consistently(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    session = Writer(root, "session")
    session.append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    day = D0 + timedelta(days=1)
    session.append("friction", "menu once more", supports=a.id, ts=at(day, 10))

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("power cut")

    monkeypatch.setattr(nightly_mod, crash_at, boom)
    with pytest.raises(RuntimeError):
        run_nightly(root, day, now=at(day + timedelta(days=1), 3))
    monkeypatch.undo()
    result = run_nightly(
        root,
        day,
        now=at(
            day + timedelta(days=1),
            3,
        )
        + timedelta(hours=2),
    )
    assert result.status == "resumed"
    assert result.plan.carry is not None and result.plan.carry.type != "experiment"
    assert json.loads((root.today / "carry.json").read_text())["type"] == result.plan.carry.type
    assert len(jobs_for(root, day)) == 1
    states = [r for r in EvidenceLog(root).iter_all() if r.kind == "hypothesis-state"]
    assert len(states) == 2  # one per night, not one per attempt
    assert check_register(root) == []
    assert run_nightly(root, day).status == "already done"


def test_a_day_without_friction_invents_nothing(root: MemoryRoot) -> None:
    res = CliRunner().invoke(cli, ["run", "nightly", "--date", D0.isoformat()])
    assert res.exit_code == 0
    assert res.output == (
        f"nightly {D0}: done (reflector: rules)\n"
        "quiet day: no hypothesis to carry and no friction; bias and carry unchanged\n"
    )
    assert not (root.today / "bias.md").exists() and not (root.today / "carry.json").exists()
    kinds = [r.kind for r in EvidenceLog(root).iter_all()]
    assert kinds == ["job"]


def test_a_session_hypothesis_not_yet_backed_does_not_block_the_rules_carry(
    root: MemoryRoot,
) -> None:
    # Seen on a fresh root: init, two frictions, `hypothesis add --as session`, then
    # `run nightly` exited 1 because the carry had to cite a hypothesis it may not carry.
    own = add_hypothesis(root, "I answer too long", actor="session", ts=at(D0, 8))
    session = Writer(root, "session")
    session.append("friction", "answered in German again", ts=at(D0, 9))
    session.append("friction", "too long answer", ts=at(D0, 10))
    result = run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    carry = result.plan.carry
    assert carry is not None and carry.hypothesis != own.id
    assert "answered in German again" in (root.today / "bias.md").read_text()


def test_quiet_day_with_a_hypothesis_carries_it_with_a_new_type(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    day = D0 + timedelta(days=1)
    result = run_nightly(root, day, now=at(day + timedelta(days=1), 3))
    assert result.plan.changes == []  # no evidence, no state change
    assert result.plan.carry is not None and result.plan.carry.type == "watchpoint"
    assert result.plan.outcome is not None and result.plan.outcome.outcome == "untested"


def test_a_catch_up_carry_is_kept_as_not_seen_and_a_booted_one_as_before(
    root: MemoryRoot,
) -> None:
    """The mornings a downtime passed over are marked in ``today/nightly.json`` (the carry
    fairness reads: seed 54658), and only they: a booted morning's record has no ``seen``
    key, byte for byte what an older build wrote and a redo compares."""
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    state = root.today / "nightly.json"
    assert '"seen"' not in state.read_text(encoding="utf-8")
    late = D0 + timedelta(days=4)  # three nights asleep, then a run that catches up
    result = run_nightly(root, late, now=at(late + timedelta(days=1), 3))
    assert result.caught_up == [D0 + timedelta(days=n) for n in (1, 2, 3)]
    carries = json.loads(state.read_text(encoding="utf-8"))["carries"]
    caught_mornings = {(D0 + timedelta(days=n + 1)).isoformat() for n in (1, 2, 3)}
    assert [c["day"] for c in carries] == [
        (D0 + timedelta(days=n)).isoformat() for n in range(1, 6)
    ]
    for c in carries:
        if c["day"] in caught_mornings:
            assert c["seen"] is False, c
        else:
            assert "seen" not in c, c
    again = NightlyState.model_validate_json(state.read_text(encoding="utf-8"))
    assert [c.seen for c in again.carries] == [c["day"] not in caught_mornings for c in carries]
    assert json.loads(again.model_dump_json())["carries"] == carries


def test_carry_outcome_records_how_yesterday_fared(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    session = Writer(root, "session")
    session.append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    day = D0 + timedelta(days=1)
    slip = session.append("friction", "gave a menu anyway", contradicts=a.id, ts=at(day, 10))
    run_nightly(root, day, now=at(day + timedelta(days=1), 3))
    outcomes = [r for r in EvidenceLog(root).iter_all() if r.kind == "carry-outcome"]
    assert len(outcomes) == 1
    assert outcomes[0].data["outcome"] == "slipped"
    assert outcomes[0].data["contradicts"] == [slip.id]
    assert outcomes[0].data["carry_type"] == "experiment"


class SpyReflector(RulesReflector):
    """Tries to read outside the nightly scope, then answers like rules."""

    def __init__(self) -> None:
        self.errors: list[Exception] = []

    def nightly(self, *, context: NightlyContext, feedback: str | None = None) -> NightlyReflection:
        for attempt in (
            lambda: context.reader.read_text("canon", "identity.yaml"),
            lambda: context.reader.list("canon"),
            lambda: list(context.reader.evidence(context.day - timedelta(days=1))),
            lambda: context.reader.read_text("proposals", "x.json"),
        ):
            try:
                attempt()
            except ReadOutOfScope as exc:
                self.errors.append(exc)
        return super().nightly(context=context, feedback=feedback)

    def weekly(self, **_kw: Any) -> WeeklyReflection:  # pragma: no cover - not used
        raise AssertionError


def test_reflector_context_cannot_read_canon_or_other_days(root: MemoryRoot) -> None:
    spy = SpyReflector()
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    result = run_nightly(root, D0, reflector=spy, now=at(D0 + timedelta(days=1), 3))
    assert result.plan.carry is not None
    assert [str(e) for e in spy.errors] == [
        "read denied: actor 'nightly' may not read layer 'canon' (identity.yaml)",
        "read denied: actor 'nightly' may not read layer 'canon'",
        f"read denied: actor 'nightly' may not read layer 'evidence' "
        f"({D0 - timedelta(days=1)}..{D0 - timedelta(days=1)} is outside {D0}..{D0})",
        "read denied: actor 'nightly' may not read layer 'proposals' (x.json)",
    ]


def test_nightly_never_reads_other_days(root: MemoryRoot) -> None:
    """History is not read: a damaged old day file does not even get opened."""
    a = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    for back in (1, 30, 300):
        # A directory where a day file should be: reading it would raise IsADirectoryError.
        (root.evidence / f"{D0 - timedelta(days=back)}.jsonl").mkdir()
    Writer(root, "session").append("friction", "menu again", supports=a.id, ts=at(D0, 10))
    result = run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    assert result.plan.carry is not None
    with pytest.raises(IsADirectoryError):
        list(EvidenceLog(root).iter_all())  # …which is what reading history would do


def test_run_nightly_as_a_real_subprocess(root: MemoryRoot) -> None:
    add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    cmd = [sys.executable, "-m", "evolving_agent", "--root", str(root.path), "run", "nightly"]
    out = subprocess.run(
        [*cmd, "--date", D0.isoformat(), "--json"], capture_output=True, text=True, check=True
    )
    data = json.loads(out.stdout)
    assert data["status"] == "done"
    # An emerging low-stakes idea is carried as an experiment (docs/cycle.md, the type table).
    assert data["plan"]["carry"]["type"] == "experiment"
    bad = subprocess.run([*cmd, "--date", "2026-13-01"], capture_output=True, text=True)
    assert bad.returncode == 2


@pytest.mark.parametrize("job", ["nightly", "weekly", "monthly"])
def test_a_future_date_is_refused(root: MemoryRoot, job: str) -> None:
    future = date.today() + timedelta(days=1)
    res = CliRunner().invoke(cli, ["run", job, "--date", future.isoformat()])
    assert res.exit_code == 4
    assert res.output == f"error: {future} is in the future (today is {date.today()})\n"


# Regression: an attack an outside review of the memory layer got through.
def test_reflecting_a_day_that_is_not_over_says_what_will_be_missed(root: MemoryRoot) -> None:
    from datetime import date

    hid = run_cli("hypothesis", "add", "I offer menus", "--do", "give one answer").output.split()[0]
    assert run_cli("friction", "menu again", "--supports", hid).exit_code == 0
    today = date.today().isoformat()
    first = run_cli("run", "nightly", "--date", today)
    assert first.exit_code == 0, first.output
    assert f"{today} is not over" in first.output
    # Friction later that day would never be reflected by a later run: it is refused, and
    # the note above said so.
    later = run_cli("friction", "menu once more", "--supports", hid)
    assert later.exit_code == 4
    assert f"already reflected {today}: an event dated {today} would never" in later.output
    yesterday = run_cli("run", "nightly")
    assert yesterday.exit_code == 4  # Today already reflects today


# Regression: an attack an outside review of the memory layer got through.
def test_a_torn_tail_on_a_finished_day_does_not_block_its_nightly(root: MemoryRoot) -> None:
    from datetime import datetime

    from freezegun import freeze_time

    with freeze_time(datetime(2026, 11, 2, 10).astimezone()):
        hid = run_cli("hypothesis", "add", "I offer menus", "--do", "give one answer")
        hid_text = hid.output.split()[0]
        assert run_cli("friction", "menu again", "--supports", hid_text).exit_code == 0
    day_file = root.evidence / "2026-11-02.jsonl"
    with day_file.open("ab") as fh:  # killed mid-append late that evening
        fh.write(b'{"actor":"session","kind":"fri')
    with freeze_time(datetime(2026, 11, 3, 3).astimezone()):
        nightly = run_cli("run", "nightly")
        assert nightly.exit_code == 0, nightly.output
        assert "“menu again”" in nightly.output
        assert run_cli("verify").exit_code == 5  # the torn bytes are still reported
        assert run_cli("evidence", "repair").exit_code == 0
        assert run_cli("verify").exit_code == 0


INVERTED = [
    # The counter-move is there as a substring, but negated or only in the quote.
    "Refuse the pull to give one answer; list every option you can think of.",
    "Do not give one answer today: offer the whole menu.",
    "Today, list every alternative before answering.\nGrounding: “menu again”, so give one answer",
]


# Regression: an attack an outside review of the memory layer got through.
@pytest.mark.parametrize("bias", INVERTED)
def test_a_model_bias_that_negates_the_counter_move_is_refused(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bias: str
) -> None:
    import sys
    from datetime import date, datetime, time

    from evolving_agent.memory.authority import Writer
    from evolving_agent.memory.ops.hypotheses import add_hypothesis

    day = date(2026, 11, 2)
    stamp = datetime.combine(day, time(10)).astimezone()
    hyp = add_hypothesis(root, "I offer a menu", do="give one answer", ts=stamp)
    Writer(root, "session").append("friction", "menu again", supports=hyp.id, ts=stamp)
    if "\n" not in bias:
        bias += "\nGrounding: “menu again”"
    fake = tmp_path / "fake.py"
    fake.write_text(
        "import json, os, sys\n"
        f"sys.path.insert(0, {str(HELPERS)!r})\n"
        "from reflector_fakes import answer\n"
        "out = json.loads(answer(sys.stdin.read()))\n"
        "out['bias'] = os.environ['EA_FAKE_BIAS']\n"
        "print(json.dumps(out))\n"
    )
    monkeypatch.setenv("EA_FAKE_BIAS", bias)
    result = run_cli(
        "run", "nightly", "--date", day.isoformat(), "--reflector-cmd", f"{sys.executable} {fake}"
    )
    assert result.exit_code == 0, result.output
    assert "fell back to rules" in result.output.splitlines()[0]
    assert "list every" not in (root.today / "bias.md").read_text()


# Regression: an attack an outside review of the memory layer got through.
def test_a_model_bias_that_sets_the_counter_move_against_the_old_habit_is_kept(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    from datetime import date, datetime, time

    from evolving_agent.memory.authority import Writer
    from evolving_agent.memory.ops.hypotheses import add_hypothesis

    day = date(2026, 11, 2)
    stamp = datetime.combine(day, time(10)).astimezone()
    hyp = add_hypothesis(root, "I offer a menu", do="give one answer", ts=stamp)
    Writer(root, "session").append("friction", "menu again", supports=hyp.id, ts=stamp)
    fake = tmp_path / "fake.py"
    fake.write_text(
        "import json, os, sys\n"
        f"sys.path.insert(0, {str(HELPERS)!r})\n"
        "from reflector_fakes import answer\n"
        "out = json.loads(answer(sys.stdin.read()))\n"
        "out['bias'] = os.environ['EA_FAKE_BIAS']\n"
        "print(json.dumps(out))\n"
    )
    good = "Instead of a menu, give one answer.\nGrounding: “menu again”"
    monkeypatch.setenv("EA_FAKE_BIAS", good)
    result = run_cli(
        "run", "nightly", "--date", day.isoformat(), "--reflector-cmd", f"{sys.executable} {fake}"
    )
    assert result.output.splitlines()[0] == f"nightly {day}: done (reflector: command)"
    assert (root.today / "bias.md").read_text().startswith("Instead of a menu, give one answer.")
