"""The root's git repository: Canon history with provenance trailers.

Only Canon (plus the schedule file and .gitignore) is tracked; the other layers change
too often to commit and have their own integrity (the Evidence chain).  Every Canon
commit made by the writer carries an ``Evidence-Id`` trailer pointing at a
``canon-write`` record that holds the new blob hashes, which is what ``verify`` checks.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # GitPython costs ~100 ms to import; friction appends never need it.
    import git

from evolving_agent.errors import InvalidInput
from evolving_agent.paths import MemoryRoot

FALLBACK_NAME = "evolving-agent"
FALLBACK_EMAIL = "evolving-agent@localhost"

GITIGNORE = """\
# Only Canon and the schedule are history; other layers have their own integrity.
/live/
/today/
/evidence/
/reviews/
/.ea/
"""


def blob_sha(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def open_repo(root: MemoryRoot) -> git.Repo:
    import git

    try:
        repo = git.Repo(root.path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise InvalidInput(
            f"no git repository at {root.path}: a memory root keeps Canon's history in git "
            "(restore its .git directory from a backup)"
        ) from None
    _ensure_identity(repo)
    return repo


def init_repo(root: MemoryRoot) -> git.Repo:
    import git

    repo = git.Repo.init(root.path)
    _ensure_identity(repo)
    return repo


def _ensure_identity(repo: git.Repo) -> None:
    """A fresh machine may have no git identity; give this repo a local one."""
    if os.environ.get("GIT_AUTHOR_NAME") and os.environ.get("GIT_COMMITTER_NAME"):
        return
    reader = repo.config_reader()
    has_name = reader.has_option("user", "name")
    has_email = reader.has_option("user", "email")
    if has_name and has_email:
        return
    with repo.config_writer() as cw:
        if not has_name:
            cw.set_value("user", "name", FALLBACK_NAME)
        if not has_email:
            cw.set_value("user", "email", FALLBACK_EMAIL)


def commit_paths(
    root: MemoryRoot,
    relpaths: Sequence[str],
    message: str,
    trailers: dict[str, str],
) -> str:
    """Stage exactly ``relpaths`` (relative to the root) and commit them with trailers."""
    repo = open_repo(root)
    present = [p for p in relpaths if (root.path / p).exists()]
    gone = [p for p in relpaths if not (root.path / p).exists()]
    if present:
        repo.index.add(present)
    if gone:
        repo.index.remove(gone, working_tree=False, ignore_unmatch=True)
    body = message.rstrip() + "\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
    commit = repo.index.commit(body)
    from evolving_agent.memory.canon_snapshot import record_canon_snapshot

    record_canon_snapshot(root)  # boot serves only Canon matching this commit
    return commit.hexsha


def committed_blob(root: MemoryRoot, relpath: str) -> str | None:
    """The blob id of ``relpath`` in the last commit, or None if it is not there."""
    repo = open_repo(root)
    try:
        return str(repo.head.commit.tree[relpath].hexsha)
    except (KeyError, ValueError):
        return None


def committed_text(root: MemoryRoot, relpath: str) -> bytes | None:
    """The bytes of ``relpath`` in the last commit, or None if it is not there."""
    repo = open_repo(root)
    try:
        data: bytes = repo.head.commit.tree[relpath].data_stream.read()
    except (KeyError, ValueError):
        return None
    return data


def parse_trailers(message: str) -> dict[str, str]:
    """Trailers of a commit message: 'Key: value' lines of the last paragraph."""
    paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
    if not paragraphs:
        return {}
    out: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            out[key] = value.strip()
    return out
