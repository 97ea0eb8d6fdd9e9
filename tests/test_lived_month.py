"""A month lived through the CLI, jobs on their days (freezegun), asserting what boots.

One lived month is built once per module (it is the expensive part) and every test
reads it: no inverted bias, the counter-move present, a grounding quote, a raised
hypothesis from recurring untagged friction, a session's hypothesis adopted, catch-up
after 12 days of downtime, high-stakes protection, settled hypotheses stepping aside,
and proposals over the monthly limit queued the next month.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from freezegun import freeze_time

from evolving_agent.cli import cli
from evolving_agent.jobs.markers import load_marker
from evolving_agent.jobs.nightly import NightlyPlan
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import (
    Hypothesis,
    check_register,
    fold_root,
    hypothesis_id,
)
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from tests.helpers import cli_ok
from tests.helpers.roots import fresh_root

START = date(2026, 11, 2)  # a Monday
DAYS = 29  # through Sunday 11-30
DOWN = range(14, 26)  # 12 days (11-16 .. 11-27): no job runs, friction is still recorded

ONE = (
    "Answer without offering alternatives the user did not ask for",
    "about to list alternatives",
    "give one recommendation; offer alternatives only if asked",
)
LONG = "The user wants long, exhaustive explanations"
REFACTOR = (
    "Ask before refactoring beyond what was requested",
    "about to change code outside the request",
    "ask once before widening the change",
)
DESTRUCT = (
    "Before a destructive command I ask first",
    "about to run rm -rf, force-push or drop a table",
    "stop and ask before running it",
)
LATE = ("Name the file before editing it", "about to edit a file", "say which file first")
SESSION = "I open with a plan nobody asked for"
PLAN_FIRST = {
    3: "Began the answer with 'Let me first organise the problem a little…' before answering.",
    6: "Opened with 'let me first organise the problem' again; the user wanted the answer.",
}


def ids() -> dict[str, str]:
    return {
        "one": hypothesis_id(ONE[0]),
        "long": hypothesis_id(LONG),
        "refactor": hypothesis_id(REFACTOR[0]),
        "destruct": hypothesis_id(DESTRUCT[0]),
        "late": hypothesis_id(LATE[0]),
        "session": hypothesis_id(SESSION),
    }


def script(i: int, h: dict[str, str]) -> list[tuple[str, str | None, str | None]]:
    """(text, supports, contradicts) recorded on day ``i`` of the month."""
    out: list[tuple[str, str | None, str | None]] = []
    if i % 4 != 3:
        out.append((f"day {i}: began 'or you could also…' unasked; cut it", h["one"], None))
    if i in (2, 6, 9):
        out.append((f"day {i}: user said 'shorter please' mid-explanation", None, h["long"]))
    if i in (3, 10, 17):
        out.append(
            (f"day {i}: asked before touching the next module; user glad", h["refactor"], None)
        )
    if i in (5, 12, 19):
        out.append(
            (f"day {i}: asked before a refactor; user said 'just do it'", None, h["refactor"])
        )
    if i == 4:
        out.append(
            (f"day {i}: asked before deleting build/; user: 'obviously, go'", None, h["destruct"])
        )
    if i in (1, 5, 8, 9, 12):
        out.append(
            (f"day {i}: asked before force-pushing main; user relieved", h["destruct"], None)
        )
    if i in (20, 22, 24):
        out.append((f"day {i}: named the file first; user followed easily", h["late"], None))
    if i in PLAN_FIRST:
        out.append((PLAN_FIRST[i], None, None))
    return out


@dataclass
class Month:
    root: MemoryRoot
    h: dict[str, str]
    outputs: dict[date, str] = field(default_factory=dict)  # run nightly output by run day
    monthly: dict[str, str] = field(default_factory=dict)
    boots: dict[date, dict[str, object]] = field(default_factory=dict)

    def plan(self, day: date) -> NightlyPlan:
        marker = load_marker(self.root, "nightly", day)
        assert marker is not None and marker.phase == "done", day
        return NightlyPlan.model_validate(marker.plan)

    def plans(self) -> list[NightlyPlan]:
        return [self.plan(START + timedelta(days=i)) for i in range(DAYS)]

    def register(self) -> dict[str, Hypothesis]:
        return fold_root(self.root)


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> Month:
    root = fresh_root(Path(tmp_path_factory.mktemp("lived")) / "memory")
    m = Month(root=root, h=ids())
    # One frozen clock moved from step to step: each freeze_time() start walks every
    # loaded module, and a month of steps made that most of the module's time.
    with freeze_time(f"{START} 08:00:00") as clock:
        cli_ok(root, "hypothesis", "add", ONE[0], "--when", ONE[1], "--do", ONE[2])
        cli_ok(root, "hypothesis", "add", LONG)
        cli_ok(root, "hypothesis", "add", REFACTOR[0], "--when", REFACTOR[1], "--do", REFACTOR[2])
        cli_ok(
            root,
            "hypothesis",
            "add",
            DESTRUCT[0],
            "--when",
            DESTRUCT[1],
            "--do",
            DESTRUCT[2],
            "--stakes",
            "high",
        )
        # Only one identity diff a month, so the second candidate has to wait.
        policy = (
            (root.canon / "policy.yaml").read_text().replace("monthly_limit: 3", "monthly_limit: 1")
        )
        clock.move_to(f"{START} 08:05:00")
        CliRunner().invoke(
            cli,
            ["--root", str(root.path), "write", "--as", "human", "canon", "policy.yaml"],
            input=policy,
            catch_exceptions=False,
        )
        for i in range(DAYS):
            day = START + timedelta(days=i)
            if i == 18:  # the human adds one during the downtime
                clock.move_to(f"{day} 09:00:00")
                cli_ok(root, "hypothesis", "add", LATE[0], "--when", LATE[1], "--do", LATE[2])
            if i == 20:  # the assistant notices something and raises it itself
                clock.move_to(f"{day} 09:30:00")
                cli_ok(
                    root,
                    "hypothesis",
                    "add",
                    SESSION,
                    "--as",
                    "session",
                    "--when",
                    "about to start with a plan",
                    "--do",
                    "answer first",
                )
            for k, (text, sup, con) in enumerate(script(i, m.h)):
                args = ["friction", text] + (["--supports", sup] if sup else [])
                args += ["--contradicts", con] if con else []
                clock.move_to(f"{day} {10 + k}:00:00")
                cli_ok(root, *args)
            nxt = day + timedelta(days=1)
            if i in DOWN:
                continue
            clock.move_to(f"{nxt} 03:00:00")
            m.outputs[nxt] = cli_ok(root, "run", "nightly")
            m.boots[nxt] = json.loads(cli_ok(root, "boot", "--format", "json"))
            if day.weekday() == 6:
                clock.move_to(f"{nxt} 03:30:00")
                cli_ok(root, "run", "weekly")
        for first in ("2026-12-01", "2027-01-01"):
            clock.move_to(f"{first} 04:00:00")
            m.monthly[first] = cli_ok(root, "run", "monthly")
    return m


def test_every_night_was_reflected_and_the_catch_up_said_so(month: Month) -> None:
    plans = month.plans()
    assert [p.day for p in plans] == [START + timedelta(days=i) for i in range(DAYS)]
    back = START + timedelta(days=DOWN[-1] + 2)  # the first morning a job ran again
    out = month.outputs[back].splitlines()
    first, last = START + timedelta(days=DOWN[0]), START + timedelta(days=DOWN[-1])
    assert f"note: caught up: reflected {first}..{last} first, in order" in out
    # Friction recorded during the downtime was reflected: the late hypothesis was
    # supported on its days although no job ran on them.
    late = month.register()[month.h["late"]]
    assert late.supported_on == tuple(START + timedelta(days=i) for i in (20, 22, 24))
    assert check_register(month.root) == [] and verify_root(month.root).problems == []


def test_biases_never_invert_and_carry_the_counter_move(month: Month) -> None:
    reg = month.register()
    checked = 0
    for p in month.plans():
        assert p.carry is not None and p.bias is not None  # every day had something to carry
        lines = p.bias.splitlines()
        h = reg[p.carry.hypothesis] if p.carry.hypothesis else None
        assert h is not None, p.day
        assert len(lines) == (3 if h.stakes == "high" else 2), p.bias
        assert "tomorrow" not in p.carry.text.lower()
        assert not lines[0].startswith(("I ", "You ", "The assistant"))
        if h.do and p.carry.type != "release":
            assert h.do in lines[0] and (h.when or "") in lines[0], (p.day, p.bias)
            checked += 1
        if h.stakes == "high":
            assert lines[2].startswith("At stake:")
    assert checked >= 20


def test_bias_line_two_quotes_the_last_friction_on_the_hypothesis(month: Month) -> None:
    log = EvidenceLog(month.root)
    for p in month.plans():
        assert p.bias is not None and p.carry is not None
        grounding = p.bias.splitlines()[1]
        if grounding.startswith("No friction on it yet"):
            continue
        assert grounding.startswith("Grounding, ")
        stamp = grounding.split(",")[1].split(":")[0].strip()
        quoted_day = date.fromisoformat(stamp.split(" ")[0])
        assert quoted_day <= p.day
        age = (p.day + timedelta(days=1) - quoted_day).days  # read the morning after
        assert stamp.endswith(f"({age} days ago)") if age > 7 else stamp == str(quoted_day)
        # the first quote (a divided hypothesis quotes the other side after it)
        quote = grounding.split("“", 1)[1].split("”", 1)[0]
        hid = p.carry.hypothesis
        tagged = [  # friction on that hypothesis (or, for a raised one, the untagged it cites)
            r.text
            for r in log.read_day(quoted_day)
            if r.kind == "friction" and (hid in (r.supports, r.contradicts) or not r.supports)
        ]
        assert any(quote.rstrip("…") in t for t in tagged), (p.day, quote)
        assert "\n" not in quote and "<" not in quote and "`" not in quote


def test_recurring_untagged_friction_raises_an_emerging_hypothesis(month: Month) -> None:
    day6 = month.plan(START + timedelta(days=6))
    assert day6.raised is not None
    raised = month.register()[day6.raised.id]
    assert raised.origin == "nightly" and raised.state == "emerging"
    assert "Let me first organise the problem" in raised.text
    cited = EvidenceLog(month.root).find(set(raised.cites))
    assert sorted(r.text for r in cited.values()) == sorted(PLAN_FIRST.values())
    assert {r.day() for r in cited.values()} == {START + timedelta(days=d) for d in PLAN_FIRST}
    assert f"raised {raised.id}" in month.outputs[START + timedelta(days=7)]
    assert sum(1 for p in month.plans() if p.raised is not None) == 1


def test_a_past_day_sees_what_it_would_have_seen(month: Month) -> None:
    late, mine = month.h["late"], month.h["session"]
    carried = {p.day: p.carry.hypothesis for p in month.plans() if p.carry}
    assert all(hid != late for d, hid in carried.items() if d < START + timedelta(days=18))
    adopted = month.plan(START + timedelta(days=20)).adopted
    assert [h.id for h in adopted] == [mine]
    assert all(hid != mine for d, hid in carried.items() if d < START + timedelta(days=20))
    assert month.register()[mine].origin == "session"


def test_high_stakes_is_never_released_on_one_contradicting_day(month: Month) -> None:
    h = month.register()[month.h["destruct"]]
    assert h.stakes == "high" and len(h.contradicted_on) == 1
    types = [p.carry.type for p in month.plans() if p.carry and p.carry.hypothesis == h.id]
    assert types and not {"release", "refusal"} & set(types)


def test_states_follow_distinct_days(month: Month) -> None:
    reg = month.register()
    assert reg[month.h["long"]].state == "retired"  # contradicted on 3 distinct days
    assert reg[month.h["refactor"]].state == "split"  # 3 days each way
    assert reg[month.h["one"]].state == "live"


def test_settled_hypotheses_step_aside_for_unresolved_ones(month: Month) -> None:
    one = month.register()[month.h["one"]]
    assert one.proposed is not None
    after = [p for p in month.plans() if p.day >= one.proposed]
    # On its way to Canon it steps aside: carried again only when 13 mornings passed
    # without it (fair carry: every carriable hypothesis at least once in 14 days).
    mine = [p.day for p in after if p.carry and p.carry.hypothesis == one.id]
    assert after and len(mine) <= 1
    before = [p.day for p in month.plans() if p.carry and p.carry.hypothesis == one.id]
    assert all((b - a).days >= 13 for a, b in zip(before, before[1:], strict=False)
               if a >= one.proposed or b >= one.proposed)
    carried = {p.carry.hypothesis for p in month.plans() if p.carry}
    assert len(carried) >= 5  # not one hypothesis on most nights


def test_over_the_limit_waits_for_next_month(month: Month) -> None:
    dec, jan = month.monthly["2026-12-01"], month.monthly["2027-01-01"]
    assert dec.splitlines()[0] == "monthly proposals of 2026-11: done"
    assert "rev-2026-11-1" in dec and "rev-2026-11-2" not in dec
    assert "note: 1 proposal(s) over the limit wait for next month" in dec.splitlines()
    assert "rev-2026-12-1" in jan
    queued = {
        json.loads(p.read_text())["hypothesis"]
        for p in month.root.area_dir("pending").glob("*.json")
    }
    assert queued == {month.h["one"], month.h["destruct"]}


def test_boot_reads_right_on_the_morning_it_applies(month: Month) -> None:
    for morning, boot in month.boots.items():
        carry = boot["carry"]
        assert isinstance(carry, dict)
        assert carry["date"] == morning.isoformat()
        assert "tomorrow" not in str(carry["text"]).lower()
        assert boot.get("stale") is None


def test_a_stale_bias_shows_its_date(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "stale")
    d0 = START
    with freeze_time(f"{d0} 10:00:00"):
        cli_ok(root, "friction", "misread which file the user meant")
    with freeze_time(f"{d0 + timedelta(days=1)} 03:00:00"):
        cli_ok(root, "run", "nightly")
    with freeze_time(f"{d0 + timedelta(days=2)} 03:00:00"):
        assert "quiet day" in cli_ok(root, "run", "nightly")
        boot = cli_ok(root, "boot")
    written_for = (d0 + timedelta(days=1)).isoformat()
    assert f"## Today's bias (stale: written for {written_for}; nothing newer since)" in boot
