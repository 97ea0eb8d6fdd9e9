"""End-to-end search runs: real git repositories, real agent and scorer subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evolving_agent.search.runner import ProgressEvent, new_dir, run_search
from tests.helpers.search import (
    INCREMENT,
    PY,
    TSP,
    agent_log,
    config,
    git_shim,
    git_verb,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)

CONTRACT_FIELDS = {
    "round",
    "agent",
    "turn",
    "session",
    "commit",
    "score",
    "feedback",
    "empty",
    "lines_changed",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cost_usd",
    "wall_s",
    "ts",
    "improved",
    "forget",
}


def test_forget_team_run_on_the_bundled_example_writes_every_record(tmp_path: Path) -> None:
    events: list[ProgressEvent] = []
    cfg = config(
        tmp_path,
        candidate=TSP / "candidate",
        task=TSP / "task.md",
        score_cmd=f"{PY} {TSP / 'score.py'}",
        minimize=True,
        agent="tsp-example",
        policy="forget-team",
        agents=2,
        rounds=2,
        turns=4,
        seed=1,
    )
    summary = run_search(cfg, progress=events.append)

    rows = records(tmp_path / "run")
    assert len(rows) == 4 and all(CONTRACT_FIELDS <= set(r) for r in rows)
    assert sorted((r["round"], r["agent"]) for r in rows) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert [r["forget"] for r in sorted(rows, key=lambda r: r["seq"]) if r["round"] == 2][
        0
    ] == "rounds"
    # The tsp-example agent beats the naive index-order tour on its first (bold) turn.
    assert summary.best_score < summary.seed_score * 0.5
    assert any(r["improved"] for r in rows)
    data = json.loads((tmp_path / "run" / "summary.json").read_text())
    for key in (
        "best_score",
        "policy",
        "turns",
        "cost_usd",
        "seed_score",
        "direction",
        "rounds",
        "agents",
        "noise_floor",
    ):
        assert key in data
    assert (data["policy"], data["turns"], data["direction"], data["rounds"], data["agents"]) == (
        "forget-team",
        4,
        "minimize",
        2,
        2,
    )
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["policy"] == "forget-team" and run_json["turns"] == 4
    # best/ holds the best candidate: scoring it again gives the best score.
    out = subprocess.run(
        [PY, str(TSP / "score.py"), str(tmp_path / "run" / "best")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert float(out.splitlines()[-1]) == pytest.approx(summary.best_score)
    assert [e.kind for e in events][:2] == ["seed", "round"] and events[-1].kind == "done"
    assert events[-1].turns_done == 4 and events[-1].best_score == summary.best_score


@pytest.mark.parametrize(
    ("policy", "one_commit"), [("forget-team", True), ("fork-and-flush", False)]
)
def test_round_start_workspace_holds_only_the_best_candidate(
    tmp_path: Path, policy: str, one_commit: bool
) -> None:
    (make_candidate(tmp_path) / ".gitignore").write_text("*.tmp\n")
    make_task(tmp_path)
    agent = write_agent(
        tmp_path,
        """
        files = sorted(p.name for p in pathlib.Path(".").iterdir())
        count = subprocess.run(["git", "rev-list", "--count", "HEAD"], capture_output=True,
                               text=True).stdout.strip()
        log(files=files, commits=int(count), value=value())
        # Leave an ignored file behind: it must not reach the next round.
        pathlib.Path("junk.tmp").write_text("x")
        write(value() + int(os.environ["EA_AGENT"]))
    """,
    )
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy=policy,
            agents=2,
            rounds=3,
            turns=6,
        )
    )
    rows = agent_log(tmp_path)
    starts = [r for r in rows if r["EA_NEW_SESSION"] == "1" and r["EA_ROUND"] != "1"]
    assert len(starts) == 4
    for row in starts:
        assert row["files"] == [".git", ".gitignore", "value.txt"]  # nothing else
        assert (row["commits"] == 1) is one_commit
    # Each round starts from the team's best so far (agent 2 adds 2 per turn).
    assert {r["value"] for r in starts if r["EA_ROUND"] == "2"} == {2.0}
    assert {r["value"] for r in starts if r["EA_ROUND"] == "3"} == {4.0}


def test_sessions_are_fresh_per_round_and_continue_within(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, INCREMENT)
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy="forget-team",
            agents=2,
            rounds=2,
            turns=12,
        )
    )
    rows = agent_log(tmp_path)
    assert len(rows) == 12
    sessions: dict[tuple[str, str], set[str]] = {}
    for rnd, agent_no in {(r["EA_ROUND"], r["EA_AGENT"]) for r in rows}:
        mine = sorted(
            (r for r in rows if (r["EA_ROUND"], r["EA_AGENT"]) == (rnd, agent_no)),
            key=lambda r: int(r["EA_TURN"]),
        )
        assert [r["EA_NEW_SESSION"] for r in mine] == ["1", "0", "0"]
        sessions[(rnd, agent_no)] = {r["EA_SESSION_ID"] for r in mine}
        assert len(sessions[(rnd, agent_no)]) == 1  # one session through the round
    all_ids = [next(iter(s)) for s in sessions.values()]
    assert len(set(all_ids)) == 4  # and a different one per agent and round
    # Every agent starts a round with the identical instructions.
    for rnd in ("1", "2"):
        firsts = {
            r["EA_PROMPT"] for r in rows if r["EA_ROUND"] == rnd and r["EA_NEW_SESSION"] == "1"
        }
        assert len(firsts) == 1
    logged = {(r["round"], r["agent"], r["session"]) for r in records(tmp_path / "run")}
    assert logged == {(int(k[0]), int(k[1]), next(iter(v))) for k, v in sessions.items()}


def test_agents_in_a_round_run_in_parallel(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(
        tmp_path,
        """
        start = time.time()
        time.sleep(0.4)
        write(value() + 1)
        log(start=start, end=time.time())
    """,
    )
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy="parallel",
            agents=2,
            turns=4,
        )
    )
    rows = agent_log(tmp_path)
    one = [r for r in rows if r["EA_AGENT"] == "1"]
    two = [r for r in rows if r["EA_AGENT"] == "2"]
    assert len(one) == len(two) == 2
    overlaps = [(a, b) for a in one for b in two if a["start"] < b["end"] and b["start"] < a["end"]]
    assert overlaps


def test_plateau_forget_fires_exactly_when_the_signal_says(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    # Values by the agent's turn: improve, improve, then two non-improving turns.
    agent = write_agent(
        tmp_path,
        """
        plan = [5, 7, 6, 6, 8, 9, 9, 3]
        turn = int(os.environ["EA_TURN"])
        log(value=value())
        write(plan[turn - 1], f"turn {turn}")
    """,
    )
    cmd = write_scorer(tmp_path)
    run_search(
        config(
            tmp_path, score_cmd=cmd, agent_cmd=agent, policy="forget", turns=8, forget_on_plateau=2
        )
    )
    rows = sorted(records(tmp_path / "run"), key=lambda r: r["seq"])
    assert [r["round"] for r in rows] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert [r["forget"] for r in rows] == [None, None, None, None, "plateau", None, None, None]
    assert [r["improved"] for r in rows] == [True, True, False, False, True, True, False, False]
    # Round 2 started from the best (7), not from the last candidate (6).
    assert agent_log(tmp_path)[4]["value"] == 7.0

    # Without the flag the same agent stays in one round: the signal alone forgets.
    (tmp_path / "b").mkdir()
    make_candidate(tmp_path / "b")
    make_task(tmp_path / "b")
    run_search(config(tmp_path / "b", score_cmd=cmd, agent_cmd=agent, policy="forget", turns=8))
    assert {r["round"] for r in records(tmp_path / "b" / "run")} == {1}


def test_within_noise_improvement_does_not_replace_the_best(tmp_path: Path) -> None:
    make_candidate(tmp_path, "10")
    make_task(tmp_path)
    counter = tmp_path / "calls"
    scorer = write_scorer(
        tmp_path,
        f"""
import os, pathlib
cand = pathlib.Path(os.environ["EA_CANDIDATE"])
counter = pathlib.Path({str(counter)!r})
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
noise = [0.0, 0.4, -0.4][n % 3]
print(float((cand / "value.txt").read_text().split()[0]) + noise)
""",
    )
    agent = write_agent(
        tmp_path,
        """
        write([10.5, 12.0][int(os.environ["EA_TURN"]) - 1])
    """,
    )
    summary = run_search(
        config(
            tmp_path, score_cmd=scorer, agent_cmd=agent, policy="single", turns=2, score_repeats=3
        )
    )
    rows = records(tmp_path / "run")
    # sd of [10, 10.4, 9.6] is 0.4: the floor is 1.645 * 0.4 * sqrt(2/3) (was the range, 0.8).
    assert summary.noise_floor == pytest.approx(1.6448536 * 0.4 * (2 / 3) ** 0.5)
    assert summary.seed_score == pytest.approx(10.0)
    assert rows[0]["score"] == pytest.approx(10.5) and len(rows[0]["scores"]) == 3
    assert rows[0]["improved"] is False  # +0.5 is inside the noise floor
    assert rows[1]["improved"] is True
    assert summary.best_score == pytest.approx(12.0)
    assert (tmp_path / "run" / "best" / "value.txt").read_text().startswith("12.0")


def test_budget_in_dollars_stops_the_run_early(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(
        tmp_path,
        """
        write(value() + 1)
        print(json.dumps({"cost_usd": 0.25, "input_tokens": 10, "output_tokens": 5}))
    """,
    )
    summary = run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy="forget",
            rounds=2,
            turns=20,
            budget_usd=1.0,
        )
    )
    rows = records(tmp_path / "run")
    assert len(rows) == 4 and summary.stopped == "budget"
    assert [r["round"] for r in rows] == [1, 1, 2, 2]  # $0.50 per round
    assert summary.cost_usd == pytest.approx(1.0)
    assert summary.input_tokens == 40 and summary.output_tokens == 20


def test_agent_timeout_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(
        tmp_path,
        """
        write(value() + 1)
        if os.environ["EA_TURN"] == "1":
            time.sleep(30)
    """,
    )
    run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy="single",
            turns=2,
            turn_timeout=1,
        )
    )
    rows = records(tmp_path / "run")
    assert "timed out" in rows[0]["error"] and rows[1]["error"] is None
    assert rows[1]["score"] == 2.0  # the edit made before the timeout was still judged


def test_runs_without_any_git_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "EMAIL",
    ):
        monkeypatch.delenv(var, raising=False)
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    summary = run_search(
        config(
            tmp_path,
            score_cmd=write_scorer(tmp_path),
            agent_cmd=agent,
            policy="forget",
            rounds=2,
            turns=2,
        )
    )
    assert summary.best_score == 2.0
    # The turn's commit, fetched from the agent's private workspace into the round repo.
    author = subprocess.run(
        ["git", "log", "-1", "--format=%an <%ae>", summary.best_commit],
        cwd=tmp_path / "run" / "rounds" / "r02" / "repo",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert author == "evolving-agent <evolving-agent@localhost>"


def _noisy_scorer(tmp: Path, noise: str) -> str:
    """value.txt plus noise drawn by call number (deterministic, so tests are exact)."""
    counter = tmp / "calls"
    return write_scorer(
        tmp,
        f"""
import os, pathlib, random
cand = pathlib.Path(os.environ["EA_CANDIDATE"])
counter = pathlib.Path({str(counter)!r})
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
{noise}
print(float((cand / "value.txt").read_text().split()[0]) + noise)
""",
    )


def test_noise_floor_comes_from_the_seed_scores_spread(tmp_path: Path) -> None:
    """A scorer with known noise (sd 2): the floor is z * sd * sqrt(2/n) of the seed's
    repeated scores, near its expected 1.645 * 2 * sqrt(2/10) = 1.47."""
    import statistics

    make_candidate(tmp_path, "100")
    make_task(tmp_path)
    scorer = _noisy_scorer(tmp_path, "noise = random.Random(n).gauss(0, 2)")
    agent = write_agent(tmp_path, "write(value())")  # never changes anything
    summary = run_search(
        config(
            tmp_path, score_cmd=scorer, agent_cmd=agent, policy="single", turns=1, score_repeats=10
        )
    )
    seed = json.loads((tmp_path / "run" / "seed.json").read_text())
    assert len(seed["scores"]) == 10
    sd = statistics.stdev(seed["scores"])
    assert 1.6 < sd < 2.5  # these ten draws of a noise with sd 2 have sd 2.08
    assert seed["noise_floor"] == pytest.approx(1.6448536 * sd * (2 / 10) ** 0.5)
    assert 1.2 < summary.noise_floor < 1.8
    # The range of 10 draws (the old floor) is about 3 sd: it grows with n, this shrinks.
    assert max(seed["scores"]) - min(seed["scores"]) > 4 * summary.noise_floor


def test_the_final_best_is_rescored(tmp_path: Path) -> None:
    """A lucky +5 draw makes a +1 candidate the best; re-scoring shows its real value."""
    make_candidate(tmp_path, "0")
    make_task(tmp_path)
    # Calls: 0-2 the seed (score_repeats 3), 3-5 the candidate, then the re-score.
    scorer = _noisy_scorer(tmp_path, "noise = 5.0 if 3 <= n <= 5 else 0.0")
    agent = write_agent(tmp_path, "write(value() + 1)")
    summary = run_search(
        config(
            tmp_path, score_cmd=scorer, agent_cmd=agent, policy="single", turns=1, score_repeats=3
        )
    )
    assert summary.best_score == pytest.approx(6.0)
    assert summary.best_rescored == pytest.approx(1.0)
    assert summary.best_rescores == pytest.approx([1.0, 1.0, 1.0])
    data = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert data["best_rescored"] == pytest.approx(1.0)


# A newcomer's snag.
def test_new_dir_gives_each_caller_its_own_folder(tmp_path: Path) -> None:
    base = tmp_path / "runs" / "search-20261130-120000-forget-team"
    made = [new_dir(base) for _ in range(3)]
    assert [p.name for p in made] == [base.name, f"{base.name}-2", f"{base.name}-3"]
    assert all(p.is_dir() for p in made)


@pytest.mark.parametrize(
    ("policy", "agents", "body", "per_turn"),
    [
        ("single", 1, "write(value() + 1)", ["status", "commit", "fetch", "archive"]),
        ("single", 1, "pass", ["status"]),
        # A teammate's best is fetched into the workspace before the turn.
        ("team", 2, "write(value() + 1)", ["fetch", "status", "commit", "fetch", "archive"]),
    ],
    ids=["edit", "no-op", "team-edit"],
)
def test_the_git_processes_of_a_turn_are_counted_and_few(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    policy: str,
    agents: int,
    body: str,
    per_turn: list[str],
) -> None:
    # Guards 5.65 git processes per edit turn (issue 32): an edit turn of one agent is
    # status, commit -a, the fetch into the round repository and the judge's archive.
    make_candidate(tmp_path)
    make_task(tmp_path)
    folder, log = git_shim(tmp_path)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    marks: list[int] = []

    def count(event: ProgressEvent) -> None:
        if event.kind == "turn":
            marks.append(len(log.read_text().splitlines()) if log.exists() else 0)

    cfg = config(
        tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=write_agent(tmp_path, body),
        policy=policy, agents=agents, turns=6 * agents, sandbox="none",
    )  # fmt: skip
    run_search(cfg, progress=count)
    calls = [git_verb(line) for line in log.read_text().splitlines()]
    # A step's turns come back together: count whole steps after the first (which
    # builds the workspaces), before the round's end (tags, best/, the summary).
    steps = marks[agents - 1 :: agents]
    for start, end in zip(steps, steps[1:], strict=False):
        assert sorted(calls[start:end]) == sorted(per_turn * agents)
