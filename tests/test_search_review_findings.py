"""An outside checker's findings on ``search run`` with real agent CLIs: each test runs
the real CLI on a small task (a number in ``n.txt``) with a small hostile agent script
and real git repositories, files and processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli

PY = sys.executable


def _task(tmp: Path, agent_body: str) -> tuple[Path, list[str]]:
    """A task directory, the agent script, and the ``search run`` arguments."""
    (tmp / "cand").mkdir()
    (tmp / "cand" / "n.txt").write_text("1\n")
    (tmp / "task.md").write_text("Make the number in n.txt larger.\n")
    (tmp / "score.py").write_text(
        "import pathlib\nprint(float(pathlib.Path('n.txt').read_text().split()[0]))\n"
    )
    agent = tmp / "agent.sh"
    agent.write_text("#!/bin/sh\n" + agent_body)
    agent.chmod(0o755)
    args = [
        "search", "run", "--candidate", str(tmp / "cand"), "--task", str(tmp / "task.md"),
        "--score", f"{PY} {tmp / 'score.py'}", "--agent", "command", "--agent-cmd", str(agent),
        "--policy", "single", "--turns", "2", "--turn-timeout", "20", "--quiet",
    ]  # fmt: skip
    return agent, args


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_an_agent_deleting_its_workspace_git_pointer_never_commits_into_an_outer_repo(
    tmp_path: Path,
) -> None:
    """An agent that deletes everything, ``.git`` included, left the harness's ``git add
    -A; git commit`` to find the next repository up -- the user's own project, where the
    run directory usually lives -- and commit the whole project into it; the run then
    crashed (exit 1).  Now the turn's work is committed where it belongs."""
    proj = tmp_path / "proj"
    proj.mkdir()
    _git(proj, "init", "-q")
    (proj / "README").write_text("mine\n")
    _git(proj, "add", "README")
    _git(proj, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "mine")
    before = _git(proj, "rev-parse", "HEAD")
    _, args = _task(proj, "rm -rf ./* ./.git\necho 99 > n.txt\n")
    result = CliRunner().invoke(cli, [*args, "--out", str(proj / "runs" / "r1")])
    assert _git(proj, "rev-parse", "HEAD") == before
    assert result.exit_code == 0, result.output
    assert "best 99" in result.output or "99" in result.output


def test_a_nan_or_negative_reported_cost_does_not_defeat_the_budget(tmp_path: Path) -> None:
    """``{"cost_usd": NaN}`` (valid to Python's json) made the spend NaN, so no budget
    check ever failed and the summary said ``$nan``; ``-5`` made the spend negative
    (``$-30``), buying turns; ``"input_tokens": NaN`` failed an otherwise good turn.
    Such reports count as "not reported"."""
    for report in ('{"cost_usd": NaN, "input_tokens": NaN}', '{"cost_usd": -5}'):
        case = tmp_path / str(len(report))
        case.mkdir()
        _, args = _task(case, f"echo $(( $(cat n.txt) + 1 )) > n.txt\necho '{report}'\n")
        args[args.index("--turns") + 1] = "3"
        result = CliRunner().invoke(cli, [*args, "--budget-usd", "1", "--out", str(case / "r")])
        assert result.exit_code == 0, result.output
        assert "best 4 (seed 1, +3) after 3/3 turns" in result.output
        assert "$nan" not in result.output and "$-" not in result.output, result.output
        assert "$0.0000" in result.output


def test_the_judge_runs_no_filter_a_peer_agent_planted_in_the_shared_repository(
    tmp_path: Path,
) -> None:
    """Agents of a team share one round repository and can write its ``.git`` while a
    peer's candidate is being judged.  ``git archive`` runs smudge filters, so a filter
    driver in ``.git/config`` plus ``* filter=x`` in ``.git/info/attributes`` ran the
    agent's program inside the judge's export (outside every turn and its process
    sweep), and ``* export-ignore`` there emptied a peer's candidate."""
    from evolving_agent.search.judge import Judge
    from evolving_agent.search.workspace import init_round_repo

    src = tmp_path / "src"
    src.mkdir()
    (src / "n.txt").write_text("7\n")
    repo = tmp_path / "repo"
    commit = init_round_repo(repo, src, "seed")
    pwned = tmp_path / "PWNED"
    with (repo / ".git" / "config").open("a") as fh:
        fh.write(f"[filter \"x\"]\n\tsmudge = sh -c 'touch {pwned}; cat'\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=x\n")
    verdict = Judge(f"{PY} -c \"print(open('n.txt').read())\"", tmp_path, 30).judge(repo, commit)
    assert not pwned.exists()
    assert verdict.score == 7.0
    (repo / ".git" / "info" / "attributes").write_text("* export-ignore\n")
    verdict = Judge(f"{PY} -c \"print(open('n.txt').read())\"", tmp_path, 30).judge(repo, commit)
    assert verdict.score == 7.0, verdict.feedback


def test_an_agent_that_deletes_every_file_makes_a_failed_candidate_not_a_crashed_run(
    tmp_path: Path,
) -> None:
    """The export of an empty tree is a tar of zero blocks that ``tarfile`` cannot
    open: ``rm -rf ./*`` crashed every run ("unexpected ReadError", exit 1)."""
    _, args = _task(tmp_path, "rm -rf ./*\n")
    run = tmp_path / "run"
    result = CliRunner().invoke(cli, [*args, "--out", str(run)])
    assert result.exit_code == 0, result.output
    assert "best 1 (seed 1" in result.output
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [row["score"] for row in rows] == [None, None]
    assert "No such file or directory: 'n.txt'" in rows[0]["feedback"]


def test_a_moved_or_copied_run_directory_resumes_on_its_own_repository(tmp_path: Path) -> None:
    """round.json names the round repository by absolute path and git's worktree
    registrations name the original worktrees: resuming a moved run failed with
    "unexpected FileNotFoundError" (exit 1), a copied one with "git worktree add
    failed ... checked out at <the original>"."""
    import shutil

    flag = tmp_path / "fixed"
    _, args = _task(tmp_path, f"[ -e {flag} ] || {{ echo 'invalid API key' >&2; exit 2; }}\n"
                              "echo $(( $(cat n.txt) + 1 )) > n.txt\n")  # fmt: skip
    args[args.index("--turns") + 1] = "6"
    run = tmp_path / "run"
    assert CliRunner().invoke(cli, [*args, "--out", str(run)]).exit_code == 4  # stopped early
    flag.write_text("")
    shutil.copytree(run, tmp_path / "copy", symlinks=True)
    for where in ("copy", "moved"):  # the copy while the original is still there
        if where == "moved":
            run.rename(tmp_path / "moved")
        result = CliRunner().invoke(cli, ["search", "resume", str(tmp_path / where), "--quiet"])
        assert result.exit_code == 0, (where, result.output)
        assert "best 4 (seed 1, +3) after 6/6 turns" in result.output, result.output
        # The repository, in this run directory (workspaces are private, elsewhere).
        assert _git(tmp_path / where / "rounds" / "r01" / "repo", "worktree", "list").startswith(
            str(tmp_path / where)
        )


def test_a_quoted_relative_scorer_path_with_a_space_means_that_file_inside_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--score "python3 'my judge/score.py'"`` failed on the seed ("can't open file
    .../candidate/my judge/score.py"): only unquoted words were made absolute."""
    _, args = _task(tmp_path, "echo $(( $(cat n.txt) + 1 )) > n.txt\n")
    (tmp_path / "my judge").mkdir()
    (tmp_path / "score.py").rename(tmp_path / "my judge" / "score.py")
    args[args.index("--score") + 1] = f"{PY} 'my judge/score.py'"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "best 3 (seed 1, +2)" in result.output
    seal = json.loads((tmp_path / "run" / "judge" / "seal.json").read_text())
    assert str(tmp_path / "my judge" / "score.py") in seal["score_cmd"]


def test_an_agent_cannot_point_its_worktree_at_a_repository_of_its_own(tmp_path: Path) -> None:
    """restore_config puts back the config of the repository the ``.git`` pointer names,
    but git follows the registration's ``commondir``: an agent that pointed it at a
    copy of the repository with a filter driver in its config had the harness's ``git
    add`` run the agent's program, commit into the copy, and crash the run (exit 1)."""
    pwned = tmp_path / "PWNED"
    fake = tmp_path / "fake"
    _, args = _task(
        tmp_path,
        "echo $(( $(cat n.txt) + 1 )) > n.txt\n"
        "admin=.git\n"  # the workspace is a repository of its own now
        f'cp -r "$admin" {fake}\n'
        f"printf '[core]\\n\\tbare = false\\n[filter \"x\"]\\n\\tclean = touch {pwned} && cat\\n'"
        f" > {fake}/config\n"
        f'echo {fake} > "$admin/commondir"\n'
        "echo '* filter=x' > .gitattributes\n",
    )
    args[args.index("--turns") + 1] = "1"
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "best 2 (seed 1, +1)" in result.output
    assert not pwned.exists()


def test_lock_files_an_agent_leaves_in_its_worktree_do_not_crash_the_run(tmp_path: Path) -> None:
    """An agent killed mid-``git commit`` (or a hostile one) leaves ``index.lock``,
    ``HEAD.lock`` or its branch's ref lock: the harness's ``git add -A`` then failed
    and the run died with exit 1."""
    _, args = _task(
        tmp_path,
        "echo $(( $(cat n.txt) + 1 )) > n.txt\n"
        "admin=.git\n"  # the workspace is a repository of its own now
        'touch "$admin/index.lock" "$admin/HEAD.lock" "$admin/refs/heads/r01-agent-1.lock"\n',
    )
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "best 3 (seed 1, +2)" in result.output


def test_planted_locks_for_the_next_candidate_tags_do_not_crash_the_run(tmp_path: Path) -> None:
    """Candidate tags have predictable names (``cand/r01-a1-t002``): an agent that
    touched ``refs/tags/cand/r01-a1-t00N.lock`` in the shared repository made the
    harness's ``git update-ref`` fail and the run die (exit 1)."""
    _, args = _task(
        tmp_path,
        "echo $(( $(cat n.txt) + 1 )) > n.txt\n"
        "tags=.git/refs/tags/cand\n"  # the workspace is a repository of its own now
        'mkdir -p "$tags"; for t in 1 2 3; do touch "$tags/r01-a1-t00$t.lock"; done\n',
    )
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "best 3 (seed 1, +2)" in result.output


def test_turns_that_report_no_cost_do_not_shrink_the_reservation() -> None:
    """An agent reporting its cost only sometimes: the turns without a cost counted as
    $0 in the mean a new turn reserves, so three agents were let in at once and a $1
    budget ended at $1.60 (``--policy parallel --agents 3``, $0.40 every other turn),
    more than one turn's cost over.  The mean is over the turns that reported one."""
    from evolving_agent.search.budget import Admission, TurnLedger
    from evolving_agent.search.reducer import RoundPlan
    from evolving_agent.search.state import TurnRecord

    first = TurnRecord(
        seq=1, round=1, agent=1, turn=1, round_turn=1, session="s", new_session=True,
        base_commit="a", commit="b", score=1.0, empty=False, lines_changed=1,
        cost_usd=0.4, wall_s=0.1, ts="2026-01-01T00:00:00.000+00:00",
    )  # fmt: skip
    second = first.model_copy(update={"seq": 2, "turn": 2, "round_turn": 2, "cost_usd": None})
    records = [first, second]
    plan = RoundPlan(1, "a", 0.0, (4, 4, 4), budget_usd=1.0)
    ledger = TurnLedger()
    admitted = []
    while (answer := ledger.admit(plan, records)) is Admission.GO:
        admitted.append(answer)
    # spent 0.40 + 0.40 reserved per turn in flight: a second turn fits, a third not.
    assert (len(admitted), answer) == (2, Admission.WAIT)


def test_an_agent_replacing_its_worktree_by_a_symlink_cannot_reach_another_repository(
    tmp_path: Path,
) -> None:
    """``cd .. && rm -rf agent-1 && ln -s ~/project agent-1``: the harness followed the
    link and committed the turn into that project's repository."""
    victim = tmp_path / "victim"
    victim.mkdir()
    _git(victim, "init", "-q")
    (victim / "v.txt").write_text("v\n")
    _git(victim, "add", "v.txt")
    _git(victim, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "mine")
    before = _git(victim, "rev-parse", "HEAD")
    _, args = _task(
        tmp_path, f'me=$(basename "$PWD"); cd .. && rm -rf "$me" && ln -s {victim} "$me"\n'
    )
    args[args.index("--turns") + 1] = "1"
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert (victim / ".git").is_dir() and _git(victim, "rev-parse", "HEAD") == before
    assert _git(victim, "status", "--porcelain") == ""
