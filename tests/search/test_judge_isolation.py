"""A judge out of the agents' reach, the reference scorer convention, and a harness an
agent cannot subvert: sealed scorer files, sealed run.json, symlinks, planted git
config, setsid escapees and locked worktrees -- all with real processes and repos."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent import gitcmd
from evolving_agent.cli import cli
from evolving_agent.search import workspace
from evolving_agent.search.judge import Judge, JudgeTampered, seal_command
from evolving_agent.search.runner import resume_search, run_search
from evolving_agent.search.workspace import commit_turn, init_round_repo
from tests.helpers.search import (
    PY,
    config,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)


def _repo(tmp: Path, files: dict[str, str]) -> tuple[Path, str]:
    src = tmp / "src"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(text)
    return tmp / "repo", init_round_repo(tmp / "repo", src, "seed")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


# -- the reference harness's scorer convention ----------------------------------------


def test_the_score_command_runs_inside_the_export_by_default(tmp_path: Path) -> None:
    """A reference-harness scorer reads the candidate by relative path."""
    repo, commit = _repo(tmp_path, {"value.txt": "3\n"})
    cmd = f"{PY} -c \"import os; print(os.getcwd() == os.environ['EA_CANDIDATE'])\"; cat value.txt"
    verdict = Judge(cmd, tmp_path, timeout=30).judge(repo, commit)
    assert (verdict.score, verdict.feedback) == (3.0, "True")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "value.txt").write_text("8\n")
    moved = Judge("cat value.txt", tmp_path, timeout=30, cwd=elsewhere).judge(repo, commit)
    assert moved.score == 8.0


def test_relative_scorer_paths_still_mean_the_trusted_files(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "score.py").write_text("print(42)\n")
    cmd, files = seal_command(f"{PY} tools/score.py --data=tools/score.py {{candidate}}", tmp_path)
    trusted = str((tmp_path / "tools" / "score.py").resolve())
    assert cmd == f"{PY} {trusted} --data={trusted} {{candidate}}"
    assert trusted in files and str(Path(PY).resolve()) in files


def test_scorer_failures_say_why(tmp_path: Path) -> None:
    repo, commit = _repo(tmp_path, {"value.txt": "3\n"})
    missing = Judge("no-such-scorer-xyz", tmp_path, timeout=30).judge(repo, commit)
    assert missing.score is None
    assert missing.feedback.startswith("score command not found (exit 127): ")
    assert "no-such-scorer-xyz" in missing.feedback.splitlines()[0]
    crash = Judge("echo oops >&2; exit 3", tmp_path, timeout=30).judge(repo, commit)
    assert crash.feedback.splitlines()[0] == "score command failed (exit 3): oops"
    quiet = Judge("echo warn >&2", tmp_path, timeout=30).judge(repo, commit)
    assert quiet.feedback == "score command printed nothing (stderr: warn)"


def test_a_seed_that_fails_only_outside_the_export_gets_a_hint(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    result = CliRunner().invoke(cli, [
        "search", "run", "--candidate", str(tmp_path / "candidate"), "--task",
        str(tmp_path / "task.md"), "--score", "cat judge-data.txt", "--agent", "command",
        "--agent-cmd", "true", "--out", str(tmp_path / "run"),
    ])  # fmt: skip
    assert result.exit_code == 4
    assert result.output.startswith(
        "error: score command gave no number on the seed candidate (score command failed "
        "(exit 1): cat: judge-data.txt: No such file or directory): cat judge-data.txt "
        "(it runs inside the candidate's clean export; --score-cwd DIR runs it there)"
    )
    assert not (tmp_path / "run").exists()


# -- the seal ----------------------------------------------------------------------------


def test_an_agent_that_rewrites_the_scorer_is_refused_and_the_run_stops(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    scorer = write_scorer(tmp_path)
    script = tmp_path / "judge" / "score.py"
    original = script.read_text()
    cheat = write_agent(
        tmp_path,
        f"""
        write(value() + 1)
        if os.environ["EA_TURN"] == "2":
            pathlib.Path({str(script)!r}).write_text("print(1000000)\\n")
        """,
    )
    with pytest.raises(JudgeTampered, match="judge-tampered: the scorer changed"):
        run_search(config(tmp_path, score_cmd=scorer, agent_cmd=cheat, policy="single", turns=5))
    rows = records(tmp_path / "run")
    assert [r["score"] for r in rows] == [1.0, None]
    assert rows[1]["error"].startswith("judge-tampered: ") and str(script) in rows[1]["error"]
    # The flag, not the wording, is what resume reads.
    assert [r["tampered"] for r in rows] == [False, True]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["best_score"], summary["stopped"], summary["turns"]) == (
        1.0,
        "judge-tampered",
        2,
    )

    # Resume refuses while the scorer differs (exit 5) and goes on once it is restored.
    refused = CliRunner().invoke(cli, ["search", "resume", str(tmp_path / "run"), "--quiet"])
    assert refused.exit_code == 5 and "judge-tampered" in refused.output
    assert str(script) in refused.output
    script.write_text(original)
    done = resume_search(tmp_path / "run")
    assert done.turns == 5 and done.best_score == 5.0  # never 1,000,000


def test_resume_refuses_an_edited_run_json(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    run_search(config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent,
                      policy="single", turns=2))  # fmt: skip
    run_json = tmp_path / "run" / "run.json"
    data = json.loads(run_json.read_text())
    data["score_cmd"] = "echo 1000000"
    run_json.write_text(json.dumps(data))
    result = CliRunner().invoke(cli, ["search", "resume", str(tmp_path / "run")])
    assert result.exit_code == 5
    assert result.output.startswith("error: judge-tampered: run.json changed since the run")
    seal = tmp_path / "run" / "judge" / "seal.json"
    assert not os.access(seal, os.W_OK) or os.geteuid() == 0  # read-only (root ignores it)
    assert (seal.stat().st_mode & 0o222) == 0


# -- what an agent can leave in its workspace -------------------------------------------


@pytest.mark.parametrize("target", ["/etc/hostname", "../../../../outside.txt"])
def test_a_symlink_leaving_the_candidate_is_a_failed_candidate(tmp_path: Path, target: str) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(
        tmp_path,
        f"""
        write(value() + 1)
        if os.environ["EA_TURN"] == "1":
            os.symlink({target!r}, "link")
        else:
            pathlib.Path("link").unlink(missing_ok=True)
        """,
    )
    summary = run_search(config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent,
                                policy="single", turns=2))  # fmt: skip
    rows = records(tmp_path / "run")
    assert rows[0]["score"] is None and "unsafe symlink: link -> " in rows[0]["feedback"]
    assert rows[0]["error"] is None  # the agent did not fail; its candidate did
    assert rows[1]["score"] == 2.0 and summary.unscored_turns == 1
    again = resume_search(tmp_path / "run")  # and resume is not crashed by it either
    assert again.turns == 2


def test_planted_git_config_never_runs_in_harness_git_calls(tmp_path: Path) -> None:
    """Hooks, fsmonitor and a clean filter planted by the agent: none runs when the
    harness commits, diffs, tags or exports its work."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    ran = tmp_path / "planted-ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f"#!/bin/sh\necho ran >> {ran}\ncat\n")
    evil.chmod(0o755)
    agent = write_agent(
        tmp_path,
        f"""
        for key, setting in (
            ("core.hooksPath", {str(tmp_path)!r}), ("core.fsmonitor", {str(evil)!r}),
            ("filter.evil.clean", {str(evil)!r}), ("diff.external", {str(evil)!r}),
        ):
            subprocess.run(["git", "config", key, setting], check=True)
        pathlib.Path(".gitattributes").write_text("* filter=evil\\n")
        for hook in ("pre-commit", "post-commit", "reference-transaction"):
            (pathlib.Path({str(tmp_path)!r}) / hook).write_text(open({str(evil)!r}).read())
            (pathlib.Path({str(tmp_path)!r}) / hook).chmod(0o755)
        write(value() + 1)
        """,
    )
    summary = run_search(config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent,
                                policy="single", turns=2))  # fmt: skip
    assert summary.best_score == 2.0 and summary.failed_turns == 0
    assert not ran.exists()
    config_file = tmp_path / "run" / "rounds" / "r01" / "repo" / ".git" / "config"
    assert "evil" not in config_file.read_text()


def test_a_setsid_escapee_is_gone_when_the_turn_ends(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    pidfile = tmp_path / "escapee.pid"
    agent = write_agent(
        tmp_path,
        f"""
        child = subprocess.Popen(["setsid", "sleep", "300"], stdout=sys.stdout, stderr=sys.stderr)
        pathlib.Path({str(pidfile)!r}).write_text(str(child.pid))
        write(value() + 1)
        """,
    )
    summary = run_search(config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent,
                                policy="single", turns=1, turn_timeout=120))  # fmt: skip
    # The escapee holds the turn's stdout: had the harness waited for it, the turn would
    # have timed out instead of being scored.
    (row,) = records(tmp_path / "run")
    assert row["error"] is None and row["improved"] and summary.failed_turns == 0
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 60  # a guard against a hang only
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


# -- git work per turn, and worktrees a kill left behind ---------------------------------


def test_a_turn_costs_at_most_three_git_processes_two_for_tracked_edits_one_if_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, base = _repo(tmp_path, {"value.txt": "1\n"})
    calls: list[tuple[str, ...]] = []
    real = gitcmd.git

    def counting(cwd: Path | str, *args: str, **kw: object) -> gitcmd.GitResult:
        calls.append(args)
        return real(cwd, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace, "git", counting)
    (repo / "value.txt").write_text("2\nnew line\n")
    changed = commit_turn(repo, base, "turn 1")
    # Only a tracked file changed: status, commit -a.
    assert (changed.empty, changed.lines_changed, len(calls)) == (False, 3, 2)
    calls.clear()
    (repo / "new.txt").write_text("n\n")
    made = commit_turn(repo, changed.commit, "turn 1b")  # a new file: status, add, commit
    assert (made.empty, made.lines_changed, len(calls)) == (False, 1, 3)
    tree = subprocess.run(["git", "ls-tree", "--name-only", made.commit], cwd=repo,
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert tree.split() == ["new.txt", "value.txt"]
    (repo / "new.txt").unlink()
    changed = commit_turn(repo, made.commit, "turn 1c")
    calls.clear()
    same = commit_turn(repo, changed.commit, "turn 2")
    assert (same.empty, same.commit, len(calls)) == (True, changed.commit, 1)
    calls.clear()
    # An agent that commits by itself costs a diff more, and is measured from the base.
    (repo / "value.txt").write_text("3\n")
    subprocess.run(["git", "commit", "-qam", "mine"], cwd=repo, check=True)
    own = commit_turn(repo, changed.commit, "turn 3")
    assert (own.empty, own.lines_changed, len(calls)) == (False, 3, 2)
    calls.clear()
    (repo / "value.txt").write_text("4\n")
    subprocess.run(["git", "commit", "-qam", "mine again"], cwd=repo, check=True)
    (repo / "extra.txt").write_text("x\n")
    both = commit_turn(repo, own.commit, "turn 4")
    assert (both.lines_changed, len(calls)) == (3, 4)  # status, add, commit, diff


def test_resume_rebuilds_workspaces_left_half_made_by_a_kill(tmp_path: Path) -> None:
    """A kill while a workspace is built leaves it half-made (and a kill mid-commit a
    stale index.lock); resume used to fail on it for good."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    cfg = config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent, policy="parallel",
                 agents=2, turns=4)  # fmt: skip
    run_search(cfg)
    rdir = tmp_path / "run" / "rounds" / "r01"
    # Make it look interrupted: the round open, the last record of agent 2 gone ...
    (rdir / "closed.json").unlink()
    (tmp_path / "run" / "summary.json").unlink()
    log = tmp_path / "run" / "log.jsonl"
    lines = log.read_text().splitlines()
    keep = [line for line in lines if json.loads(line)["seq"] < 4]
    log.write_text("\n".join(keep) + "\n")
    # ... agent 2's private workspace half-made (a kill mid-build), agent 1's with a
    # stale index lock, and a stale lock in the round repository.
    from evolving_agent.search.private import private_root, workspace_path

    root = private_root(tmp_path / "run")
    half = workspace_path(root, 1, 2)
    (half / ".git").mkdir(parents=True)
    stale = workspace_path(root, 1, 1) / ".git" / "index.lock"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    (rdir / "repo" / ".git" / "index.lock").write_text("")
    summary = resume_search(tmp_path / "run")
    assert summary.turns == 4 and summary.failed_turns == 0
    assert len(records(tmp_path / "run")) == 4
    assert not (rdir / "repo" / ".git" / "index.lock").exists()
    assert not root.exists()  # the private folder goes with the finished run


def test_resume_ends_agents_a_killed_harness_left_running(tmp_path: Path) -> None:
    """SIGKILL of the harness leaves its agents running (they lead their own sessions);
    resume finds them by the run's tag and ends them before touching the worktrees."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    pidfile = tmp_path / "agent.pid"
    agent = write_agent(
        tmp_path,
        f"""
        write(value() + 1)
        if not pathlib.Path({str(pidfile)!r}).exists():
            pathlib.Path({str(pidfile)!r}).write_text(str(os.getpid()))
            time.sleep(300)
        """,
    )
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [PY, "-m", "evolving_agent", "search", "run", "--candidate", "candidate", "--task",
         "task.md", "--score", write_scorer(tmp_path), "--agent", "command", "--agent-cmd",
         agent, "--policy", "single", "--turns", "2", "--out", str(out), "--quiet"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60  # a guard against hanging, not a speed assertion
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    orphan = int(pidfile.read_text())
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _alive(orphan)  # the harness is gone, its agent is not
    summary = resume_search(out)
    assert not _alive(orphan)
    assert summary.turns == 2 and summary.failed_turns == 0


def test_a_run_without_a_seal_is_sealed_on_resume_not_restarted(tmp_path: Path) -> None:
    """Killed between seed.json and the seal (or made before runs were sealed): resume
    seals what is there and keeps every recorded turn."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    run_search(config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent,
                      policy="single", turns=2))  # fmt: skip
    judge_dir = tmp_path / "run" / "judge"
    for item in judge_dir.iterdir():
        item.unlink()
    judge_dir.rmdir()
    before = records(tmp_path / "run")
    summary = resume_search(tmp_path / "run")
    assert records(tmp_path / "run") == before and summary.best_score == 2.0
    assert (judge_dir / "seal.json").is_file()


# Workspaces are private (outside the run directory): kill while round 1's first
# workspace is being filled from the round repository, and while round 2's is built.
@pytest.mark.parametrize("trigger", ["r01/repo/.git/refs/ea", "r02/repo/.git"])
def test_a_kill_while_a_round_is_being_set_up_is_recoverable(tmp_path: Path, trigger: str) -> None:
    """A real SIGKILL while a round's worktrees are being made (round 1 keeps the seed
    repository, so a half-made, locked worktree registration stays in it): resume
    finishes every planned turn."""
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, "write(value() + 1)\n")
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [PY, "-m", "evolving_agent", "search", "run", "--candidate", "candidate", "--task",
         "task.md", "--score", write_scorer(tmp_path), "--agent", "command", "--agent-cmd",
         agent, "--policy", "forget-team", "--agents", "4", "--rounds", "2", "--turns", "8",
         "--out", str(out), "--quiet"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    target = out / "rounds"
    deadline = time.monotonic() + 60  # a guard against hanging, not a speed assertion
    while not (target / trigger).exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    summary = resume_search(out)
    assert summary.turns == 8 and summary.rounds == 2 and summary.failed_turns == 0
    rows = records(out)
    assert sorted((r["round"], r["agent"]) for r in rows) == [
        (rnd, a) for rnd in (1, 2) for a in (1, 2, 3, 4)
    ]
