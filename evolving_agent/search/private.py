"""Private agent workspaces: forgetting on disk, not only in git.

An agent's workspace is a standalone git repository in a folder of its own, outside
the run directory: ``$EA_WORKSPACES`` (default ``$TMPDIR``) / ``ea-ws-KEY`` / ``rNN`` /
``agent-K``, every level mode 0700, ``KEY`` derived from the run directory (so a
resumed run, and ``plateau-test``'s continued sessions, find the same paths a CLI
session knew).  Nothing in it names the run directory: no worktree pointer, no remote,
no ``FETCH_HEAD`` -- commits travel between it and the run's round repository by
explicit ``git fetch`` calls the harness makes (:func:`prepare_workspace`,
:func:`import_turn`).  ``../..`` of a workspace is the private folder, never the run's
``log.jsonl``, ``run.json``, other rounds or the scorer.

At a round boundary :func:`enter_round` removes every other round's folder, so nothing
of round N is on disk for round N+1's agents except the candidate they start from.
(Under ``bwrap`` an agent sees only its own workspace; without it, a process of the same
user can still list the private folder: see ``sandbox.py``.)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from evolving_agent.errors import UsageError
from evolving_agent.gitcmd import git
from evolving_agent.search.workspace import HARNESS_CONFIG, NO_TEMPLATES

WORKSPACES_VAR = "EA_WORKSPACES"
_SHIP = "refs/ea/ship/"


def run_key(run_dir: Path) -> str:
    """A short name for the run, the same wherever it is asked (driver, worker, resume)."""
    return hashlib.sha1(str(Path(run_dir).resolve()).encode()).hexdigest()[:12]


# The run's mark in the environment of every agent it starts (``run_ident``): a resume
# ends a killed harness's agents by it, and the Ray executor its dead workers' agents.
RUN_ID_VAR = "EA_RUN_ID"


def run_ident(run_dir: Path) -> str:
    """The run's identity in its agents' environment: a key derived from its directory,
    never the path itself (an agent must not learn where the run's records are)."""
    return f"ea-run-{run_key(run_dir)}"


def private_root(run_dir: Path) -> Path:
    """The run's private folder (made 0700 if missing); never inside the run directory."""
    base = Path(os.environ.get(WORKSPACES_VAR) or tempfile.gettempdir())
    root = base / f"ea-ws-{run_key(run_dir)}"
    if Path(run_dir).resolve() in root.resolve().parents:
        raise UsageError(f"${WORKSPACES_VAR} must not be inside the run directory: {root}")
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    return root


def workspace_path(root: Path, number: int, agent: int) -> Path:
    return root / f"r{number:02d}" / f"agent-{agent}"


def enter_round(root: Path, number: int, *, fresh: bool = False) -> None:
    """Remove every other round's workspaces (and, with ``fresh``, this round's too:
    a reopened round's workspaces are rebuilt at each agent's last recorded commit)."""
    keep = f"r{number:02d}"
    for child in root.iterdir() if root.is_dir() else []:
        if child.name != keep or fresh:
            _remove(child)
    (root / keep).mkdir(mode=0o700, exist_ok=True)


def remove_root(root: Path) -> None:
    _remove(root)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    else:
        shutil.rmtree(path, ignore_errors=True)


def is_intact(workspace: Path) -> bool:
    """A real directory holding a real ``.git`` directory (an agent may have replaced
    either by a symlink or a pointer file naming another repository)."""
    dot_git = workspace / ".git"
    return (
        not workspace.is_symlink()
        and workspace.is_dir()
        and not dot_git.is_symlink()
        and dot_git.is_dir()
    )


def secure(workspace: Path) -> bool:
    """Make the workspace's repository the harness's again before harness git runs in
    it: its own config, no ``commondir`` (git would read that repository's config), no
    alternates.  False if the workspace is no longer a repository of its own."""
    if not is_intact(workspace):
        return False
    dot_git = workspace / ".git"
    for planted in (dot_git / "commondir", dot_git / "objects" / "info" / "alternates"):
        if planted.is_symlink() or planted.exists():
            _remove(planted)
    config = dot_git / "config"
    try:
        same = not config.is_symlink() and config.read_text() == HARNESS_CONFIG
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        _remove(config)
        config.write_text(HARNESS_CONFIG)
    return True


def prepare_workspace(
    workspace: Path, repo: Path, *, base: str, branch: str, wanted: Iterable[str] = ()
) -> set[str]:
    """Make sure ``workspace`` is a repository of its own at ``base`` holding ``wanted``
    commits; builds it from ``repo`` if missing or broken.  Returns the commits fetched."""
    fetched: set[str] = set()
    if not secure(workspace):
        _remove(workspace)
        workspace.mkdir(mode=0o700, parents=True)
        git(workspace, "init", "-q", NO_TEMPLATES, "-b", "main")
        (workspace / ".git" / "config").write_text(HARNESS_CONFIG)
        fetched |= fetch_commits(workspace, repo, [base, *wanted])
        git(workspace, "checkout", "-q", "-f", "-B", branch, base)
    else:
        # One fetch for the lot (a commit the workspace already holds costs nothing to
        # fetch), not a ``cat-file`` per commit to find out first.
        fetched |= fetch_commits(workspace, repo, wanted)
    return fetched


def rebuild_keeping_files(workspace: Path, repo: Path, *, base: str, branch: str) -> bool:
    """A new repository at ``base`` under the files the agent left (its ``.git`` was
    deleted or replaced); a workspace replaced by a symlink becomes an empty folder --
    what the agent left -- and never is followed."""
    if workspace.is_symlink() or not workspace.is_dir():
        _remove(workspace)
        workspace.mkdir(mode=0o700)
    _remove(workspace / ".git")
    git(workspace, "init", "-q", NO_TEMPLATES, "-b", branch)
    (workspace / ".git" / "config").write_text(HARNESS_CONFIG)
    fetch_commits(workspace, repo, [base])
    git(workspace, "update-ref", f"refs/heads/{branch}", base)
    git(workspace, "read-tree", base)  # the index at base: what the agent left is the change
    return True


def has_commit(repo: Path, commit: str) -> bool:
    return git(repo, "cat-file", "-e", f"{commit}^{{commit}}", check=False).ok


def fetch_commits(dest: Path, source: Path, commits: Iterable[str]) -> set[str]:
    """Fetch ``commits`` from ``source`` into ``dest`` under ``refs/ea/ship/SHA``, by an
    explicit path (nothing in ``dest`` records where they came from)."""
    wanted = sorted(set(commits))
    if not wanted:
        return set()
    # By sha, in one git process: the source's upload-pack (the harness's own round
    # repository) is told to allow any sha, which protocol v0 does not by default.
    refspecs = [f"+{sha}:{_SHIP}{sha}" for sha in wanted]
    git(
        dest, "fetch", "-q", "--no-tags", "--no-write-fetch-head",
        f"--upload-pack={_ANY_SHA_UPLOAD_PACK}", str(source), *refspecs,
    )  # fmt: skip
    return set(wanted)


_ANY_SHA_UPLOAD_PACK = "git -c uploadpack.allowAnySHA1InWant=true upload-pack"


def import_turn(repo: Path, workspace: Path, *, commit: str, label: str) -> None:
    """Bring the turn's commit from the agent's workspace into the round repository
    (``refs/ea/turns/LABEL``).  The workspace was secured just before (``secure``):
    the fetch reads only objects from it, never its config."""
    git(
        repo, "fetch", "-q", "--no-tags", "--no-write-fetch-head", str(workspace),
        f"+{commit}:refs/ea/turns/{label}",
    )  # fmt: skip
