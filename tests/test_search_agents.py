"""Agent backends: one contract test for all four, plus full runs through fake CLIs.

The fake ``claude`` and ``codex`` executables print the documented output formats:
Claude Code's ``--output-format json`` result object, and Codex's ``exec --json``
JSONL events (``thread.started``, ``turn.completed`` with ``usage``).
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from test_search_helpers import (
    INCREMENT,
    PY,
    TSP,
    config,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)

from evolving_agent.errors import UsageError
from evolving_agent.search.agents import AGENT_NAMES, make_agent
from evolving_agent.search.agents.base import TurnRequest
from evolving_agent.search.runner import run_search
from evolving_agent.search.workspace import init_round_repo

COMMON = """
import json, os, pathlib, sys, uuid
LOG = pathlib.Path(os.environ["FAKE_AGENT_LOG"])
def log(**kw):
    closed = os.path.samestat(os.fstat(0), os.stat(os.devnull))
    with LOG.open("a") as fh:
        fh.write(json.dumps({"argv": sys.argv[1:], "stdin_closed": closed, **kw}) + "\\n")
def bump():
    p = pathlib.Path("value.txt")
    p.write_text(str(float(p.read_text()) + 1) + "\\n")
args = sys.argv[1:]
"""

FAKE_CLAUDE = (
    COMMON
    + """
prompt = args[args.index("-p") + 1]
assert args[args.index("--output-format") + 1] == "json"
if "--session-id" in args:
    sid = args[args.index("--session-id") + 1]
else:
    sid = args[args.index("--resume") + 1]
log(prompt=prompt)
bump()
print(json.dumps({
    "type": "result", "subtype": "success", "is_error": False, "duration_ms": 1200,
    "num_turns": 3, "result": "Made the number bigger.", "session_id": sid,
    "total_cost_usd": 0.0123,
    "usage": {"input_tokens": 100, "cache_creation_input_tokens": 10,
              "cache_read_input_tokens": 50, "output_tokens": 20},
}))
"""
)

FAKE_CODEX = (
    COMMON
    + """
assert args[0] == "exec" and "--json" in args
if args[1] == "resume":
    thread = args[-2]
else:
    thread = "thread-" + uuid.uuid4().hex[:8]
log(prompt=args[-1])
bump()
for event in (
    {"type": "thread.started", "thread_id": thread},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                       "text": "Bumped it."}},
    {"type": "turn.completed", "usage": {"input_tokens": 1000, "cached_input_tokens": 400,
                                         "output_tokens": 200, "reasoning_output_tokens": 50}},
):
    print(json.dumps(event))
"""
)


@pytest.fixture()
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake ``claude`` and ``codex`` on PATH; returns their shared log file."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, body in (("claude", FAKE_CLAUDE), ("codex", FAKE_CODEX)):
        exe = bindir / name
        exe.write_text(f"#!{PY}\n{textwrap.dedent(body)}")
        exe.chmod(0o755)
    log = tmp_path / "fake.log"
    monkeypatch.setenv("PATH", f"{bindir}:{Path(PY).parent}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    return log


def _log(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_backend_contract(name: str, tmp_path: Path, fakes: Path) -> None:
    """Every backend: edits its workspace, keeps a continued session, never reads stdin."""
    src = tmp_path / "src"
    if name == "builtin":
        shutil.copytree(TSP / "candidate", src)
        target = "solve.py"
    else:
        src.mkdir()
        (src / "value.txt").write_text("1\n")
        target = "value.txt"
    workspace = tmp_path / "ws"
    init_round_repo(workspace, src, "seed")
    command = (
        write_agent(
            tmp_path,
            INCREMENT
            + """
closed = os.path.samestat(os.fstat(0), os.stat(os.devnull))
with pathlib.Path(os.environ["FAKE_AGENT_LOG"]).open("a") as fh:
    fh.write(json.dumps({"stdin_closed": closed}) + "\\n")
print(json.dumps({"session_id": os.environ["EA_SESSION_ID"], "input_tokens": 3}))
""",
        )
        if name == "command"
        else None
    )
    agent = make_agent(name, command=command)
    before = (workspace / target).read_text()

    def request(session: str, new: bool, turn: int) -> TurnRequest:
        return TurnRequest(
            workspace=workspace,
            prompt="Improve it.",
            session_id=session,
            new_session=new,
            round=1,
            agent=1,
            turn=turn,
            timeout=30,
            state_dir=tmp_path / "state",
            minimize=True,
        )

    first = agent.run_turn(request=request("11111111-1111-4111-8111-111111111111", True, 1))
    assert first.error is None and first.session_id
    assert (workspace / target).read_text() != before
    second = agent.run_turn(request=request(first.session_id, False, 2))
    assert second.error is None and second.session_id == first.session_id
    if name != "builtin":
        assert all(row["stdin_closed"] for row in _log(fakes))
        assert len(_log(fakes)) == 2


def test_unknown_agent_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="choose one of: builtin, claude, codex, command"):
        make_agent("gpt")


def test_claude_run_records_sessions_cost_and_tokens(tmp_path: Path, fakes: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent="claude",
            policy="forget",
            rounds=2,
            turns=4,
        )
    )
    rows = sorted(records(tmp_path / "run"), key=lambda r: r["seq"])
    calls = _log(fakes)
    flags = [next(a for a in c["argv"] if a in ("--session-id", "--resume")) for c in calls]
    assert flags == ["--session-id", "--resume", "--session-id", "--resume"]
    assert rows[0]["session"] == rows[1]["session"] != rows[2]["session"] == rows[3]["session"]
    resumed = calls[1]["argv"]
    assert resumed[resumed.index("--resume") + 1] == rows[0]["session"]
    assert all(
        r["cost_usd"] == 0.0123
        and r["input_tokens"] == 160
        and r["output_tokens"] == 20
        and r["reasoning_tokens"] is None
        for r in rows
    )
    assert [r["score"] for r in rows] == [1.0, 2.0, 3.0, 4.0]


def test_codex_run_reads_thread_ids_and_prices_tokens(tmp_path: Path, fakes: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent="codex",
            policy="forget",
            rounds=2,
            turns=4,
            token_prices={"input": 2.0, "cached_input": 0.5, "output": 10.0},
        )
    )
    rows = sorted(records(tmp_path / "run"), key=lambda r: r["seq"])
    assert all(str(r["session"]).startswith("thread-") for r in rows)
    assert rows[0]["session"] == rows[1]["session"] != rows[2]["session"]
    calls = _log(fakes)
    assert calls[1]["argv"][:3] == ["exec", "resume", "--json"]
    assert calls[1]["argv"][-2] == rows[0]["session"]
    # (600 uncached * 2.0 + 400 cached * 0.5 + 200 out * 10.0) per million tokens.
    assert rows[0]["cost_usd"] == pytest.approx(0.0034)
    assert (rows[0]["input_tokens"], rows[0]["output_tokens"], rows[0]["reasoning_tokens"]) == (
        1000,
        200,
        50,
    )
