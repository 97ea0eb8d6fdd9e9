"""Hypotheses: ids, qualitative states changed only by evidence, the register as a fold."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from evolving_agent.cli import cli
from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import (
    REGISTER_FILE,
    Hypothesis,
    SessionProposal,
    add_hypothesis,
    advance,
    check_register,
    dump_register,
    hypothesis_id,
    list_hypotheses,
    meets_floor,
    parse_register,
    rebuild_register,
)
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import at

D0 = date(2026, 11, 2)


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def h(**kw: object) -> Hypothesis:
    base: dict[str, object] = {"id": "h-1", "text": "t", "created": D0, "updated": D0}
    base.update(kw)
    return Hypothesis.model_validate(base)


def test_cli_add_list_show_exact_output(root: MemoryRoot) -> None:
    runner = CliRunner()
    hid = hypothesis_id("the user wants one answer")
    res = runner.invoke(cli, ["hypothesis", "add", "the user wants one answer"])
    assert res.exit_code == 0
    assert res.output == f"{hid} emerging: the user wants one answer\n"
    res = runner.invoke(cli, ["hypothesis", "list"])
    assert res.output == f"{hid}  emerging   the user wants one answer\n"
    res = runner.invoke(cli, ["hypothesis", "list", "--json"])
    items = json.loads(res.output)
    assert [i["id"] for i in items] == [hid]
    assert items[0]["state"] == "emerging"
    res = runner.invoke(cli, ["hypothesis", "show", hid])
    assert res.exit_code == 0
    today = date.today().isoformat()
    assert res.output.splitlines()[:6] == [
        f"{hid}: the user wants one answer",
        f"state: emerging (since evidence of {today})",
        "origin: human; stakes: low",
        "supported on: -",
        "contradicted on: -",
        "evidence: -",
    ]


def test_cli_shape_edit_retire_split(root: MemoryRoot) -> None:
    runner = CliRunner()
    claim = "before a destructive command I ask first"
    hid = hypothesis_id(claim)
    res = runner.invoke(
        cli,
        [
            "hypothesis",
            "add",
            claim,
            "--when",
            "about to rm -rf",
            "--do",
            "ask first",
            "--stakes",
            "high",
        ],
    )
    assert res.exit_code == 0, res.output
    assert (
        res.output
        == f"{hid} emerging: {claim} (when: about to rm -rf; do: ask first; stakes: high)\n"
    )
    res = runner.invoke(cli, ["hypothesis", "edit", hid, "--when", "about to force-push"])
    assert res.output == (
        f"{hid} emerging: {claim} (when: about to force-push; do: ask first; stakes: high)\n"
    )
    assert runner.invoke(cli, ["hypothesis", "edit", hid]).exit_code == 4  # nothing to change
    res = runner.invoke(cli, ["hypothesis", "split", hid, "ask before rm", "ask before push"])
    assert res.exit_code == 0, res.output
    a, b = hypothesis_id("ask before rm"), hypothesis_id("ask before push")
    assert res.output.splitlines() == [
        f"{hid} split into {a} and {b}",
        f"{a} emerging: ask before rm",
        f"{b} emerging: ask before push",
    ]
    hyps = {h.id: h for h in list_hypotheses(root, from_evidence=True)}
    assert hyps[hid].state == "split" and hyps[hid].children == (a, b)
    assert hyps[a].parent == hid and hyps[a].do == "ask first" and hyps[a].stakes == "high"
    res = runner.invoke(cli, ["hypothesis", "retire", a, "--reason", "never happens"])
    assert res.output == f"{a} retired: never happens\n"
    assert runner.invoke(cli, ["hypothesis", "retire", a, "--reason", "x"]).exit_code == 4
    assert runner.invoke(cli, ["hypothesis", "retire", "h-nope", "--reason", "x"]).exit_code == 4
    res = runner.invoke(cli, ["hypothesis", "add", "a session noticed this", "--as", "session"])
    assert res.exit_code == 0
    assert res.output.endswith(
        "recorded in Evidence; the next nightly run adds it to the register\n"
    )
    assert check_register(root) == []


def test_cli_errors_are_one_line_exit_4(root: MemoryRoot) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["hypothesis", "add", "same belief"])
    res = runner.invoke(cli, ["hypothesis", "add", "Same   belief"])
    assert res.exit_code == 4
    assert (
        res.output
        == f"error: hypothesis {hypothesis_id('same belief')} already exists: Same belief\n"
    )
    res = runner.invoke(cli, ["hypothesis", "show", "h-nope"])
    assert res.exit_code == 4
    assert res.output == (
        "error: no hypothesis with id 'h-nope' (see 'evolving-agent hypothesis list')\n"
    )
    res = runner.invoke(cli, ["hypothesis", "add", "   "])
    assert res.exit_code == 4


def test_list_empty_message(root: MemoryRoot) -> None:
    res = CliRunner().invoke(cli, ["hypothesis", "list"])
    assert res.output == "(no hypotheses yet: add one with 'evolving-agent hypothesis add TEXT')\n"
    assert CliRunner().invoke(cli, ["hypothesis", "list", "--json"]).output == "[]\n"


def test_no_numeric_score_anywhere_in_the_model() -> None:
    schema = Hypothesis.model_json_schema()
    for name, prop in schema["properties"].items():
        types = {prop.get("type")} | {a.get("type") for a in prop.get("anyOf", [])}
        assert not types & {"number", "integer"}, name
    assert not {"score", "confidence", "rating"} & set(schema["properties"])


def test_state_rules_count_distinct_days() -> None:
    d = [D0 + timedelta(days=i) for i in range(8)]
    s1 = advance(h(), d[0], ["e1"], [])
    assert s1 is not None and s1[0].state == "emerging"
    s2 = advance(s1[0], d[1], ["e2"], [])
    assert s2 is not None and s2[0].state == "live"
    # Two complaints on one afternoon are one day: no split, no weakening.
    bad_day = advance(s2[0], d[2], [], ["c1", "c2"])
    assert bad_day is not None and bad_day[0].state == "live"
    split = advance(bad_day[0], d[3], [], ["c3"])
    assert split is not None and split[0].state == "split"
    assert "supported on 2 days, contradicted on 2" in split[1]
    assert advance(s2[0], d[2], ["e2"], []) is None  # the same evidence twice changes nothing


def test_weakening_and_retiring_need_contradiction_on_two_days() -> None:
    d = [D0 + timedelta(days=i) for i in range(4)]
    one = advance(h(), d[0], [], ["c1", "c2", "c3"])
    assert one is not None and one[0].state == "emerging"
    weak = advance(one[0], d[1], [], ["c4"])
    assert weak is not None and weak[0].state == "weakening"
    same_day = advance(weak[0], d[1], [], ["c5"])
    assert same_day is not None and same_day[0].state == "weakening"
    # Not before it was carried as release at least once (docs/cycle.md): still weakening.
    held = advance(same_day[0], d[2], [], ["c6"])
    assert held is not None and held[0].state == "weakening"
    released = same_day[0].model_copy(update={"released": d[1]})
    gone = advance(released, d[2], [], ["c6"])
    assert gone is not None and gone[0].state == "retired"
    assert advance(gone[0], d[3], ["e9"], []) is None  # retired is final


def test_a_high_stakes_rule_never_weakens_splits_or_retires_on_evidence() -> None:
    d = [D0 + timedelta(days=i) for i in range(6)]
    rule = h(stakes="high", released=d[0])
    for i, day in enumerate(d):
        step = advance(rule, day, [f"s{i}"] if i % 3 == 0 else [], [f"c{i}"])
        assert step is not None
        rule = step[0]
        assert rule.state in ("emerging", "live"), (i, step[1])
    assert len(rule.contradicted_on) == 6 and "narrowing" in step[1]


def test_floor_counts_recorded_days_across_two_weeks_and_tolerates_a_minority() -> None:
    days = [D0 + timedelta(days=i) for i in (0, 3, 6, 9, 13)]  # Mon..Sun of the next week
    ok = {"state": "live", "supported_on": days, "supports": ["a"] * 5}
    assert meets_floor(h(**ok, recorded_support=days))
    # The days claimed but all recorded on one day (a bulk import): not enough.
    assert not meets_floor(h(**ok, recorded_support=[days[-1]]))
    assert not meets_floor(h(**ok, recorded_support=days[:4]))
    one_week = [D0 + timedelta(days=i) for i in range(5)]
    assert not meets_floor(
        h(state="live", supported_on=one_week, recorded_support=one_week, supports=["a"] * 5)
    )
    assert meets_floor(h(**ok, recorded_support=days, contradicted_on=[D0 + timedelta(days=1)]))
    two = [D0 + timedelta(days=1), D0 + timedelta(days=2)]
    assert not meets_floor(h(**ok, recorded_support=days, contradicted_on=two))
    assert not meets_floor(h(**{**ok, "state": "split"}, recorded_support=days))


def test_register_cache_equals_fold_and_tampering_is_found(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "answers should be short", ts=at(D0, 8))
    b = add_hypothesis(root, "the user likes examples", ts=at(D0, 8))
    session = Writer(root, "session")
    for i in range(6):
        day = D0 + timedelta(days=i)
        session.append("friction", "cut it short", supports=a.id, ts=at(day, 10))
        if i % 2:
            session.append("friction", "no example wanted", contradicts=b.id, ts=at(day, 11))
        run_nightly(root, day, now=at(day + timedelta(days=1), 3))
    assert check_register(root) == []
    cached = {x.id: x for x in list_hypotheses(root)}
    folded = {x.id: x for x in list_hypotheses(root, from_evidence=True)}
    assert cached == folded
    assert cached[a.id].state == "live"
    assert cached[b.id].state == "retired"
    # An edit behind the writer's back makes the cache disagree with the fold.
    path = root.today / REGISTER_FILE
    data = json.loads(path.read_text())
    data["hypotheses"][0]["state"] = "retired"
    path.write_text(json.dumps(data))
    assert check_register(root) == [f"{a.id}: today/{REGISTER_FILE} disagrees with Evidence"]


def test_show_history_lists_state_changes(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "answers should be short", ts=at(D0, 8))
    session = Writer(root, "session")
    for i in range(2):
        day = D0 + timedelta(days=i)
        session.append("friction", "cut it short", supports=a.id, ts=at(day, 10))
        run_nightly(root, day, now=at(day + timedelta(days=1), 3))
    res = CliRunner().invoke(cli, ["hypothesis", "show", a.id])
    lines = res.output.splitlines()
    assert lines[1] == f"state: live (since evidence of {D0 + timedelta(days=1)})"
    history = lines[lines.index("history:") + 1 :]
    assert len(history) == 2
    assert history[0].startswith(f"  {D0} emerging: added [ev-")
    assert history[1].startswith(
        f"  {D0 + timedelta(days=1)} emerging -> live: supported on 2 distinct days"
    )


def test_a_session_adds_to_evidence_and_the_nightly_job_adopts_it(root: MemoryRoot) -> None:
    h1 = add_hypothesis(root, "I should be bolder", actor="session", ts=at(D0, 9))
    assert h1.origin == "session" and h1.state == "emerging"
    assert list_hypotheses(root) == []  # a session may not write Today's cache
    assert [x.id for x in list_hypotheses(root, from_evidence=True)] == [h1.id]
    assert check_register(root) == []  # pending adoption is not damage
    run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    assert [x.id for x in list_hypotheses(root)] == [h1.id]
    assert check_register(root) == []
    with pytest.raises(InvalidInput):
        add_hypothesis(root, "I should be bolder", actor="session")


def test_rebuild_register_repairs_the_cache(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "answers should be short", ts=at(D0, 8))
    (root.today / REGISTER_FILE).unlink()  # as if a crash hit between record and cache
    assert check_register(root) == [f"{a.id}: in Evidence but missing from today/{REGISTER_FILE}"]
    rebuild_register(root)
    assert check_register(root) == []
    assert [h.id for h in list_hypotheses(root)] == [a.id]


def test_show_dates_a_human_step_on_the_day_it_was_taken(root: MemoryRoot) -> None:
    # A newcomer retired a hypothesis on 2026-11-30 and `hypothesis show` dated the step
    # 2026-10-16, the last day of evidence on it.
    from evolving_agent.memory.ops.hypotheses import retire_hypothesis, show_hypothesis

    a = add_hypothesis(root, "answers should be short", ts=at(D0, 8))
    session = Writer(root, "session")
    for i in range(2):
        day = D0 + timedelta(days=i)
        session.append("friction", "cut it short", supports=a.id, ts=at(day, 10))
        run_nightly(root, day, now=at(day + timedelta(days=1), 3))
    later = D0 + timedelta(days=20)
    retire_hypothesis(root, a.id, "the user changed how they work", ts=at(later, 9))
    steps = [(s.day, s.previous, s.state) for s in show_hypothesis(root, a.id).history]
    assert steps == [
        (D0, None, "emerging"),
        (D0 + timedelta(days=1), "emerging", "live"),
        (later, "live", "retired"),
    ]


# -- one parse of a register text is shared by every reader ----------------------------------

_ids = st.lists(st.from_regex(r"ev-[0-9a-f]{4}", fullmatch=True), max_size=3)
_days = st.lists(st.dates(date(2026, 1, 1), date(2026, 12, 31)), max_size=3)
_proposals = st.none() | st.builds(
    SessionProposal, when=st.none() | st.just("w"), do=st.none() | st.just("d"),
    day=st.dates(date(2026, 1, 1), date(2026, 12, 31)),
)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(
    supports=_ids, contradicts=_ids, cites=_ids, children=_ids, tension=_ids,
    supported_on=_days, contradicted_on=_days, recorded_support=_days, proposal=_proposals,
)  # fmt: skip
def test_a_parsed_register_is_immutable_all_the_way_down(**fields: object) -> None:
    # _parsed_register hands the same objects to every reader of the same text: a field a
    # reader could change in place would change what every later reader of that text reads.
    # Hashing a frozen model hashes every value in it, so it fails on any list, dict or
    # unfrozen model anywhere inside.
    text = dump_register({"h-1": h(**fields)}).decode()
    first, second = parse_register(text)["h-1"], parse_register(text)["h-1"]
    assert first is second  # shared, which is why it must not be changeable
    hash(first)
    assert first == h(**fields)
    hash(first.model_copy(update={"supports": ["ev-1"], "tension": ["h-2"]}))  # an update too
    with pytest.raises(ValidationError):
        first.supports = ()  # type: ignore[misc]
    if first.proposal is not None:
        with pytest.raises(ValidationError):
            first.proposal.day = D0  # type: ignore[misc]
