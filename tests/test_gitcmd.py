"""The hardened git runner (``gitcmd.py``): hooks never run, paths unquoted, errors say why."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evolving_agent.gitcmd import git


def _repo_with_traps(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    trap = tmp_path / "trap-fired"
    hook_dir = tmp_path / "hooks"
    hook_dir.mkdir()
    for name in ("pre-commit", "post-commit", "commit-msg"):
        hook = hook_dir / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {trap}\n")
        hook.chmod(0o755)
    monitor = tmp_path / "fsmonitor.sh"
    monitor.write_text(f"#!/bin/sh\necho fsmonitor >> {trap}\n")
    monitor.chmod(0o755)
    for key, value in (
        ("core.hooksPath", str(hook_dir)),
        ("core.fsmonitor", str(monitor)),
        ("user.name", "x"),
        ("user.email", "x@y"),
    ):
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    return repo, trap


def test_planted_hooks_and_fsmonitor_never_run_inside_our_git_calls(tmp_path: Path) -> None:
    repo, trap = _repo_with_traps(tmp_path)
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "status", "--porcelain")
    git(repo, "diff", "HEAD")
    assert not trap.exists(), trap.read_text()
    # The same calls through plain git do fire the traps: the test can fail.
    (repo / "b.txt").write_text("b\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "second"], check=True)
    assert "pre-commit" in trap.read_text()


def test_paths_come_back_unquoted_with_z(tmp_path: Path) -> None:
    repo, _ = _repo_with_traps(tmp_path)
    odd = ["über.md", 'a"b.md', "new\nline.md"]
    for name in odd:
        (repo / name).write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd names")
    listed = git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").z_items()
    assert sorted(listed) == sorted(odd)


def test_a_failed_git_call_raises_with_the_command_and_stderr(tmp_path: Path) -> None:
    from evolving_agent.gitcmd import GitError

    (tmp_path / "plain").mkdir()
    try:
        git(tmp_path / "plain", "rev-parse", "HEAD")
    except GitError as exc:
        assert "git rev-parse HEAD failed" in str(exc)
        assert "not a git repository" in str(exc)
    else:
        raise AssertionError("expected GitError")
    assert not git(tmp_path / "plain", "rev-parse", "HEAD", check=False).ok
