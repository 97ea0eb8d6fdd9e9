"""The Canon snapshot: which Canon boot may serve, checked in O(1) of history.

After every Canon commit the writer (and ``init``) records, in ``.ea/canon-state.json``,
the commit id and the git blob id of every file under ``canon/`` in that commit.  Boot
then checks, without running git and without walking history:

1. the snapshot's commit is HEAD (read from ``.git/HEAD`` and the ref file), so a plain
   ``git commit``, a reset or an orphan rewrite is seen;
2. that commit carries the writer's trailers (``Actor: init|human|monthly``, and an
   ``Evidence-Id`` unless it is ``init``), so a hand-made commit is not "the last
   writer commit" just because the snapshot names it;
3. the snapshot's blob ids equal that commit's Canon tree (read from git's loose
   objects with zlib; objects packed by a ``git gc`` through one ``git cat-file``),
   so a snapshot file edited to bless a hand edit is caught;
4. every file under ``canon/`` on disk is a regular file (no symlink) whose bytes hash,
   the way git hashes a blob, to the recorded id, and no file is missing or extra.

When any of this fails, boot serves the Canon of the last writer commit it can trust
(the snapshot's commit, else the newest first-parent ancestor of HEAD with writer
trailers) straight from git's objects, and says why.  A session with shell access can
still emulate the writer completely (forge trailers, an Evidence record and this file
at once); that is what ``verify`` is for — :func:`check_canon_snapshot` is the cheap
part it can reuse.
"""

from __future__ import annotations

import json
import os
import stat
import zlib

from evolving_agent.errors import InvalidInput
from evolving_agent.fsio import TreeFiles, read_files
from evolving_agent.memory.canon.gitformat import blob_sha, parse_trailers

# Boot's fast path imports this module: no typing, dataclasses or gitrepo at run time
# (mypy reads TYPE_CHECKING as typing's).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from evolving_agent.paths import MemoryRoot

STATE_NAME = "canon-state.json"
SCHEMA_VERSION = 1
CANON_DIR = "canon"
WRITER_ACTORS = frozenset({"init", "human", "monthly"})
_REGULAR_MODES = (b"100644", b"100755")
_MAX_WALK = 1000  # first-parent steps when looking for the last writer commit


def state_file(root: MemoryRoot) -> Path:
    return root.state / STATE_NAME


class CanonFiles:
    """The Canon boot may serve: file bytes by path inside ``canon/``, and why, if not disk."""

    __slots__ = ("files", "commit", "problems")

    def __init__(
        self, files: dict[str, bytes], commit: str | None, problems: list[str] | None = None
    ) -> None:
        self.files = files
        self.commit = commit
        self.problems = [] if problems is None else problems

    @property
    def from_disk(self) -> bool:
        return not self.problems


# -- recording (the writer side) ---------------------------------------------------------


def record_canon_snapshot(root: MemoryRoot) -> dict[str, Any]:
    """Record HEAD's Canon tree as the last writer commit.  Call right after a Canon commit."""
    from evolving_agent.memory.base.atomic import atomic_write

    store = _Objects(root)
    head = store.head()
    if head is None:
        raise InvalidInput(f"{root.path}: no commit to record a Canon snapshot of")
    tree, _ = store.canon_tree(head)
    state = {
        "schema_version": SCHEMA_VERSION,
        "commit": head,
        "files": {path: sha for path, (_, sha) in sorted(tree.items())},
    }
    data = json.dumps(state, indent=2, sort_keys=True).encode("ascii") + b"\n"
    atomic_write(state_file(root), data)
    return state


# -- checking (boot, verify) ---------------------------------------------------------------


def check_canon_snapshot(root: MemoryRoot) -> list[str]:
    """Problems that stop boot from serving Canon as it is on disk (empty: all is well).

    O(1) in history: a few small files of ``.git`` and the Canon files themselves.
    Never raises for a damaged root: an unreadable history is a problem like any other.
    """
    try:
        return load_canon(root).problems
    except InvalidInput as exc:
        return [str(exc)]


def load_canon(root: MemoryRoot) -> CanonFiles:
    """Canon as boot should serve it: disk when it matches the last writer commit, else git."""
    return _load(root, _Objects(root))


def _load(root: MemoryRoot, store: _Objects) -> CanonFiles:
    problems: list[str] = []
    state, state_problem = _read_state(root)
    head = store.head()
    if head is None:
        raise InvalidInput(
            f"{root.path / '.git'}: no readable git history, so Canon cannot be checked "
            "(restore the root's .git directory from a backup)"
        )
    if state_problem:
        problems.append(state_problem)
    commit = str(state["commit"]) if state else head
    if state and commit != head:
        problems.append(
            f"HEAD is {head[:10]}, not the last writer commit {commit[:10]} "
            "(a commit, reset or checkout made behind the writer's back)"
        )
    trusted = _trusted_commit(store, commit, problems)
    try:
        tree, tree_problems = store.canon_tree(trusted)
    except InvalidInput as exc:
        raise InvalidInput(
            f"cannot read Canon of the last writer commit {trusted[:10]}: {exc} "
            "(run 'evolving-agent verify')"
        ) from None
    problems += tree_problems
    if state and trusted == commit and state.get("files") != {p: s for p, (_, s) in tree.items()}:
        problems.append(
            f"{state_file(root)}: does not match the Canon tree of commit {commit[:10]} "
            "(the snapshot file was edited)"
        )
    scan = _scan_disk(root)
    disk = scan.files
    problems += scan.problems
    for path in sorted(set(tree) | set(disk)):
        want = tree.get(path)
        got = disk.get(path)
        if want is None:
            problems.append(f"{root.path / path}: not in the last writer commit (added by hand)")
        elif got is None:
            if not scan.reported(path):
                problems.append(f"{root.path / path}: missing (deleted by hand)")
        elif blob_sha(got) != want[1]:
            problems.append(f"{root.path / path}: changed behind the writer's back")
    if not problems:
        return CanonFiles(files=_inside(disk), commit=trusted)
    served = {path: store.blob(sha) for path, (_, sha) in tree.items()}
    return CanonFiles(files=_inside(served), commit=trusted, problems=problems)


def _inside(files: dict[str, bytes]) -> dict[str, bytes]:
    prefix = CANON_DIR + "/"
    return {p.removeprefix(prefix): data for p, data in files.items()}


def _read_state(root: MemoryRoot) -> tuple[dict[str, Any] | None, str]:
    path = state_file(root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, ""  # a root from before snapshots: HEAD stands in (checked below)
    except OSError as exc:
        return None, f"{path}: unreadable ({exc.strerror})"
    try:
        state = json.loads(raw)
        ok = (
            isinstance(state, dict)
            and state.get("schema_version") == SCHEMA_VERSION
            and isinstance(state.get("commit"), str)
            and len(state["commit"]) == 40
            and isinstance(state.get("files"), dict)
        )
    except ValueError:
        ok = False
    if not ok:
        return None, f"{path}: malformed Canon snapshot"
    return state, ""


def _trusted_commit(store: _Objects, commit: str, problems: list[str]) -> str:
    """``commit`` if the writer made it, else its newest first-parent ancestor the writer made."""
    current: str | None = commit
    for _ in range(_MAX_WALK):
        if current is None:
            break
        try:
            message, parents = store.commit(current)
        except InvalidInput:
            problems.append(f"commit {current[:10]} is not in the object store")
            break
        trailers = parse_trailers(message)
        actor = trailers.get("Actor", "")
        if actor in WRITER_ACTORS and (actor == "init" or trailers.get("Evidence-Id")):
            if current != commit:
                problems.append(
                    f"commit {commit[:10]} was not made by the writer; "
                    f"the last writer commit is {current[:10]}"
                )
            return current
        current = parents[0] if parents else None
    raise InvalidInput(
        f"no Canon commit made by the writer found from {commit[:10]} (run 'evolving-agent verify')"
    )


def _scan_disk(root: MemoryRoot) -> TreeFiles:
    """Every regular file under canon/ (bytes by root-relative path), never following
    links; what was reported (symlinks, unreadable files) is flagged so it is not
    reported a second time as missing."""
    base = root.path / CANON_DIR
    try:
        st = os.lstat(base)
    except FileNotFoundError:
        return TreeFiles(flagged={CANON_DIR}, problems=[f"{base}: missing"])
    if not stat.S_ISDIR(st.st_mode):
        return TreeFiles(flagged={CANON_DIR}, problems=[f"{base}: not a directory (a symlink?)"])
    return read_files(root.path, (CANON_DIR,))


# -- git objects without git -----------------------------------------------------------------


class _Objects:
    """Read refs, commits, trees and blobs from ``.git``: loose objects with zlib, the rest
    (packed after a ``git gc``) with one ``git cat-file`` each."""

    def __init__(self, root: MemoryRoot) -> None:
        self.root = root
        self.git_dir = root.path / ".git"

    # refs
    def head(self) -> str | None:
        try:
            ref = (self.git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        for _ in range(5):
            if not ref.startswith("ref: "):
                return ref if _is_sha(ref) else None
            name = ref[5:].strip()
            try:
                ref = (self.git_dir / name).read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                return self._packed_ref(name)
            except OSError:
                return None
        return None

    def _packed_ref(self, name: str) -> str | None:
        try:
            lines = (self.git_dir / "packed-refs").read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        for line in lines:
            sha, _, ref = line.partition(" ")
            if ref.strip() == name and _is_sha(sha):
                return sha
        return None

    # objects
    def _read(self, sha: str, kind: bytes) -> bytes:
        path = self.git_dir / "objects" / sha[:2] / sha[2:]
        try:
            raw = zlib.decompress(path.read_bytes())
        except FileNotFoundError:
            return self._read_packed(sha, kind)
        except (OSError, zlib.error):
            raise InvalidInput(f"git object {sha[:10]} is unreadable") from None
        header, _, body = raw.partition(b"\0")
        if header.split(b" ")[0] != kind:
            raise InvalidInput(f"git object {sha[:10]} is not a {kind.decode()}")
        return body

    def _read_packed(self, sha: str, kind: bytes) -> bytes:
        # Objects are packed only after a 'git gc'; then 'git cat-file' reads them, through
        # the hardened runner like every other git call.
        from evolving_agent.gitcmd import git

        # --batch names the object's real type ('cat-file TYPE' would peel a commit to its
        # tree), so a tree entry pointing at the wrong kind of object is still refused.
        res = git(self.root.path, "cat-file", "--batch", input=sha.encode() + b"\n", check=False)
        header, _, body = res.stdout.partition(b"\n")
        fields = header.split()
        if not res.ok or len(fields) != 3 or fields[1] == b"missing":
            raise InvalidInput(f"git object {sha[:10]} is not in the object store")
        if fields[1] != kind:
            raise InvalidInput(f"git object {sha[:10]} is not a {kind.decode()}")
        return body[: int(fields[2])]

    def commit(self, sha: str) -> tuple[str, list[str]]:
        body = self._read(sha, b"commit")
        head, _, message = body.partition(b"\n\n")
        parents = [
            line[7:].decode("ascii") for line in head.split(b"\n") if line.startswith(b"parent ")
        ]
        return message.decode("utf-8", "replace"), parents

    def _tree_of(self, commit: str) -> str:
        body = self._read(commit, b"commit")
        first = body.split(b"\n", 1)[0]
        if not first.startswith(b"tree "):
            raise InvalidInput(f"git commit {commit[:10]} has no tree")
        return first[5:].decode("ascii")

    def _entries(self, tree: str) -> list[tuple[bytes, bytes, str]]:
        body = self._read(tree, b"tree")
        out = []
        i = 0
        while i < len(body):
            sp = body.index(b" ", i)
            nul = body.index(b"\0", sp)
            out.append((body[i:sp], body[sp + 1 : nul], body[nul + 1 : nul + 21].hex()))
            i = nul + 21
        return out

    def canon_tree(self, commit: str) -> tuple[dict[str, tuple[bytes, str]], list[str]]:
        """``{root-relative path: (mode, blob id)}`` of the regular files under canon/."""
        canon = [
            sha for mode, name, sha in self._entries(self._tree_of(commit)) if name == b"canon"
        ]
        files: dict[str, tuple[bytes, str]] = {}
        problems: list[str] = []
        stack = [(canon[0], CANON_DIR)] if canon else []
        while stack:
            tree, rel = stack.pop()
            for mode, name, sha in self._entries(tree):
                path = f"{rel}/{os.fsdecode(name)}"
                if mode == b"40000":
                    stack.append((sha, path))
                elif mode in _REGULAR_MODES:
                    files[path] = (mode, sha)
                else:
                    problems.append(f"{path} in commit {commit[:10]} is not a regular file")
        return files, problems

    def blob(self, sha: str) -> bytes:
        return self._read(sha, b"blob")


def _is_sha(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text)
