"""Candidates as git commits: round repositories, agent worktrees, turn commits.

Every round lives in ``rounds/rNN/`` of the run directory.  A forgetting round with a
fresh repository (``forget``, ``forget-team``, and round 1 of every policy) creates
``rounds/rNN/repo`` holding exactly one commit: the files of the team's best
candidate, no earlier history.  Each agent then gets its own worktree
``rounds/rNN/agent-K`` on branch ``rNN-agent-K``; the worktree holds nothing but the
candidate's files.  ``fork-and-flush`` keeps round 1's repository and adds new
worktrees at the best commit, so the whole candidate history stays reachable.

Every candidate is tagged ``cand/rNN-aK-tTTT`` so peers' commits can be named and
inspected (``git show``) from any worktree of the round's repository.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

import git

from evolving_agent.errors import InvalidInput

IDENTITY = ("evolving-agent", "evolving-agent@localhost")
_SKIP = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


@dataclass(frozen=True)
class TurnCommit:
    commit: str
    empty: bool
    lines_changed: int


def _git(cwd: Path, *args: str) -> str:
    return str(git.Git(str(cwd)).execute(["git", *args], strip_newline_in_stdout=True))


def _run_git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run git quietly (stdin closed, output captured); the caller judges the exit code."""
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, check=False
    )


def ensure_identity(repo_dir: Path) -> None:
    """Give the repository a local author if git has none configured anywhere.

    Asks git itself (GitPython's config reader ignores ``GIT_CONFIG_GLOBAL``).
    """
    for key, value in zip(("user.name", "user.email"), IDENTITY, strict=True):
        found = _run_git(repo_dir, "config", "--get", key)
        if found.returncode != 0 or not found.stdout.strip():
            _git(repo_dir, "config", key, value)


def copy_candidate(candidate: Path, dest: Path) -> None:
    """Copy the candidate's files into ``dest``.

    A git work tree contributes only its committed files at HEAD (what a judge
    would see); a plain directory is copied without VCS and cache directories.
    """
    dest.mkdir(parents=True, exist_ok=True)
    try:
        repo = git.Repo(str(candidate))
        is_root = Path(repo.working_tree_dir or "").resolve() == candidate.resolve()
        has_head = is_root and repo.head.is_valid()
        repo.close()
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        has_head = False
    if has_head:
        export_commit(candidate, "HEAD", dest)
        return
    for item in candidate.iterdir():
        if item.name in _SKIP:
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name, ignore=shutil.ignore_patterns(*_SKIP))
        else:
            shutil.copy2(item, dest / item.name)


def export_commit(repo_dir: Path, commit: str, dest: Path) -> None:
    """Write the committed, non-ignored files of ``commit`` into ``dest`` (git archive)."""
    dest.mkdir(parents=True, exist_ok=True)
    proc = _run_git(repo_dir, "archive", "--format=tar", commit)
    if proc.returncode != 0:
        raise InvalidInput(
            f"cannot export commit {commit}: {proc.stderr.decode(errors='replace').strip()}",
            file=repo_dir,
        )
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")


def init_round_repo(repo_dir: Path, files: Path, message: str) -> str:
    """A new repository whose only commit holds the files in ``files``; its sha."""
    repo_dir.mkdir(parents=True)
    _git(repo_dir, "init", "-q", "-b", "main")
    ensure_identity(repo_dir)
    for item in files.iterdir():
        target = repo_dir / item.name
        if item.is_dir():
            shutil.copytree(item, target)
        else:
            shutil.copy2(item, target)
    _git(repo_dir, "add", "-A")
    _git(repo_dir, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    return _git(repo_dir, "rev-parse", "HEAD")


def add_worktree(repo_dir: Path, path: Path, branch: str, commit: str) -> None:
    _git(repo_dir, "worktree", "prune")
    _git(repo_dir, "worktree", "add", "-q", "-f", "-B", branch, str(path), commit)


def reset_worktree(path: Path, commit: str) -> None:
    """Throw away anything uncommitted (a turn killed half-way) and go to ``commit``."""
    _git(path, "reset", "-q", "--hard", commit)
    _git(path, "clean", "-q", "-fdx")


def head(path: Path) -> str:
    return _git(path, "rev-parse", "HEAD")


def commit_turn(path: Path, base: str, message: str) -> TurnCommit:
    """Commit whatever the agent left (respecting .gitignore) and measure the change.

    The agent may also have committed on its own; the candidate is HEAD either way.
    An empty turn is one whose tree equals the base's tree.  Git calls are the bulk
    of the harness's per-turn cost, so a turn that changed nothing costs two.
    """
    if _git(path, "status", "--porcelain"):
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "--no-verify", "-m", message)
    commit = head(path)
    if commit == base:
        return TurnCommit(commit, True, 0)
    numstat = _git(path, "diff", "--numstat", base, commit)
    lines = 0
    for row in numstat.splitlines():
        added, deleted, _name = row.split("\t", 2)
        # Binary files show "-": count each as one changed line.
        lines += (int(added) if added != "-" else 1) + (int(deleted) if deleted != "-" else 0)
    return TurnCommit(commit, not numstat.strip(), lines)


def tag_candidate(path: Path, name: str, commit: str) -> None:
    _git(path, "tag", "-f", name, commit)


def read_file_at(path: Path, commit: str, relpath: str) -> str | None:
    """A file's content at ``commit`` (None if absent); used to peek at peers' work."""
    proc = _run_git(path, "show", f"{commit}:{relpath}")
    return proc.stdout.decode() if proc.returncode == 0 else None
