"""The root's git repository: Canon history with provenance trailers.

Only Canon, the schedule file, the jobs' prompts (``crons/``) and .gitignore are
tracked; the other layers change too often to commit and have their own integrity
(the Evidence chain).  Every Canon commit made by the writer carries an
``Evidence-Id`` trailer pointing at a ``canon-write`` record that holds the new blob
hashes, which is what ``verify`` checks.

Commits are made with plumbing through the hardened runner (:mod:`evolving_agent.gitcmd`):
blobs are hashed from the bytes the writer wrote, a private temporary index is built
from HEAD, and HEAD moves by compare-and-swap - the shared index, hooks and the
user's config play no part.  The repository is created ``--shared=0600`` so git keeps
its own files private whatever the umask.

One way to reach the repository per need:

- **writing** (commits, HEAD): plumbing through gitcmd, here (``commit_contents``);
- **reading** (trees, blobs, history with its trailers, for ``verify``, review and
  ``canon log/show/diff/revert``): gitcmd too, through ``tracked_tree``, ``blob_at``,
  ``log`` and ``resolve_commit`` here.  Not GitPython: it starts git with the
  repository's own config as found, and a session with a shell can write
  ``.git/config`` (an fsmonitor hook ran from GitPython's ``diff-tree``);
- **boot's Canon check** (``canon_snapshot``): loose objects read in-process with zlib,
  no child process at all, to stay inside boot's time budget; only the packed objects a
  ``git gc`` leaves take one ``git cat-file`` (gitcmd) each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.atomic import mkdirs_private

# Re-exported: the one git reader's API (boot's fast path imports gitformat alone).
from evolving_agent.memory.canon.gitformat import blob_sha as blob_sha
from evolving_agent.memory.canon.gitformat import parse_trailers as parse_trailers
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

if TYPE_CHECKING:
    from evolving_agent.gitcmd import git as run_git
else:

    def run_git(*args: Any, **kwargs: Any) -> Any:
        """gitcmd's ``git``, imported when a command first runs: boot reads the Canon
        snapshot through this module's pure helpers and never starts git, so it does
        not pay for ``subprocess`` (and ``signal``, ``selectors``, ``threading``)."""
        from evolving_agent.gitcmd import git

        return git(*args, **kwargs)


# Paths whose every change must come through the writer (verify checks them all).
TRACKED_DIRS = ("canon/", "crons/")
TRACKED_FILES = ("schedule.yaml",)
ZERO_SHA = "0" * 40


GITIGNORE = """\
# Only Canon and the schedule are history; other layers have their own integrity.
/live/
/today/
/evidence/
/reviews/
/.ea/
"""


_NO_REPO = (
    "no git repository at {path}: a memory root keeps Canon's history in git "
    "(restore its .git directory from a backup)"
)


def require_repo(root: MemoryRoot) -> str:
    """HEAD's commit id; a clear error when the root has lost its repository."""
    if not (root.path / ".git").exists():
        raise InvalidInput(_NO_REPO.format(path=root.path))
    head = head_commit(root)
    if head is None:
        raise InvalidInput(_NO_REPO.format(path=root.path))
    return head


def is_tracked(relpath: str) -> bool:
    """True for the paths only the writer may change: canon/, crons/, schedule.yaml."""
    return relpath.startswith(TRACKED_DIRS) or relpath in TRACKED_FILES


def init_repo(root: MemoryRoot) -> None:
    """Create the root's repository, private (``--shared=0600``) whatever the umask."""
    run_git(root.path, "init", "-q", "--shared=0600", ".")


def _identity_needed(root: MemoryRoot) -> bool:
    """True when neither the environment nor the repository names a committer."""
    if os.environ.get("GIT_AUTHOR_NAME") and os.environ.get("GIT_COMMITTER_NAME"):
        return False
    for key in ("user.name", "user.email"):
        if not run_git(root.path, "config", "--get", key, check=False).text:
            return True
    return False


def head_commit(root: MemoryRoot) -> str | None:
    """HEAD's commit id, or None when the repository has no commit (or no HEAD)."""
    res = run_git(root.path, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    return res.text if res.ok and res.text else None


def tracked_tree(root: MemoryRoot, rev: str = "HEAD") -> dict[str, str]:
    """path -> blob id of every tracked path (canon/, crons/, schedule.yaml) at ``rev``."""
    res = run_git(root.path, "ls-tree", "-r", "-z", "--full-tree", rev, check=False)
    if not res.ok:
        return {}
    out: dict[str, str] = {}
    for item in res.z_items():
        meta, _, path = item.partition("\t")
        if is_tracked(path):
            out[path] = meta.split()[2]
    return out


# Lock files git leaves when it is killed mid-update; the next 'update-ref' fails on them.
_GIT_LOCKS = ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock")


def clear_stale_locks(root: MemoryRoot) -> list[str]:
    """Remove lock files a killed writer left in ``.git`` and its temp indexes.

    Called with the writer's Canon lock held: the root's repository is written only by
    the writer, under that lock, so any git lock found now belongs to a dead process.
    Returns what was removed (root-relative).
    """
    git_dir = root.path / ".git"
    found = [git_dir / name for name in _GIT_LOCKS]
    heads = git_dir / "refs" / "heads"
    if heads.is_dir() and not heads.is_symlink():
        found += list(heads.rglob("*.lock"))
    if root.state.is_dir():
        found += list(root.state.glob("index.*.tmp"))
    removed = []
    for path in found:
        try:
            if path.is_file() and not path.is_symlink():
                path.unlink()
                removed.append(path.relative_to(root.path).as_posix())
        except OSError:
            continue
    return removed


def commit_contents(
    root: MemoryRoot,
    contents: Mapping[str, bytes | None],
    message: str,
    trailers: Mapping[str, str],
    *,
    sign: list[str] | None = None,
) -> str:
    """Commit exactly ``contents`` (relpath -> bytes, None to delete) on top of HEAD.

    The blobs are the given bytes, not whatever the files hold by the time git looks;
    HEAD moves only if nobody moved it meanwhile.  Returns the new commit id.  The
    caller records the Canon snapshot (:mod:`canon_snapshot`) afterwards: this module
    is plain git and knows nothing of what the commit means.
    """
    clear_stale_locks(root)
    parent = head_commit(root)
    blobs = {rel: None if data is None else hash_blob(root, data) for rel, data in contents.items()}
    tree = write_tree(root, parent, blobs)
    info = _index_info(blobs)
    body = message.rstrip() + "\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
    args = ["commit-tree", tree, "-F", "-"] + (["-p", parent] if parent else [])
    if sign is not None:  # git options naming the key (memory/canon/signing.py), then -S
        args = [*sign, "commit-tree", "-S", *args[1:]]
    commit = run_git(
        root.path, *args, input=body.encode("utf-8"), identity=_identity_needed(root)
    ).text
    old = parent or ZERO_SHA
    run_git(root.path, "update-ref", "-m", "evolving-agent writer", "HEAD", commit, old)
    # Keep git's own index in step so 'git status' shows a clean tree (verify never
    # reads it; people do).
    run_git(root.path, "update-index", "-z", "--index-info", input=info, check=False)
    return commit


def _index_info(changes: Mapping[str, str | None]) -> bytes:
    """``update-index --index-info`` lines: path -> blob (None: remove), NUL-ended."""
    return "".join(
        f"0 {ZERO_SHA}\t{p}\0" if sha is None else f"100644 {sha}\t{p}\0"
        for p, sha in sorted(changes.items())
    ).encode("utf-8", "surrogateescape")


def write_tree(
    root: MemoryRoot,
    base: str | None,
    changes: Mapping[str, str | None],
    *,
    index_name: str = "index",
) -> str:
    """A tree: ``base``'s (a commit or tree; None: empty) with ``changes`` (path -> blob,
    None to delete), built in a private temporary index - the shared index is never
    touched.  The writer's commits and sync's data commits are both built here; sync
    names its own index (``clear_stale_locks`` removes only the writer's)."""
    mkdirs_private(root.state)
    import threading

    index = root.state / f"{index_name}.{os.getpid()}.{threading.get_ident()}.tmp"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        if base:
            run_git(root.path, "read-tree", base, env=env)
        else:
            run_git(root.path, "read-tree", "--empty", env=env)
        info = _index_info(changes)
        if info:
            run_git(root.path, "update-index", "-z", "--index-info", input=info, env=env)
        return run_git(root.path, "write-tree", env=env).text
    finally:
        index.unlink(missing_ok=True)


def hash_blob(root: MemoryRoot, data: bytes) -> str:
    """Store ``data`` as a blob; its id."""
    return run_git(root.path, "hash-object", "-w", "--stdin", input=data).text


def commit_tree(root: MemoryRoot, tree: str, parents: Sequence[str], message: str) -> str:
    """A commit of ``tree`` (no ref moves); its id."""
    args = [x for p in parents for x in ("-p", p)]
    return run_git(root.path, "commit-tree", tree, *args, "-m", message, identity=True).text


# -- refs, trees and blobs by id (sync's data branch, memory/sync/) ----------------------

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# The refs sync reads, cached per root between its own updates: one git call instead of
# one per look-up.  Only sync moves refs/ea/* and ea-data (under its lock); main is
# always read fresh (head_commit), since the writer moves it.
_REFS: dict[Path, dict[str, str]] = {}


def ref(root: MemoryRoot, name: str) -> str | None:
    """The commit a ref under refs/heads or refs/ea points at (cached, see above)."""
    refs = _REFS.get(root.path)
    if refs is None:
        res = run_git(
            root.path, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/ea"
        )
        refs = {}
        for line in res.text.splitlines():
            sha, _, refname = line.partition(" ")
            refs[refname] = sha
        _REFS[root.path] = refs
    return refs.get(name)


def forget_refs(root: MemoryRoot) -> None:
    _REFS.pop(root.path, None)


def set_refs(root: MemoryRoot, updates: Mapping[str, str]) -> None:
    """Point several refs at once (one ``update-ref --stdin`` transaction)."""
    if updates:
        script = "".join(f"update {name} {sha}\n" for name, sha in updates.items())
        run_git(root.path, "update-ref", "--stdin", input=script.encode())
    forget_refs(root)


def update_ref(root: MemoryRoot, name: str, new: str, old: str | None, why: str) -> None:
    """Move ``name`` to ``new`` only if it still points at ``old`` (compare-and-swap)."""
    forget_refs(root)
    run_git(root.path, "update-ref", "-m", why, name, new, old or ZERO_SHA)


def delete_ref(root: MemoryRoot, name: str) -> None:
    forget_refs(root)
    run_git(root.path, "update-ref", "-d", name, check=False)


def rev_list(root: MemoryRoot, *revs: str) -> list[str]:
    """The commits ``git rev-list REVS`` names, newest first."""
    return run_git(root.path, "rev-list", *revs).text.split()


def is_ancestor(root: MemoryRoot, a: str, b: str) -> bool:
    return run_git(root.path, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def merge_base(root: MemoryRoot, a: str, b: str) -> str | None:
    res = run_git(root.path, "merge-base", a, b, check=False)
    return res.text if res.ok and res.text else None


@record(frozen=True)
class TreeEntry:
    mode: str
    sha: str
    size: int


def ls_tree(root: MemoryRoot, rev: str | None, *paths: str) -> dict[str, TreeEntry]:
    """path -> entry of every file of ``rev``'s tree (under ``paths``, if given)."""
    if rev is None:
        return {}
    res = run_git(root.path, "ls-tree", "-r", "-z", "-l", "--full-tree", rev, "--", *paths)
    out: dict[str, TreeEntry] = {}
    for item in res.z_items():
        meta, _, path = item.partition("\t")
        mode, _kind, sha, size = meta.split()
        out[path] = TreeEntry(mode, sha, int(size) if size.isdigit() else 0)
    return out


def diff_trees(
    root: MemoryRoot, a: str | None, b: str
) -> dict[str, tuple[str | None, str | None, str]]:
    """path -> (old blob, new blob, new mode) for every file that differs a..b."""
    res = run_git(root.path, "diff-tree", "-r", "-z", "--no-renames", a or EMPTY_TREE, b)
    items = res.z_items()
    out: dict[str, tuple[str | None, str | None, str]] = {}
    for meta, path in zip(items[0::2], items[1::2], strict=False):
        _om, new_mode, old_sha, new_sha, _st = meta[1:].split(" ", 4)
        out[path] = (
            None if set(old_sha) == {"0"} else old_sha,
            None if set(new_sha) == {"0"} else new_sha,
            new_mode,
        )
    return out


def blob(root: MemoryRoot, sha: str) -> bytes:
    """A blob that must exist (a missing one is a GitError: the repository is damaged)."""
    return run_git(root.path, "cat-file", "blob", sha).stdout


def blob_sizes(root: MemoryRoot, shas: Sequence[str]) -> dict[str, int]:
    """sha -> size of each object (one ``cat-file --batch-check``)."""
    if not shas:
        return {}
    res = run_git(
        root.path, "cat-file", "--batch-check", input="".join(f"{s}\n" for s in shas).encode()
    )
    out: dict[str, int] = {}
    for line in res.text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            out[parts[0]] = int(parts[2])
    return out


def commit_paths(
    root: MemoryRoot,
    relpaths: Sequence[str],
    message: str,
    trailers: dict[str, str],
) -> str:
    """Commit exactly ``relpaths`` (relative to the root) as they are on disk now."""
    contents: dict[str, bytes | None] = {}
    for rel in relpaths:
        try:
            fd = os.open(root.real / rel, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            contents[rel] = None
            continue
        with os.fdopen(fd, "rb") as fh:
            contents[rel] = fh.read()
    return commit_contents(root, contents, message, trailers)


def committed_blob(root: MemoryRoot, relpath: str) -> str | None:
    """The blob id of ``relpath`` in the last commit, or None if it is not there."""
    res = run_git(root.path, "rev-parse", "-q", "--verify", f"HEAD:{relpath}", check=False)
    return res.text if res.ok and res.text else None


def committed_text(root: MemoryRoot, relpath: str) -> bytes | None:
    """The bytes of ``relpath`` in the last commit, or None if it is not there."""
    sha = committed_blob(root, relpath)
    if sha is None:
        return None
    return read_blob(root, sha)


def read_blob(root: MemoryRoot, sha: str) -> bytes | None:
    res = run_git(root.path, "cat-file", "blob", sha, check=False)
    return res.stdout if res.ok else None


@record(frozen=True)
class CommitInfo:
    """One commit as the history views need it (read with ``git log``, not GitPython)."""

    sha: str
    parents: tuple[str, ...]
    date: datetime  # the committer date, in the committer's offset
    message: str

    @property
    def summary(self) -> str:
        return self.message.split("\n", 1)[0]


# sha, parents, committer date (strict ISO 8601), raw message; records end with NUL (-z).
_LOG_FORMAT = "--format=%H%x1f%P%x1f%cI%x1f%B"


def log(
    root: MemoryRoot, *revs: str, paths: Sequence[str] = (), limit: int | None = None
) -> list[CommitInfo]:
    """Commits reachable from ``revs`` (``git log`` order, newest first), only those that
    touched ``paths`` if given."""
    count = () if limit is None else (f"--max-count={limit}",)
    res = run_git(
        root.path, "log", "-z", "--no-show-signature", _LOG_FORMAT, *count, *revs, "--", *paths
    )
    out = []
    for item in res.z_items():
        sha, parents, date, message = item.split("\x1f", 3)
        out.append(CommitInfo(sha, tuple(parents.split()), datetime.fromisoformat(date), message))
    return out


def resolve_commit(root: MemoryRoot, rev: str) -> str | None:
    """The commit id ``rev`` names, or None (an option-like or spaced ``rev`` names none)."""
    if not rev or rev.startswith("-") or any(c.isspace() for c in rev):
        return None
    res = run_git(root.path, "rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False)
    return res.text if res.ok and res.text else None


def blob_at(root: MemoryRoot, rev: str, relpath: str) -> bytes | None:
    """The bytes of ``relpath`` in commit ``rev``, or None if it is not there."""
    res = run_git(root.path, "cat-file", "blob", f"{rev}:{relpath}", check=False)
    return res.stdout if res.ok else None
