"""Reflector backends: one contract for all, validation, retry once, fall back to rules."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.errors import UsageError
from evolving_agent.jobs.dispatch import resolve_reflector
from evolving_agent.jobs.nightly import run_nightly
from evolving_agent.jobs.prompts import default_prompt, prompt_loader
from evolving_agent.jobs.weekly import run_weekly
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import Hypothesis, add_hypothesis, check_register
from evolving_agent.memory.ops.today import Carry
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors import Reflector, get_reflector
from evolving_agent.reflectors.answers import NightlyReflection
from evolving_agent.reflectors.context import NightlyContext, WeeklyContext
from tests.helpers import HELPERS, run_cli
from tests.helpers import reflector_fakes as fakes
from tests.helpers.chat_server import ChatServer, Reply, completion
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import at

D0 = date(2026, 11, 2)
FAKE = str(Path(fakes.__file__).resolve())
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


# -- a loopback server that speaks the chat-completions protocol -----------------------------


class FakeOpenAI(ChatServer):
    """Answers POST /v1/chat/completions from a script of modes (last one repeats)."""

    def __init__(self, modes: list[str]) -> None:
        def answer(body: dict[str, Any], n: int) -> Reply:
            mode = modes[min(n, len(modes) - 1)]
            if mode == "not-json-body":
                return 200, {"Content-Type": "application/json"}, b"<html>gateway error</html>"
            return completion(body["model"], fakes.answer(body["messages"][-1]["content"], mode))

        self.modes = modes
        super().__init__(answer)


def use_openai(root: MemoryRoot, base_url: str, *, retries: int | None = None) -> None:
    more = "" if retries is None else f"  retries: {retries}\n"
    root.schedule_file.write_text(
        root.schedule_file.read_text().replace(
            "reflector: rules",
            f"reflector:\n  name: openai\n  base_url: {base_url}\n  model: test-model\n"
            f"  api_key_env: EA_TEST_KEY\n  api_key_for: {base_url}\n  timeout: 10\n{more}",
        )
    )


# -- the contract, once, for every backend --------------------------------------------------------


@pytest.fixture(params=["rules", "command", "openai"])
def backend(request: pytest.FixtureRequest, root: MemoryRoot) -> Iterator[Reflector]:
    if request.param == "openai":
        with FakeOpenAI(["ok"]) as server:
            use_openai(root, server.base_url)
            yield resolve_reflector(root)
        return
    if request.param == "command":
        yield resolve_reflector(root, "command", f"{sys.executable} {FAKE}")
        return
    yield resolve_reflector(root, "rules")


def test_contract_nightly(root: MemoryRoot, backend: Reflector) -> None:
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=hyp.id, ts=at(D0, 10))
    previous = Carry(type="practice", text="Practise it tomorrow: x", hypothesis=hyp.id)
    ctx = NightlyContext(D0, ScopedReader(root, "nightly", (D0, D0)), previous)
    out = backend.nightly(context=ctx)
    assert isinstance(out, NightlyReflection) and out.complete()
    assert out.carry_type != "practice"
    assert out.hypothesis == hyp.id
    assert out.bias is not None and 1 <= len(out.bias.splitlines()) <= 3


def test_contract_weekly(root: MemoryRoot, backend: Reflector) -> None:
    cand = Hypothesis(
        id="h-1", text="give one answer", created=D0, updated=D0, supported_on=[D0], supports=["e"]
    )
    ctx = WeeklyContext(D0, ScopedReader(root, "weekly", (D0 - timedelta(days=6), D0)), [cand])
    out = backend.weekly(context=ctx)
    assert [p.hypothesis for p in out.proposals] == ["h-1"]
    assert out.proposals[0].text


def test_unknown_reflector_lists_the_valid_ones() -> None:
    with pytest.raises(
        UsageError,
        match=r"unknown reflector 'gpt'; choose one of: rules, command, openai, claude, codex",
    ):
        get_reflector("gpt")
    with pytest.raises(UsageError, match="needs --reflector-cmd"):
        get_reflector("command")


# -- fallback ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", ["garbage", "self", "third", "quota", "oneline", "nocite", "empty", "repeat"]
)
def test_invalid_command_output_falls_back_to_rules(
    root: MemoryRoot, mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=hyp.id, ts=at(D0, 10))
    run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    day = D0 + timedelta(days=1)
    Writer(root, "session").append("friction", "offered two options", ts=at(day, 10))
    monkeypatch.setenv("EA_FAKE_MODE", mode)
    monkeypatch.setenv("EA_FAKE_COUNTER", str(tmp_path / "calls"))
    res = CliRunner().invoke(
        cli,
        [
            "run",
            "nightly",
            "--date",
            day.isoformat(),
            "--reflector-cmd",
            f"{sys.executable} {FAKE}",
        ],
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    # The result line itself names the fallback and its cause (issue 11).
    assert lines[0].startswith(
        f"nightly {day}: done (reflector: rules; command reflector output was invalid twice ("
    )
    assert lines[0].endswith("); fell back to rules)")
    assert (tmp_path / "calls").read_text() == "2"  # asked, retried once, then rules
    bias = (root.today / "bias.md").read_text()
    assert "I am" not in bias and "Sure!" not in bias and "at least" not in bias
    assert "assistant tends" not in bias and len(bias.splitlines()) == 2
    carry = json.loads((root.today / "carry.json").read_text())
    assert carry["type"] != "experiment"  # yesterday's type, never repeated
    fallbacks = [r for r in EvidenceLog(root).iter_all() if r.kind == "reflector-fallback"]
    assert len(fallbacks) == 1 and fallbacks[0].data["requested"] == "command"
    job = [r for r in EvidenceLog(root).iter_all() if r.kind == "job"][-1]
    assert job.data["fallback"] is True and job.data["reflector"] == "rules"


@pytest.mark.parametrize("mode", ["invert", "release"])
def test_a_model_may_not_drop_the_counter_move_or_release_high_stakes(
    root: MemoryRoot, mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hyp = add_hypothesis(
        root,
        "before a destructive command I ask first",
        when="about to run rm -rf",
        do="stop and ask the user first",
        stakes="high",
        ts=at(D0, 8),
    )
    Writer(root, "session").append(
        "friction", "deleted build/ unasked", contradicts=hyp.id, ts=at(D0, 10)
    )
    monkeypatch.setenv("EA_FAKE_MODE", mode)
    monkeypatch.setenv("EA_FAKE_COUNTER", str(tmp_path / "calls"))
    reflector = resolve_reflector(root, "command", f"{sys.executable} {FAKE}")
    result = run_nightly(root, D0, reflector=reflector, now=at(D0 + timedelta(days=1), 3))
    assert result.plan.reflector == "rules" and result.plan.fallback is not None
    assert (tmp_path / "calls").read_text() == "2"
    assert result.plan.carry is not None and result.plan.carry.type not in ("release", "refusal")
    bias = result.plan.bias or ""
    assert "stop and ask the user first" in bias and bias.splitlines()[2].startswith("At stake")


def test_a_retry_that_succeeds_keeps_the_model(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=hyp.id, ts=at(D0, 10))
    monkeypatch.setenv("EA_FAKE_MODE", "flaky")
    monkeypatch.setenv("EA_FAKE_COUNTER", str(tmp_path / "calls"))
    reflector = resolve_reflector(root, "command", f"{sys.executable} {FAKE}")
    result = run_nightly(root, D0, reflector=reflector, now=at(D0 + timedelta(days=1), 3))
    assert result.plan.reflector == "command" and result.plan.fallback is None
    assert (tmp_path / "calls").read_text() == "2"
    assert result.plan.carry is not None
    assert result.plan.carry.text == "Model carry: give one answer, not a menu"


def test_openai_over_loopback_reads_untagged_events(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EA_TEST_KEY", "sk-test-123")
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    untagged = Writer(root, "session").append("friction", "gave three options", ts=at(D0, 10))
    with FakeOpenAI(["ok"]) as server:
        use_openai(root, server.base_url)
        res = CliRunner().invoke(cli, ["run", "nightly", "--date", D0.isoformat()])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == f"nightly {D0}: done (reflector: openai)"
    assert len(server.requests) == 1
    req = server.requests[0]
    assert req["model"] == "test-model"
    assert req["messages"][0]["role"] == "system"
    assert untagged.id in req["messages"][1]["content"]
    assert server.headers[0]["authorization"] == "Bearer sk-test-123"
    snap = [r for r in EvidenceLog(root).iter_all() if r.kind == "hypothesis-state"][0]
    assert snap.data["hypothesis"]["supports"] == [untagged.id]  # the model's reading
    assert check_register(root) == []
    assert (root.today / "bias.md").read_text() == (
        "When it comes up, check whether this holds: “give one answer, not a menu”.\n"
        "Grounding: “gave three options”\n"
    )
    assert hyp.id in (root.today / "carry.json").read_text()


# A body that is not a chat completion is a transport failure, not an answer: see
# tests/reflectors/test_fallback.py (no retry with "your answer was refused").
@pytest.mark.parametrize("modes", [["garbage"], ["self", "garbage"]])
def test_openai_malformed_answer_falls_back(root: MemoryRoot, modes: list[str]) -> None:
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    Writer(root, "session").append("friction", "menu again", supports=hyp.id, ts=at(D0, 10))
    with FakeOpenAI(modes) as server:
        use_openai(root, server.base_url)
        res = CliRunner().invoke(cli, ["run", "nightly", "--date", D0.isoformat()])
    assert res.exit_code == 0, res.output
    assert len(server.requests) == 2
    assert "feedback" not in server.requests[0]["messages"][1]["content"].lower()
    assert "Your previous answer was refused" in server.requests[1]["messages"][1]["content"]
    assert "; openai reflector output was invalid twice (" in res.output.splitlines()[0]
    assert (root.today / "bias.md").read_text().startswith("Try it once today")


def test_openai_weekly_wording_is_used(root: MemoryRoot) -> None:
    hyp = add_hypothesis(root, "give one answer, not a menu", ts=at(D0 - timedelta(days=7), 8))
    session = Writer(root, "session")
    # The floor needs its first and last supporting days >= 7 days apart, so one is
    # older than the weekly window: the nightly snapshots in the window carry it.
    for i in (-5, 3, 4, 5, 6):  # a Wednesday, then Thursday to Sunday of the next week
        day = D0 + timedelta(days=i)
        session.append("friction", "held", supports=hyp.id, ts=at(day, 10))
    run_nightly(root, D0 - timedelta(days=5), now=at(D0 - timedelta(days=4), 4))
    run_nightly(root, D0 + timedelta(days=6), now=at(D0 + timedelta(days=7), 4))
    with FakeOpenAI(["ok"]) as server:
        use_openai(root, server.base_url)
        result = run_weekly(
            root,
            D0 + timedelta(days=7),
            reflector=resolve_reflector(root),
            now=at(D0 + timedelta(days=8), 4),
        )
    assert [p.diff.text for p in result.plan.proposals] == ["Habit: give one answer, not a menu"]
    assert result.plan.proposals[0].evidence_ids == [
        r.id for r in EvidenceLog(root).iter_all() if r.kind == "friction"
    ]


def test_unreachable_endpoint_falls_back(root: MemoryRoot) -> None:
    add_hypothesis(root, "give one answer, not a menu", ts=at(D0, 8))
    # No retries: each one waits out the client's backoff, and retrying is tested apart.
    use_openai(root, "http://127.0.0.1:9/v1", retries=0)
    result = run_nightly(root, D0, reflector=resolve_reflector(root), now=at(D0, 23))
    assert result.plan.reflector == "rules"
    assert result.plan.fallback is not None and "cannot reach" in result.plan.fallback


# -- prompt files ---------------------------------------------------------------------


def test_prompts_are_copied_into_the_root_and_user_edits_win(root: MemoryRoot) -> None:
    load = prompt_loader(root)
    assert load("nightly") == default_prompt("nightly")
    edited = root.path / "crons" / "nightly.md"
    assert edited.exists()
    edited.write_text("MY OWN PROMPT\nContext:\n$context\n")
    assert load("nightly").startswith("MY OWN PROMPT")
    ctx = NightlyContext(D0, ScopedReader(root, "nightly", (D0, D0)), None)
    capture = root.path.parent / "prompt.txt"
    script = f"import sys; open({str(capture)!r}, 'w').write(sys.stdin.read()); print('{{}}')"
    refl = resolve_reflector(root, "command", f'{sys.executable} -c "{script}"')
    assert refl.nightly(context=ctx) == NightlyReflection()
    assert capture.read_text().startswith("MY OWN PROMPT\nContext:\n{")


def test_repo_crons_folder_mirrors_the_packaged_defaults() -> None:
    for job in ("nightly", "weekly"):
        assert (REPO / "crons" / f"{job}.md").read_text() == default_prompt(job)


def test_prompts_never_ask_for_quotas_or_scores() -> None:
    for job in ("nightly", "weekly"):
        text = default_prompt(job).lower()
        assert "confidence" not in text and "at least" not in text


def test_malformed_reflector_settings_name_file_and_line(root: MemoryRoot) -> None:
    root.schedule_file.write_text(
        root.schedule_file.read_text().replace(
            "reflector: rules", "reflector:\n  name: openai\n  modle: x\n"
        )
    )
    res = run_cli("--root", str(root.path), "run", "nightly")
    assert res.exit_code == 4
    assert res.stderr == (
        f"error: {root.schedule_file}:10: reflector.modle: Extra inputs are not permitted\n"
    )


def test_a_counter_move_that_reads_like_a_quota_is_quoted_not_fatal(root: MemoryRoot) -> None:
    hyp = add_hypothesis(
        root,
        "tests catch my slips",
        when="about to say done",
        do="run the tests at least once",
        ts=at(D0, 8),
    )
    Writer(root, "session").append(
        "friction", "said done; tests failed", contradicts=hyp.id, ts=at(D0, 10)
    )
    result = run_nightly(root, D0, now=at(D0 + timedelta(days=1), 3))
    bias = result.plan.bias or ""
    assert "When “about to say done”: “run the tests at least once”." in bias


SLIPPED = [
    "Log 3 or more friction events before the end of the day.",
    "Record 3+ friction events today.",
    "Write down 2 or more self-criticisms tonight.",
    "List 3 of your mistakes before the day ends.",
    "Log a friction event after every answer.",
    "I've been over-explaining simple questions.",
    "I have been adding options nobody asked for.",
    "You've been padding answers.",
    "Assistant tends to over-explain.",
]


# Regression: an attack an outside review of the memory layer got through.
@pytest.mark.parametrize("first_line", SLIPPED)
def test_quota_and_self_description_rephrasings_are_refused(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first_line: str
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
        "grounding = '\\nGrounding: “menu again”'\n"
        "out['bias'] = os.environ['EA_FAKE_FIRST'] + ' So: give one answer.' + grounding\n"
        "print(json.dumps(out))\n"
    )
    monkeypatch.setenv("EA_FAKE_FIRST", first_line)
    result = run_cli(
        "run", "nightly", "--date", day.isoformat(), "--reflector-cmd", f"{sys.executable} {fake}"
    )
    assert result.exit_code == 0, result.output
    assert "fell back to rules" in result.output.splitlines()[0]
    assert first_line not in (root.today / "bias.md").read_text()
