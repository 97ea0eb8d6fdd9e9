"""Canon history: who changed the identity, on whose approval, and how to undo it.

Every Canon change is a git commit made by the writer, with trailers naming the actor
and (for approved reviews) the review, approver and evidence.  ``log`` reads those
trailers, ``diff REV`` shows how canon/ changed since REV (git's meaning: REV against the
files on disk, so ``diff`` alone shows edits not yet committed), ``show REV`` what one
commit changed, and
``revert`` writes the files as they were before a commit back *through the writer as
the human*, so the revert is itself a commit with provenance that ``verify`` accepts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from evolving_agent.errors import InvalidInput, NotFound
from evolving_agent.memory import gitrepo
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot

if TYPE_CHECKING:
    import git

CANON_DIR = "canon"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree


@dataclass(frozen=True)
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


def _repo(root: MemoryRoot) -> git.Repo:
    return gitrepo.open_repo(require_root(root))


def _resolve(repo: git.Repo, rev: str) -> git.Commit:
    import git

    if not rev or rev.startswith("-") or any(c.isspace() for c in rev):
        raise NotFound(f"no commit {rev!r} in the memory root's history")
    try:
        commit = repo.commit(rev)
        commit.tree  # noqa: B018 - the lookup is lazy; force it so a missing object fails here
        return commit
    except (git.BadName, git.BadObject, ValueError, IndexError, git.GitCommandError):
        raise NotFound(f"no commit {rev!r} in the memory root's history") from None


def _canon_paths(commit: git.Commit) -> list[str]:
    """canon/ files this commit changed relative to its first parent."""
    if commit.parents:
        diffs = commit.parents[0].diff(commit, paths=CANON_DIR)
    else:
        diffs = commit.diff(EMPTY_TREE, paths=CANON_DIR, R=True)
    out = {p for d in diffs for p in (d.a_path, d.b_path) if p}
    return sorted(out)


def _change(commit: git.Commit) -> CanonChange:
    message = str(commit.message)
    trailers = gitrepo.parse_trailers(message)
    reverts = None
    for line in message.splitlines():
        if line.startswith("This reverts commit "):
            reverts = line.removeprefix("This reverts commit ").rstrip(".").strip()
    ids = trailers.get("Evidence-Ids", "")
    return CanonChange(
        commit=str(commit.hexsha),
        date=commit.committed_datetime,
        actor=trailers.get("Actor", "(none)"),
        summary=str(commit.summary),
        files=_canon_paths(commit),
        review_id=trailers.get("Review-Id"),
        approved_by=trailers.get("Approved-By"),
        evidence_ids=[i.strip() for i in ids.split(",") if i.strip() and i.strip() != "-"],
        reverts=reverts,
    )


def canon_log(root: MemoryRoot, limit: int | None = None) -> list[CanonChange]:
    """Commits that changed canon/, newest first."""
    repo = _repo(root)
    commits = repo.iter_commits("HEAD", paths=CANON_DIR, max_count=limit)
    return [_change(c) for c in commits]


def canon_diff(root: MemoryRoot, rev: str | None = None) -> str:
    """``git diff REV -- canon/``: how Canon on disk differs from REV (default HEAD).

    As in git, the comparison is with the files on disk, so edits not yet committed
    through the writer show too, and new files git does not track are listed.
    """
    repo = _repo(root)
    base = _resolve(repo, rev).hexsha if rev is not None else "HEAD"
    out: str = repo.git.diff(base, "--", CANON_DIR)
    untracked = repo.git.ls_files("--others", "--exclude-standard", "--", CANON_DIR)
    if untracked:
        out += "".join(f"\nuntracked: {p}" for p in untracked.splitlines())
    return out.lstrip("\n") + "\n" if out else ""


def commit_diff(root: MemoryRoot, rev: str) -> str:
    """What commit REV changed in canon/, against its first parent ('' if nothing)."""
    repo = _repo(root)
    commit = _resolve(repo, rev)
    parent = commit.parents[0].hexsha if commit.parents else EMPTY_TREE
    text: str = repo.git.diff(parent, commit.hexsha, "--", CANON_DIR)
    return text + "\n" if text else ""


@dataclass(frozen=True)
class CanonShow:
    """One commit as ``canon show`` prints it: its provenance and its canon/ diff."""

    change: CanonChange
    diff: str


def canon_show(root: MemoryRoot, rev: str | None = None) -> CanonShow:
    """One commit's Canon change; by default the newest commit that changed canon/."""
    repo = _repo(root)
    if rev is None:
        latest = next(iter(repo.iter_commits("HEAD", paths=CANON_DIR, max_count=1)), None)
        if latest is None:
            raise NotFound("no commit has changed canon/ yet")
        commit = latest
    else:
        commit = _resolve(repo, rev)
    return CanonShow(_change(commit), commit_diff(root, commit.hexsha))


@dataclass(frozen=True)
class RevertResult:
    reverted: str
    files: list[str]
    commit: str


def _blob_text(commit: git.Commit, path: str) -> bytes | None:
    try:
        data: bytes = commit.tree[path].data_stream.read()
    except KeyError:
        return None
    return data


def canon_revert(root: MemoryRoot, rev: str, *, force: bool = False) -> RevertResult:
    """Put the canon/ files REV changed back as they were before it, as a new human commit.

    Refuses when a later commit changed the same files (reverting would silently undo
    that one too; revert it first, or pass ``force``), when those files have
    uncommitted edits, or when REV changed nothing in canon/.
    """
    repo = _repo(root)
    commit = _resolve(repo, rev)
    if not commit.parents:
        raise InvalidInput(
            f"commit {commit.hexsha[:10]} created the memory root; nothing before it"
        )
    paths = _canon_paths(commit)
    if not paths:
        raise InvalidInput(f"commit {commit.hexsha[:10]} did not change canon/")
    head = repo.head.commit
    if not repo.is_ancestor(commit, head):
        raise NotFound(f"commit {commit.hexsha[:10]} is not in the current history")
    if not force:
        later = [c.hexsha[:10] for c in repo.iter_commits(f"{commit.hexsha}..HEAD", paths=paths)]
        if later:
            raise InvalidInput(
                f"{', '.join(paths)} changed again after {commit.hexsha[:10]} (in "
                f"{', '.join(later)}); revert those first, newest first, or pass --force "
                "to restore the files exactly as they were before it"
            )
    dirty = repo.git.status("--porcelain", "--untracked-files=all", "--", *paths)
    if dirty.strip():
        raise InvalidInput(
            f"{', '.join(paths)} has changes not committed through the writer; "
            "run 'evolving-agent verify' first"
        )
    parent = commit.parents[0]
    restore: dict[str, bytes] = {}
    remove: list[str] = []
    for path in paths:
        old = _blob_text(parent, path)
        if old is None:
            remove.append(path)
        elif old != _blob_text(head, path):
            restore[path] = old
    if not restore and not remove:
        raise InvalidInput(f"canon/ already matches the state before {commit.hexsha[:10]}")
    message = (
        f"canon: revert {commit.hexsha[:10]} ({commit.summary!s})\n\n"
        f"This reverts commit {commit.hexsha}."
    )
    writer = Writer(root, "human")
    rel = {p: p.removeprefix(CANON_DIR + "/") for p in paths}
    if restore:
        writer.write_many(CANON_DIR, {rel[p]: d for p, d in restore.items()}, message=message)
    for path in remove:  # the writer commits a deletion on its own
        writer.delete(CANON_DIR, rel[path])
    return RevertResult(commit.hexsha, paths, str(gitrepo.open_repo(root).head.commit.hexsha))
