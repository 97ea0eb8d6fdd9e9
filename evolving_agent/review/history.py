"""Canon history: who changed the identity, on whose approval, and how to undo it.

Every Canon change is a git commit made by the writer, with trailers naming the actor
and (for approved reviews) the review, approver and evidence.  ``log`` reads those
trailers, ``diff REV`` shows how canon/ changed since REV (git's meaning: REV against the
files on disk, so ``diff`` alone shows edits not yet committed), ``show REV`` what one
commit changed, and
``revert`` writes the files as they were before a commit back *through the writer as
the human*, so the revert is itself a commit with provenance that ``verify`` accepts.

Everything is read through the hardened runner (:mod:`evolving_agent.gitcmd`, via
``gitrepo.log`` / ``blob_at``), not GitPython: the root's ``.git/config`` is writable by
a session with a shell, and GitPython starts git with that config as it is, so a
``core.fsmonitor``, ``diff.external`` or textconv set there would run as the human
reading the history (GitPython's own ``diff-tree`` ran an fsmonitor hook).
"""

from __future__ import annotations

from dataclasses import field
from datetime import datetime
from typing import Final

from evolving_agent.errors import InvalidInput, NotFound
from evolving_agent.gitcmd import NO_DIFF_PROGRAMS, git
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

CANON_DIR: Final = "canon"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree


@record(frozen=True)
class CanonChange:
    """One commit that touched canon/."""

    commit: str
    date: datetime
    actor: str
    summary: str
    files: list[str]
    review_id: str | None = None
    approved_by: str | None = None
    evidence_ids: list[str] = field(default_factory=list)
    reverts: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "date": self.date.isoformat(),
            "actor": self.actor,
            "summary": self.summary,
            "files": self.files,
            "review_id": self.review_id,
            "approved_by": self.approved_by,
            "evidence_ids": self.evidence_ids,
            "reverts": self.reverts,
        }


def _resolve(root: MemoryRoot, rev: str) -> gitrepo.CommitInfo:
    sha = gitrepo.resolve_commit(require_root(root), rev)
    if sha is None:
        raise NotFound(f"no commit {rev!r} in the memory root's history")
    (commit,) = gitrepo.log(root, sha, limit=1)
    return commit


def _canon_paths(root: MemoryRoot, commit: gitrepo.CommitInfo) -> list[str]:
    """canon/ files this commit changed relative to its first parent."""
    base = commit.parents[0] if commit.parents else EMPTY_TREE
    res = git(root.path, "diff-tree", "-r", "-z", "--name-only", base, commit.sha, "--", CANON_DIR)
    return sorted(set(res.z_items()))


def _change(root: MemoryRoot, commit: gitrepo.CommitInfo) -> CanonChange:
    message = commit.message
    trailers = gitrepo.parse_trailers(message)
    reverts = None
    for line in message.splitlines():
        if line.startswith("This reverts commit "):
            reverts = line.removeprefix("This reverts commit ").rstrip(".").strip()
    ids = trailers.get("Evidence-Ids", "")
    return CanonChange(
        commit=commit.sha,
        date=commit.date,
        actor=trailers.get("Actor", "(none)"),
        summary=commit.summary,
        files=_canon_paths(root, commit),
        review_id=trailers.get("Review-Id"),
        approved_by=trailers.get("Approved-By"),
        evidence_ids=[i.strip() for i in ids.split(",") if i.strip() and i.strip() != "-"],
        reverts=reverts,
    )


def canon_log(root: MemoryRoot, limit: int | None = None) -> list[CanonChange]:
    """Commits that changed canon/, newest first."""
    gitrepo.require_repo(require_root(root))
    return [_change(root, c) for c in gitrepo.log(root, "HEAD", paths=[CANON_DIR], limit=limit)]


def canon_diff(root: MemoryRoot, rev: str | None = None) -> str:
    """``git diff REV -- canon/``: how Canon on disk differs from REV (default HEAD).

    As in git, the comparison is with the files on disk, so edits not yet committed
    through the writer show too, and new files git does not track are listed.
    """
    base = _resolve(root, rev).sha if rev is not None else gitrepo.require_repo(require_root(root))
    out = git(root.path, "diff", *NO_DIFF_PROGRAMS, base, "--", CANON_DIR).text
    untracked = git(root.path, "ls-files", "-z", "--others", "--exclude-standard", "--", CANON_DIR)
    out += "".join(f"\nuntracked: {p}" for p in untracked.z_items())
    return out.lstrip("\n") + "\n" if out else ""


def commit_diff(root: MemoryRoot, rev: str) -> str:
    """What commit REV changed in canon/, against its first parent ('' if nothing)."""
    commit = _resolve(root, rev)
    parent = commit.parents[0] if commit.parents else EMPTY_TREE
    text = git(root.path, "diff", *NO_DIFF_PROGRAMS, parent, commit.sha, "--", CANON_DIR).text
    return text + "\n" if text else ""


@record(frozen=True)
class CanonShow:
    """One commit as ``canon show`` prints it: its provenance and its canon/ diff."""

    change: CanonChange
    diff: str


def canon_show(root: MemoryRoot, rev: str | None = None) -> CanonShow:
    """One commit's Canon change; by default the newest commit that changed canon/."""
    if rev is None:
        gitrepo.require_repo(require_root(root))
        latest = gitrepo.log(root, "HEAD", paths=[CANON_DIR], limit=1)
        if not latest:
            raise NotFound("no commit has changed canon/ yet")
        commit = latest[0]
    else:
        commit = _resolve(root, rev)
    return CanonShow(_change(root, commit), commit_diff(root, commit.sha))


@record(frozen=True)
class RevertResult:
    reverted: str
    files: list[str]
    commit: str


def canon_revert(root: MemoryRoot, rev: str, *, force: bool = False) -> RevertResult:
    """Put the canon/ files REV changed back as they were before it, as a new human commit.

    Refuses when a later commit changed the same files (reverting would silently undo
    that one too; revert it first, or pass ``force``), when those files have
    uncommitted edits, or when REV changed nothing in canon/.
    """
    commit = _resolve(root, rev)
    short = commit.sha[:10]
    if not commit.parents:
        raise InvalidInput(f"commit {short} created the memory root; nothing before it")
    paths = _canon_paths(root, commit)
    if not paths:
        raise InvalidInput(f"commit {short} did not change canon/")
    head = gitrepo.require_repo(root)
    ancestor = git(root.path, "merge-base", "--is-ancestor", commit.sha, head, check=False)
    if not ancestor.ok:
        raise NotFound(f"commit {short} is not in the current history")
    if not force:
        later = [c.sha[:10] for c in gitrepo.log(root, f"{commit.sha}..{head}", paths=paths)]
        if later:
            raise InvalidInput(
                f"{', '.join(paths)} changed again after {short} (in "
                f"{', '.join(later)}); revert those first, newest first, or pass --force "
                "to restore the files exactly as they were before it"
            )
    dirty = git(root.path, "status", "--porcelain", "--untracked-files=all", "--", *paths)
    if dirty.text.strip():
        raise InvalidInput(
            f"{', '.join(paths)} has changes not committed through the writer; "
            "run 'evolving-agent verify' first"
        )
    parent = commit.parents[0]
    restore: dict[str, bytes] = {}
    remove: list[str] = []
    for path in paths:
        old = gitrepo.blob_at(root, parent, path)
        if old is None:
            remove.append(path)
        elif old != gitrepo.blob_at(root, head, path):
            restore[path] = old
    if not restore and not remove:
        raise InvalidInput(f"canon/ already matches the state before {short}")
    message = f"canon: revert {short} ({commit.summary})\n\nThis reverts commit {commit.sha}."
    writer = Writer(root, "human")
    rel = {p: p.removeprefix(CANON_DIR + "/") for p in paths}
    if restore:
        writer.write_many(CANON_DIR, {rel[p]: d for p, d in restore.items()}, message=message)
    for path in remove:  # the writer commits a deletion on its own
        writer.delete(CANON_DIR, rel[path])
    return RevertResult(commit.sha, paths, gitrepo.require_repo(root))
