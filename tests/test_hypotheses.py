"""Hypotheses: ids, qualitative states changed only by evidence, the register as a fold."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.errors import WriteDenied
from evolving_agent.jobs.hypotheses import (
    REGISTER_FILE,
    Hypothesis,
    add_hypothesis,
    advance,
    check_register,
    hypothesis_id,
    list_hypotheses,
    meets_floor,
    rebuild_register,
)
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence import EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot

D0 = date(2026, 11, 2)


def at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour)).astimezone()


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return init_root(tmp_path / "memory")


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
    assert res.output.splitlines()[:5] == [
        f"{hid}: the user wants one answer",
        f"state: emerging (since evidence of {today})",
        "supported on: -",
        "contradicted on: -",
        "evidence: -",
    ]


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


def test_state_rules() -> None:
    d1, d2, d3 = D0, D0 + timedelta(days=1), D0 + timedelta(days=2)
    step = advance(h(), d1, ["e1"], [])
    assert step is not None and step[0].state == "emerging"
    live = advance(step[0], d2, ["e2"], [])
    assert live is not None and live[0].state == "live"
    split = advance(live[0], d3, [], ["c1", "c2"])
    assert split is not None and split[0].state == "split"
    weak = advance(split[0], d3 + timedelta(days=1), [], ["c3"])
    assert weak is not None and weak[0].state == "weakening"
    gone = advance(weak[0], d3 + timedelta(days=2), [], ["c4"])
    assert gone is not None and gone[0].state == "retired"
    assert advance(gone[0], d3 + timedelta(days=3), ["e9"], []) is None  # retired is final
    assert advance(live[0], d3, ["e2"], []) is None  # the same evidence twice changes nothing


def test_floor_needs_five_days_within_fourteen_and_no_contradiction() -> None:
    days = [D0 + timedelta(days=i) for i in (0, 3, 6, 9, 13)]
    assert meets_floor(h(supported_on=days, supports=["a"] * 5))
    spread = [D0 + timedelta(days=i) for i in (0, 3, 6, 9, 14)]
    assert not meets_floor(h(supported_on=spread, supports=["a"] * 5))
    assert not meets_floor(h(supported_on=days[:4], supports=["a"] * 4))
    assert not meets_floor(
        h(supported_on=days, supports=["a"] * 5, contradicts=["c"], contradicted_on=[D0])
    )


def test_register_cache_equals_fold_and_tampering_is_found(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "answers should be short", ts=at(D0, 8))
    b = add_hypothesis(root, "the user likes examples", ts=at(D0, 8))
    session = Writer(root, "session")
    for i in range(4):
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
        f"  {D0 + timedelta(days=1)} emerging -> live: supported on more than one day"
    )


def test_the_session_cannot_add_hypotheses(root: MemoryRoot) -> None:
    with pytest.raises(WriteDenied):
        add_hypothesis(root, "I should be bolder", actor="session")
    kinds = [r.kind for r in EvidenceLog(root).iter_all()]
    assert kinds == ["write-denied"]  # refused before anything else landed
    assert list_hypotheses(root) == [] and check_register(root) == []


def test_rebuild_register_repairs_the_cache(root: MemoryRoot) -> None:
    a = add_hypothesis(root, "answers should be short", ts=at(D0, 8))
    (root.today / REGISTER_FILE).unlink()  # as if a crash hit between record and cache
    assert check_register(root) == [f"{a.id}: in Evidence but missing from today/{REGISTER_FILE}"]
    rebuild_register(root)
    assert check_register(root) == []
    assert [h.id for h in list_hypotheses(root)] == [a.id]
