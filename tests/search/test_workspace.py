"""Agent worktrees an agent vandalises (its ``.git`` pointer, locks, symlinks) stay its own."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from evolving_agent.cli import cli
from tests.helpers.search import git_out, hostile_task


# Regression: an attack an outside review of `search run` got through.
def test_an_agent_deleting_its_workspace_git_pointer_never_commits_into_an_outer_repo(
    tmp_path: Path,
) -> None:
    """An agent that deletes everything, ``.git`` included, left the harness's ``git add
    -A; git commit`` to find the next repository up -- the user's own project, where the
    run directory usually lives -- and commit the whole project into it; the run then
    crashed (exit 1).  Now the turn's work is committed where it belongs."""
    proj = tmp_path / "proj"
    proj.mkdir()
    git_out(proj, "init", "-q")
    (proj / "README").write_text("mine\n")
    git_out(proj, "add", "README")
    git_out(proj, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "mine")
    before = git_out(proj, "rev-parse", "HEAD")
    _, args = hostile_task(proj, "rm -rf ./* ./.git\necho 99 > n.txt\n")
    result = CliRunner().invoke(cli, [*args, "--out", str(proj / "runs" / "r1")])
    assert git_out(proj, "rev-parse", "HEAD") == before
    assert result.exit_code == 0, result.output
    assert "best 99" in result.output or "99" in result.output


# Regression: an attack an outside review of `search run` got through.
def test_an_agent_cannot_point_its_worktree_at_a_repository_of_its_own(tmp_path: Path) -> None:
    """restore_config puts back the config of the repository the ``.git`` pointer names,
    but git follows the registration's ``commondir``: an agent that pointed it at a
    copy of the repository with a filter driver in its config had the harness's ``git
    add`` run the agent's program, commit into the copy, and crash the run (exit 1)."""
    pwned = tmp_path / "PWNED"
    fake = tmp_path / "fake"
    _, args = hostile_task(
        tmp_path,
        "echo $(( $(cat n.txt) + 1 )) > n.txt\n"
        "admin=$(sed 's/^gitdir: //' .git)\n"
        f'cp -r "$admin/../.." {fake}\n'
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


# Regression: an attack an outside review of `search run` got through.
def test_lock_files_an_agent_leaves_in_its_worktree_do_not_crash_the_run(tmp_path: Path) -> None:
    """An agent killed mid-``git commit`` (or a hostile one) leaves ``index.lock``,
    ``HEAD.lock`` or its branch's ref lock: the harness's ``git add -A`` then failed
    and the run died with exit 1."""
    _, args = hostile_task(
        tmp_path,
        "echo $(( $(cat n.txt) + 1 )) > n.txt\n"
        "admin=$(sed 's/^gitdir: //' .git)\n"
        'touch "$admin/index.lock" "$admin/HEAD.lock" "$admin/../../refs/heads/r01-agent-1.lock"\n',
    )
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "best 3 (seed 1, +2)" in result.output


# Regression: an attack an outside review of `search run` got through.
def test_planted_locks_for_the_next_candidate_tags_do_not_crash_the_run(tmp_path: Path) -> None:
    """Candidate tags have predictable names (``cand/r01-a1-t002``): an agent that
    touched ``refs/tags/cand/r01-a1-t00N.lock`` in the shared repository made the
    harness's ``git update-ref`` fail and the run die (exit 1)."""
    _, args = hostile_task(
        tmp_path,
        "echo $(( $(cat n.txt) + 1 )) > n.txt\n"
        "tags=\"$(sed 's/^gitdir: //' .git)/../../refs/tags/cand\"\n"
        'mkdir -p "$tags"; for t in 1 2 3; do touch "$tags/r01-a1-t00$t.lock"; done\n',
    )
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "best 3 (seed 1, +2)" in result.output


# Regression: an attack an outside review of `search run` got through.
def test_an_agent_replacing_its_worktree_by_a_symlink_cannot_reach_another_repository(
    tmp_path: Path,
) -> None:
    """``cd .. && rm -rf agent-1 && ln -s ~/project agent-1``: the harness followed the
    link and committed the turn into that project's repository."""
    victim = tmp_path / "victim"
    victim.mkdir()
    git_out(victim, "init", "-q")
    (victim / "v.txt").write_text("v\n")
    git_out(victim, "add", "v.txt")
    git_out(victim, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "mine")
    before = git_out(victim, "rev-parse", "HEAD")
    _, args = hostile_task(
        tmp_path, f'me=$(basename "$PWD"); cd .. && rm -rf "$me" && ln -s {victim} "$me"\n'
    )
    args[args.index("--turns") + 1] = "1"
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert (victim / ".git").is_dir() and git_out(victim, "rev-parse", "HEAD") == before
    assert git_out(victim, "status", "--porcelain") == ""
