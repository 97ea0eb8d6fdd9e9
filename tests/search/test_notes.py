"""The keep-notes arm carries notes, sessions and history across rounds; forget-team
carries none of them -- both under real bubblewrap, with a real command agent.

The agent leaves a memory everywhere it can (the shared notes file if it has one, its
home, /tmp, its repository's .git, its session's id) and then reads every one back; it
writes what it found into the candidate (``seen.txt``, one line a turn: the number of
lines is the score), so every candidate carries the report of the turns behind it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.search.notes import NOTES_FILE, SAVED, notes_folder
from evolving_agent.search.presets import preset_for
from evolving_agent.search.reducer import RoundPlan, SearchState, decide
from evolving_agent.search.report_render import write_report
from evolving_agent.search.rundir import TurnRecord
from evolving_agent.search.runner import run_search
from tests.helpers.search import PY, config, make_task, records

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")

REMEMBER = r"""
import json, os, pathlib
me = f"r{os.environ['EA_ROUND']}-a{os.environ['EA_AGENT']}-t{os.environ['EA_TURN']}"
session = os.environ["EA_SESSION_ID"]
places = {
    "home": pathlib.Path(os.environ.get("HOME", "/nonexistent")) / ".memory",
    "tmp": pathlib.Path("/tmp/ea-memory"),
    "git": pathlib.Path(".git/ea-memory"),
}
found = {}
notes = os.environ.get("EA_NOTES")
if notes:
    text = pathlib.Path(notes).read_text()
    found["notes"] = sorted({w for w in text.split() if w.startswith("wrote-r")})
    with open(notes, "a") as fh:
        fh.write(f"wrote-{me} (session {session})\n")
for name, path in places.items():
    try:
        found[name] = sorted(set(path.read_text().split()))
    except OSError:
        found[name] = []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as fh:
            fh.write(f"wrote-{me}\n")
    except OSError:
        pass
line = {"me": me, "new": os.environ["EA_NEW_SESSION"], "session": session,
        "own": os.environ["EA_PROMPT"].count("(your turn"), "found": found}
seen = pathlib.Path("seen.txt")
old = seen.read_text() if seen.exists() else ""
seen.write_text(old + json.dumps(line) + "\n")
"""

SCORE = "import pathlib; print(len(pathlib.Path('seen.txt').read_text().splitlines()))\n"


def _run(tmp: Path, policy: str) -> tuple[Path, list[dict[str, Any]]]:
    cand = tmp / "candidate"
    cand.mkdir()
    (cand / "seen.txt").write_text("")
    make_task(tmp)
    (tmp / "judge").mkdir()
    (tmp / "judge" / "score.py").write_text(SCORE)
    (tmp / "agents").mkdir()
    (tmp / "agents" / "remember.py").write_text(REMEMBER)
    cfg = config(
        tmp,
        policy=policy,
        agents=2,
        rounds=3,
        turns=12,
        agent_cmd=f"{PY} {tmp / 'agents' / 'remember.py'}",
        score_cmd=f"{PY} {tmp / 'judge' / 'score.py'}",
        sandbox="bwrap",
    )
    summary = run_search(cfg)
    best = summary.run_dir / "best" / "seen.txt"
    return summary.run_dir, [json.loads(x) for x in best.read_text().splitlines()]


def _round(line: dict[str, Any]) -> int:
    return int(str(line["me"]).split("-")[0][1:])


@needs_bwrap
def test_keep_notes_carries_the_notes_file_sessions_and_history_across_rounds(
    tmp_path: Path,
) -> None:
    run_dir, lines = _run(tmp_path, "keep-notes")
    later = [x for x in lines if _round(x) > 1]
    assert later, lines
    for line in later:
        notes = line["found"]["notes"]
        # What an earlier round's agents wrote, this round's agent read.
        assert any(n.startswith("wrote-r1-") for n in notes), line
        assert line["new"] == "0", line  # the session continued across the boundary
        assert int(line["own"]) >= 2, line  # earlier rounds' candidates still listed
        # The sandbox still forgets the rest: home and /tmp are fresh every turn.
        assert line["found"]["home"] == [] and line["found"]["tmp"] == []
    # Each agent kept one session for the whole run.
    logged = records(run_dir)
    assert {r["agent"] for r in logged} == {1, 2}
    for agent in (1, 2):
        assert len({r["session"] for r in logged if r["agent"] == agent}) == 1
    # The notes file is saved in the run directory, holds every turn, and its folder
    # outside the run directory is gone.
    saved = (run_dir / SAVED).read_text()
    assert sum(1 for w in saved.split() if w.startswith("wrote-r")) == 12
    assert {f"wrote-r{n}-a{a}" for n in (1, 2, 3) for a in (1, 2)} <= {
        w.rsplit("-", 1)[0] for w in saved.split() if w.startswith("wrote-r")
    }
    assert not notes_folder(run_dir).exists()
    assert json.loads((run_dir / "summary.json").read_text())["forgotten"] is None
    # The report calls its boundaries restarts, never forgets.
    md = write_report(run_dir).markdown.read_text()
    assert "Restarts in this run (keep-notes keeps sessions, history and the notes file)" in md


@needs_bwrap
def test_forget_team_carries_no_notes_no_session_and_no_history(tmp_path: Path) -> None:
    run_dir, lines = _run(tmp_path, "forget-team")
    assert {_round(x) for x in lines} == {1, 2, 3}
    for line in lines:
        found = line["found"]
        assert "notes" not in found, line  # no notes file was ever offered
        assert found["home"] == [] and found["tmp"] == [], line
        if _round(line) > 1:
            # Nothing an earlier round wrote is anywhere this round's agent can look.
            assert found["git"] == [] or all(
                w.startswith(f"wrote-r{_round(line)}-") for w in found["git"]
            ), line
    # A round's first turn is a new session, and sessions never span rounds.
    logged = records(run_dir)
    by_round: dict[int, set[str]] = {}
    for r in logged:
        by_round.setdefault(r["round"], set()).add(r["session"])
    assert len(by_round) == 3
    assert not set.intersection(*by_round.values())
    firsts = [x for x in lines if x["new"] == "1"]
    assert {_round(x) for x in firsts} == {1, 2, 3}
    assert not (run_dir / SAVED).exists()
    assert not notes_folder(run_dir).exists()
    assert json.loads((run_dir / "summary.json").read_text())["forgotten"] is True


def test_the_notes_file_is_restored_from_the_run_directory_on_resume(tmp_path: Path) -> None:
    from evolving_agent.search.notes import close_notes, open_notes

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    path = open_notes(run_dir)
    path.write_text(path.read_text() + "a finding\n")
    close_notes(run_dir)
    assert not path.exists()
    again = open_notes(run_dir)  # e.g. a reboot cleared /tmp before `search resume`
    assert again == path and "a finding" in again.read_text()
    assert again.name == NOTES_FILE and run_dir not in again.parents
    close_notes(run_dir)


def test_keep_notes_decides_continued_sessions_at_a_boundary_and_forget_team_does_not() -> None:
    earlier = (
        TurnRecord(
            seq=1, round=1, agent=1, turn=1, round_turn=1, session="s1", new_session=True,
            base_commit="c0", commit="c1", score=5.0, empty=False, lines_changed=1,
            wall_s=0.1, ts="t", improved=False,
        ),
    )  # fmt: skip
    plan = RoundPlan(2, "c0", 5.0, (3, 3))
    state = SearchState(earlier, plan)
    kept = decide(state, preset=preset_for("keep-notes"), agent=1, minimize=False)
    assert kept.run_turn and not kept.new_session and kept.session_id == "s1"
    assert any(v.kind == "own" for v in kept.visible)
    forgot = decide(state, preset=preset_for("forget-team"), agent=1, minimize=False)
    assert forgot.new_session and [v.kind for v in forgot.visible] == ["start"]


def test_keep_notes_refuses_the_ray_executor(tmp_path: Path) -> None:
    from evolving_agent.errors import UsageError
    from evolving_agent.search.config import validate_config

    cand = tmp_path / "candidate"
    cand.mkdir()
    make_task(tmp_path)
    cfg = config(
        tmp_path, policy="keep-notes", executor="ray", score_cmd="true", rounds=2, agent_cmd="true"
    )
    with pytest.raises(UsageError, match="local executor only"):
        validate_config(cfg)
