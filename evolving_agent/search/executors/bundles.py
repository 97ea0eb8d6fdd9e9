"""Commits as git bundles: how candidates travel between the driver and Ray workers.

The driver's round repository is the only place a candidate counts.  A worker gets
what it needs as bundles (the round's start with its history, plus the commits the
agent may look at) and sends its turn back as a bundle holding only the new commits.
The driver checks the bundle's prerequisites, fetches it under a ref of its own,
checks the commit is the one announced and measures the change itself: nothing a
worker *says* about a commit is recorded without git confirming it.

Every git call goes through :func:`evolving_agent.gitcmd.git` (no hooks, no user
config).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from evolving_agent.gitcmd import GitError, git
from evolving_agent.search.workspace import TurnCommit, measure, restore_config

SHIP_PREFIX = "refs/ea/ship/"
TURN_REF = "refs/ea/turn"


class BundleRefused(Exception):
    """A bundle from a worker failed verification; its turn is lost."""


def make_bundle(repo: Path, commits: Iterable[str], *, exclude: Iterable[str] = ()) -> bytes | None:
    """A bundle of ``commits`` (each under ``refs/ea/ship/SHA``), minus what ``exclude``
    reaches; None when there is nothing to send."""
    wanted = sorted(set(commits) - set(exclude))
    if not wanted:
        return None
    for sha in wanted:
        git(repo, "update-ref", SHIP_PREFIX + sha, sha)
    fd, tmp = tempfile.mkstemp(prefix="ea-bundle-", suffix=".bundle")
    os.close(fd)
    try:
        refs = [SHIP_PREFIX + sha for sha in wanted]
        negative = [f"^{sha}" for sha in sorted(set(exclude))]
        done = git(repo, "bundle", "create", "-q", tmp, *refs, *negative, check=False)
        if not done.ok:  # "empty bundle": everything wanted is reachable from exclude
            return None
        return Path(tmp).read_bytes()
    finally:
        Path(tmp).unlink(missing_ok=True)


def fetch_bundle(repo: Path, data: bytes, refspec: str) -> None:
    """Fetch ``data`` into ``repo`` with ``refspec``.

    ``git fetch`` from a bundle refuses one whose prerequisite commits ``repo`` lacks
    and checks every object it indexes, so no separate ``bundle verify`` is needed.
    """
    fd, tmp = tempfile.mkstemp(prefix="ea-bundle-", suffix=".bundle")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    try:
        git(repo, "fetch", "-q", "--no-write-fetch-head", tmp, refspec)
    finally:
        Path(tmp).unlink(missing_ok=True)


def init_repo(path: Path, *, bare: bool = False) -> None:
    """A new, empty repository at ``path``; a work tree gets the harness's own config
    (commits name the harness's identity, see ``commit_turn``)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main", *(["--bare"] if bare else []))
    if not bare:
        restore_config(path)


def turn_bundle(workspace: Path, commit: str, base: str) -> bytes | None:
    """The worker's side: the commits from ``base`` to ``commit``, under ``refs/ea/turn``."""
    if commit == base:
        return None
    git(workspace, "update-ref", TURN_REF, commit)
    fd, tmp = tempfile.mkstemp(prefix="ea-turn-", suffix=".bundle")
    os.close(fd)
    try:
        done = git(workspace, "bundle", "create", "-q", tmp, TURN_REF, f"^{base}", check=False)
        return Path(tmp).read_bytes() if done.ok else None
    finally:
        Path(tmp).unlink(missing_ok=True)


def bundle_tip(data: bytes, ref: str) -> str | None:
    """The object ``ref`` names in a bundle's header, read without a git process (a v2
    or v3 header: capabilities, prerequisites ``-SHA``, then ``SHA REF`` lines)."""
    header, _, _ = data.partition(b"\n\n")
    for line in header.decode("utf-8", "replace").splitlines()[1:]:
        sha, _, name = line.partition(" ")
        if name == ref and not sha.startswith(("-", "@")):
            return sha
    return None


def receive_turn(
    repo: Path, data: bytes | None, *, commit: str, base: str, label: str
) -> TurnCommit:
    """The driver's side: bring a worker's turn into ``repo`` and measure it there.

    Raises :class:`BundleRefused` if the bundle does not apply or does not hold
    ``commit``.
    """
    try:
        if data is not None:
            got = bundle_tip(data, TURN_REF)
            if got != commit:
                shown = got[:12] if got else f"no {TURN_REF}"
                raise BundleRefused(f"bundle holds {shown}, worker announced {commit[:12]}")
            # The fetch checks every object and that the tip is connected; measuring it
            # against base below fails unless it is a commit.
            fetch_bundle(repo, data, f"+{TURN_REF}:refs/ea/turns/{label}")
        elif commit != base:
            # No bundle: only acceptable if the driver already has the commit.
            git(repo, "cat-file", "-e", f"{commit}^{{commit}}")
        # Peeled: a tip that is no commit (a tree, a blob) fails the diff, so it is refused.
        return replace(measure(repo, base, f"{commit}^{{commit}}"), commit=commit)
    except GitError as exc:
        raise BundleRefused(str(exc)) from None
