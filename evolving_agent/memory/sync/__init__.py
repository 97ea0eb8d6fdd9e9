"""sync: one self on several devices, exchanged through a git remote.

Two branches travel, both fast-forward only (nothing is ever force-pushed, and no
local ref ever moves backwards):

- ``main`` - Canon's history, exactly as on a single device.  Sync only fast-forwards
  it, to a history whose every Canon commit passes ``verify`` (review provenance,
  signatures where signing is on).  When Canon changed on two devices since they last
  synced, sync stops (:class:`CanonDiverged`): two identity changes made apart are the
  human's to reconcile, not a merge's.
- ``ea-data`` - the other layers as files: ``evidence/devices/<id>/DAY.jsonl`` (every
  device's chain; on disk, a device's own chain is ``evidence/DAY.jsonl``), ``live/``,
  ``today/``, ``reviews/`` and ``sync/`` (device register, today writer).  Each device
  commits a snapshot of its state and merges the remote's: Evidence is a union (a
  device's file may only grow, and its new lines must continue its chain), the Live Bus
  merges per key (newest wins; the replaced value is kept in an Evidence ``sync``
  record), Today comes from the today writer, reviews and decisions are shared.

Refused, with nothing changed locally (exit 5, :class:`SyncRefused`): a remote branch
that no longer contains what this device last synced (force-push, reset), a device's
chain cut, rewritten or dropped, a Canon commit without provenance.

Crash safety: the merge is built with plumbing in a temporary index and committed
before anything on disk changes; ``refs/ea/applying`` journals which commit is being
put on disk, so a sync killed at any point is completed by the next one (every step is
idempotent and guarded by compare-and-swap ref updates).  The remote only ever sees
fast-forward, ``--atomic`` pushes.  Work grows with what changed since the last sync:
the snapshot reads only day files that grew, the merge only paths that changed.

This package is the top of memory/ (it may import every room below it): the sync itself
is here, ``deploy`` shares one root between the human's and the assistant's OS users.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import shutil
import signal
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any

from filelock import FileLock
from pydantic import BaseModel, ConfigDict, ValidationError

from evolving_agent.errors import EXIT_INVALID, EXIT_TAMPERED, EvolvingAgentError, InvalidInput
from evolving_agent.gitcmd import GitResult, git
from evolving_agent.memory.base.atomic import atomic_write, make_private_dir, mkdirs_private
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.canon_snapshot import record_canon_snapshot
from evolving_agent.memory.evidence.devices import (
    TODAY_WRITER_FILE,
    DeviceInfo,
    TodayWriter,
    create_device,
    local_device,
    set_today_writer,
    shared_path,
    today_writer,
)
from evolving_agent.memory.evidence.evidence import (
    EvidenceDraft,
    EvidenceLog,
    genesis,
    now,
    parse_line,
)
from evolving_agent.paths import LAYERS, REVIEW_AREAS, MemoryRoot

DATA_BRANCH = "ea-data"
DATA_REF = f"refs/heads/{DATA_BRANCH}"
MAIN_BRANCH = "main"
APPLYING_REF = "refs/ea/applying"
APPLYING_MAIN_REF = "refs/ea/applying-main"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO = gitrepo.ZERO_SHA
REMOTES_FILE = "remotes.json"  # below .ea/
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
KILL_ENV = "EVOLVING_AGENT_SYNC_KILL_AT"  # tests: SIGKILL this process at a named step
# Shared areas of the data branch (besides evidence/): tree path prefix = disk path.
SHARED_PREFIXES = ("live/", "today/", "reviews/proposals/", "reviews/pending/",
                   "reviews/decisions/", "sync/")  # fmt: skip
# Transports sync needs beyond the runner's defaults (which allow local files only):
# ssh and https by name, never ``ext::`` (a URL that runs a command) or ``fd::``.
_NET = (
    "-c", "protocol.ssh.allow=always",
    "-c", "protocol.https.allow=always",
    "-c", "core.sshCommand=ssh",
)  # fmt: skip


# -- errors ------------------------------------------------------------------------


class SyncRefused(EvolvingAgentError):
    """What the remote holds fails the checks; nothing was changed locally."""

    exit_code = EXIT_TAMPERED

    def __init__(self, remote: str, problems: list[str], *, local: bool = False) -> None:
        self.remote = remote
        self.problems = problems
        more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        shown = "; ".join(problems[:5]) + more
        who = "this device's own Evidence:" if local else f"remote '{remote}'"
        super().__init__(f"sync refused: {who} {shown} (nothing was changed on this device)")


class CanonDiverged(EvolvingAgentError):
    """Canon changed on this device and on the remote since they last synced.

    Raised after the other layers were exchanged: Evidence keeps flowing, Canon waits.
    """

    exit_code = EXIT_INVALID

    def __init__(self, remote: str, local: str, theirs: str) -> None:
        super().__init__(
            f"Canon not synced: it changed on this device (commit {local[:10]}) and on remote "
            f"'{remote}' (commit {theirs[:10]}) since they last synced, and sync never merges "
            "two identity changes made apart; Evidence and the other layers were synced "
            "(see docs/sync.md, 'Canon changed on two devices')"
        )


# -- remotes -----------------------------------------------------------------------


class Remotes(BaseModel):
    """``.ea/remotes.json``: the remotes of this device, by name."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    remotes: dict[str, str] = {}
    default: str | None = None


def _remotes_path(root: MemoryRoot) -> Path:
    return root.state / REMOTES_FILE


def load_remotes(root: MemoryRoot) -> Remotes:
    path = _remotes_path(root)
    try:
        return Remotes.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return Remotes()
    except ValidationError as exc:
        raise InvalidInput(f"malformed remotes file: {exc.errors()[0]['msg']}", file=path) from None


def add_remote(root: MemoryRoot, name: str, url: str) -> Remotes:
    """Record ``name`` -> ``url`` (the first remote becomes the default)."""
    gitrepo.require_repo(root)
    if not NAME_RE.fullmatch(name):
        raise InvalidInput(f"invalid remote name {name!r}: letters, digits, '.', '_', '-'")
    if not url.strip() or url.startswith("-") or "\n" in url or "::" in url.split("/")[0]:
        raise InvalidInput(
            f"invalid remote URL {url!r} (use a path, ssh://host/path, host:path or https://…)"
        )
    remotes = load_remotes(root)
    if name in remotes.remotes:
        raise InvalidInput(f"remote {name!r} already exists ({remotes.remotes[name]})")
    remotes.remotes[name] = _absolute_url(url)
    remotes.default = remotes.default or name
    _save_remotes(root, remotes)
    local_device(root)  # a root made before devices existed gets its id here
    return remotes


def _absolute_url(url: str) -> str:
    """A local path is kept absolute, so sync works from any working directory."""
    if "://" in url or re.match(r"^[^/]+@[^:/]+:", url) or re.match(r"^[^/:]+:[^/]", url):
        return url
    return str(Path(url).expanduser().absolute())


def _save_remotes(root: MemoryRoot, remotes: Remotes) -> None:
    mkdirs_private(root.state)
    atomic_write(_remotes_path(root), remotes.model_dump_json(indent=2).encode() + b"\n")


def resolve_remote(root: MemoryRoot, name: str | None) -> tuple[str, str]:
    remotes = load_remotes(root)
    chosen = name or remotes.default
    if not chosen:
        raise InvalidInput("no remote to sync with (add one: evolving-agent remote add origin URL)")
    if chosen not in remotes.remotes:
        known = ", ".join(remotes.remotes) or "none"
        raise InvalidInput(f"unknown remote {chosen!r} (known: {known})")
    return chosen, remotes.remotes[chosen]


# -- results -----------------------------------------------------------------------


@dataclass
class SyncResult:
    remote: str
    device: str
    offline: bool = False
    offline_reason: str = ""
    unpushed: int = 0  # own records the remote does not hold yet
    received: int = 0  # records of other devices newly held here
    sent: int = 0  # own records newly pushed
    canon_commits: int = 0  # Canon commits fast-forwarded in from the remote
    live_replaced: list[str] = field(default_factory=list)
    resumed: bool = False  # an interrupted sync was completed first
    today_writer: str | None = None
    pushed: bool = False

    @property
    def status(self) -> str:
        """What the scheduler logs after the job name."""
        return self.summary() if self.offline else "done: " + self.summary()

    def summary(self) -> str:
        if self.offline:
            return (
                f"offline: {self.unpushed} local events not yet pushed "
                f"(remote '{self.remote}': {self.offline_reason})"
            )
        parts = [
            f"synced with '{self.remote}': received {self.received} event(s) from other "
            f"devices, sent {self.sent}",
        ]
        if self.canon_commits:
            parts.append(f"{self.canon_commits} verified Canon commit(s) applied")
        if self.live_replaced:
            parts.append(
                f"Live Bus keys taken from the newer device: {', '.join(self.live_replaced)}"
            )
        if self.resumed:
            parts.append("an interrupted sync was completed first")
        return "; ".join(parts)


# -- small git helpers ----------------------------------------------------------------


# The refs sync reads, cached per root between its own updates: one git call instead of
# one per look-up.  Only sync moves refs/ea/* and ea-data (under the sync lock); main is
# always read fresh (gitrepo.head_commit), since the writer moves it.
_REFS: dict[Path, dict[str, str]] = {}


def _rev(root: MemoryRoot, ref: str) -> str | None:
    refs = _REFS.get(root.path)
    if refs is None:
        res = git(
            root.path, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads", "refs/ea"
        )
        refs = {}
        for line in res.text.splitlines():
            sha, _, name = line.partition(" ")
            refs[name] = sha
        _REFS[root.path] = refs
    return refs.get(ref)


def _forget_refs(root: MemoryRoot) -> None:
    _REFS.pop(root.path, None)


def _set_refs(root: MemoryRoot, updates: dict[str, str]) -> None:
    """Point several refs at once (one ``update-ref --stdin`` transaction)."""
    if updates:
        script = "".join(f"update {ref} {sha}\n" for ref, sha in updates.items())
        git(root.path, "update-ref", "--stdin", input=script.encode())
    _forget_refs(root)


def _is_ancestor(root: MemoryRoot, a: str, b: str) -> bool:
    return git(root.path, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def _merge_base(root: MemoryRoot, a: str, b: str) -> str | None:
    res = git(root.path, "merge-base", a, b, check=False)
    return res.text if res.ok and res.text else None


def _update_ref(root: MemoryRoot, ref: str, new: str, old: str | None) -> None:
    _forget_refs(root)
    git(root.path, "update-ref", "-m", "evolving-agent sync", ref, new, old or ZERO)


def _delete_ref(root: MemoryRoot, ref: str) -> None:
    _forget_refs(root)
    git(root.path, "update-ref", "-d", ref, check=False)


@dataclass(frozen=True)
class Entry:
    mode: str
    sha: str
    size: int


def _ls_tree(root: MemoryRoot, rev: str | None, *paths: str) -> dict[str, Entry]:
    if rev is None:
        return {}
    res = git(root.path, "ls-tree", "-r", "-z", "-l", "--full-tree", rev, "--", *paths)
    out: dict[str, Entry] = {}
    for item in res.z_items():
        meta, _, path = item.partition("\t")
        mode, _kind, sha, size = meta.split()
        out[path] = Entry(mode, sha, int(size) if size.isdigit() else 0)
    return out


def _diff(root: MemoryRoot, a: str | None, b: str) -> dict[str, tuple[str | None, str | None, str]]:
    """path -> (old blob, new blob, new mode) for every file that differs a..b."""
    res = git(root.path, "diff-tree", "-r", "-z", "--no-renames", a or EMPTY_TREE, b)
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


def _blob(root: MemoryRoot, sha: str) -> bytes:
    return git(root.path, "cat-file", "blob", sha).stdout


def _hash(root: MemoryRoot, data: bytes) -> str:
    return git(root.path, "hash-object", "-w", "--stdin", input=data).text


def _kill_point(step: str) -> None:
    """Test hook: die here like a power cut (SIGKILL: no cleanup, no finally)."""
    if os.environ.get(KILL_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def _sync_lock(root: MemoryRoot) -> Iterator[None]:
    make_private_dir(root.lock_dir)
    with FileLock(str(root.lock_dir / "sync-run.lock"), mode=0o600):
        yield


def _area_lock(root: MemoryRoot, area: str) -> FileLock:
    # The writer's own lock of that area: a sync write never interleaves with one.
    return FileLock(str(root.lock_dir / f"{area}.lock"), mode=0o600)


# -- path mapping ---------------------------------------------------------------------


_EVIDENCE_PATH = re.compile(r"evidence/devices/(d-[0-9a-f]{12})/(\d{4}-\d\d-\d\d)\.jsonl")


def _disk_path(root: MemoryRoot, tree_path: str, here: str) -> Path:
    m = _EVIDENCE_PATH.fullmatch(tree_path)
    if m:
        device, day = m.groups()
        if device == here:
            return root.real / "evidence" / f"{day}.jsonl"
        return root.real / "evidence" / "devices" / device / f"{day}.jsonl"
    if tree_path.startswith("sync/"):
        return shared_path(root, tree_path)  # the register and today writer sit below .ea/
    return root.real / tree_path


def _safe_tree_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not any(p in ("", ".", "..", ".git") or p.startswith(".") for p in parts)


def _area_of(path: str) -> str:
    if path.startswith("reviews/"):
        return path.split("/")[1]
    return path.split("/")[0]


# -- the snapshot: this device's state as a data commit ----------------------------------


def _read_whole_lines(path: Path) -> bytes:
    """A day file's bytes up to its last newline, read under a shared lock (an append in
    flight is either wholly in or wholly out)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        size = os.fstat(fd).st_size
        data = os.pread(fd, size, 0)
    finally:
        os.close(fd)
    return data[: data.rfind(b"\n") + 1]


def _shared_files(root: MemoryRoot, with_today: bool) -> dict[str, bytes]:
    """Live, Today (the writer's only), reviews and sync/ files on disk: tree path -> bytes."""
    out: dict[str, bytes] = {}
    tops = ["live", "reviews/proposals", "reviews/pending", "reviews/decisions", "sync"]
    if with_today:
        tops.append("today")
    for top in tops:
        # sync/ (device register, today writer) sits below .ea/ on disk.
        home = root.real / ".ea" if top == "sync" else root.real
        base = home / top
        if not base.is_dir() or base.is_symlink():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                full = Path(dirpath) / name
                if name.startswith(".") or full.is_symlink() or not full.is_file():
                    continue
                rel = full.relative_to(home).as_posix()
                out[rel] = full.read_bytes()
    return out


_DAY_FILE = re.compile(r"\d{4}-\d\d-\d\d\.jsonl")
SIZES_FILE = "sync-sizes.json"  # below .ea/: own day files' sizes in the last snapshot


def _own_days(root: MemoryRoot) -> dict[str, int]:
    """This device's day files and their sizes (one directory scan, no parsing)."""
    out: dict[str, int] = {}
    with os.scandir(root.evidence) as entries:
        for entry in entries:
            if _DAY_FILE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                out[entry.name] = entry.stat(follow_symlinks=False).st_size
    return out


def _cached_sizes(root: MemoryRoot, commit: str | None) -> dict[str, int] | None:
    """The sizes recorded with ``commit`` (None when absent, stale or unreadable: the
    snapshot then lists the tree instead)."""
    try:
        data = json.loads((root.state / SIZES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("commit") != commit or commit is None:
        return None
    sizes = data.get("sizes")
    if not isinstance(sizes, dict) or not all(isinstance(v, int) for v in sizes.values()):
        return None
    return sizes


def snapshot(root: MemoryRoot, here: DeviceInfo) -> str | None:
    """Commit this device's state on ``ea-data`` (only if it changed); its commit id.

    Other devices' chains come from the previous data commit, never from disk: a
    device pushes only its own chain.  Own day files whose size matches the last
    snapshot (``.ea/sync-sizes.json``) are neither read nor looked up in git, so the
    cost follows what grew, not how many days exist.
    """
    prev = _rev(root, DATA_REF)
    own_prefix = f"evidence/devices/{here.id}/"
    disk = _own_days(root)
    cached = _cached_sizes(root, prev)
    if cached is None:
        candidates = set(disk) | {
            p.removeprefix(own_prefix) for p in _ls_tree(root, prev, own_prefix)
        }
        sizes: dict[str, int] = {}
    else:
        candidates = {n for n, size in disk.items() if cached.get(n) != size}
        candidates |= set(cached) - set(disk)
        sizes = {n: size for n, size in cached.items() if n not in candidates}
    old_own = (
        _ls_tree(root, prev, *(own_prefix + n for n in sorted(candidates))) if candidates else {}
    )
    writer = today_writer(root)
    i_write_today = writer is None or writer.device == here.id
    changes: dict[str, str | None] = {}
    problems: list[str] = []
    for name in sorted(candidates):
        rel = own_prefix + name
        before = old_own.get(rel)
        day_path = root.evidence / name
        if name not in disk:
            if before is not None:
                problems.append(f"{day_path}: synced day file of this device is gone")
            continue
        if before is not None and disk[name] == before.size:
            sizes[name] = before.size
            continue
        data = _read_whole_lines(day_path)
        if before is not None:
            if len(data) < before.size or gitrepo.blob_sha(data[: before.size]) != before.sha:
                problems.append(
                    f"{day_path}: this device's chain no longer holds what it already synced "
                    f"({before.size} bytes); run 'evolving-agent verify'"
                )
                continue
            if len(data) == before.size:
                sizes[name] = before.size
                continue
        if data:
            changes[rel] = _hash(root, data)
            sizes[name] = len(data)
    if problems:
        raise SyncRefused("", problems, local=True)
    old = _ls_tree(root, prev, *SHARED_PREFIXES)
    files = _shared_files(root, i_write_today)
    for rel, data in files.items():
        entry = old.get(rel)
        if entry is None or entry.sha != gitrepo.blob_sha(data):
            changes[rel] = _hash(root, data)
    for rel in old:
        if rel.startswith(SHARED_PREFIXES) and rel not in files:
            if rel.startswith("today/") and not i_write_today:
                continue
            if rel.startswith("sync/devices/"):
                continue  # the register only grows
            changes[rel] = None
    commit = prev
    if changes or prev is None:
        tree = _write_tree(root, prev, changes)
        parents = ["-p", prev] if prev else []
        message = f"sync: snapshot of device {here.id}"
        commit = git(root.path, "commit-tree", tree, *parents, "-m", message, identity=True).text
        _update_ref(root, DATA_REF, commit, prev)
    if commit != prev or cached is None or sizes != cached:
        record = {"commit": commit, "sizes": dict(sorted(sizes.items()))}
        atomic_write(root.state / SIZES_FILE, json.dumps(record).encode() + b"\n")
    return commit


def _write_tree(root: MemoryRoot, base: str | None, changes: dict[str, str | None]) -> str:
    """A tree: ``base``'s with ``changes`` (path -> blob, None to delete), built in a
    private temporary index (the shared index is never touched)."""
    mkdirs_private(root.state)
    index = root.state / f"sync-index.{os.getpid()}.tmp"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        if base:
            git(root.path, "read-tree", base, env=env)
        else:
            git(root.path, "read-tree", "--empty", env=env)
        info = "".join(
            f"0 {ZERO}\t{p}\0" if sha is None else f"100644 {sha}\t{p}\0"
            for p, sha in sorted(changes.items())
        )
        if info:
            git(root.path, "update-index", "-z", "--index-info", input=info.encode(), env=env)
        return git(root.path, "write-tree", env=env).text
    finally:
        index.unlink(missing_ok=True)


# -- counting ------------------------------------------------------------------------


def unpushed_events(root: MemoryRoot, remote: str, here: DeviceInfo) -> int:
    """Own records the remote is not known to hold (by its last synced data commit)."""
    held = _ls_tree(root, _rev(root, _synced(remote, DATA_BRANCH)), f"evidence/devices/{here.id}/")
    count = 0
    for day_path in root.evidence.glob("*.jsonl"):
        entry = held.get(f"evidence/devices/{here.id}/{day_path.name}")
        size = day_path.stat().st_size
        offset = entry.size if entry else 0
        if size > offset:
            with day_path.open("rb") as fh:
                fh.seek(offset)
                count += fh.read().count(b"\n")
    return count


def _new_own_lines(root: MemoryRoot, before: str | None, after: str, here: DeviceInfo) -> int:
    """Records of this device in ``after`` that ``before`` lacks (reads only changed files)."""
    changed = _diff(root, before, after)
    prefix = f"evidence/devices/{here.id}/"
    pairs = [(old, new) for p, (old, new, _m) in changed.items() if p.startswith(prefix) and new]
    if not pairs:
        return 0
    old_sizes = _sizes(root, [old for old, _new in pairs if old])
    count = 0
    for old, new in pairs:
        data = _blob(root, new)
        count += data[old_sizes.get(old, 0) if old else 0 :].count(b"\n")
    return count


def _sizes(root: MemoryRoot, shas: list[str]) -> dict[str, int]:
    if not shas:
        return {}
    res = git(
        root.path, "cat-file", "--batch-check", input="".join(f"{s}\n" for s in shas).encode()
    )
    out: dict[str, int] = {}
    for line in res.text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            out[parts[0]] = int(parts[2])
    return out


def _incoming(remote: str, branch: str) -> str:
    return f"refs/ea/incoming/{remote}/{branch}"


def _synced(remote: str, branch: str) -> str:
    return f"refs/ea/synced/{remote}/{branch}"


# -- fetch ---------------------------------------------------------------------------


def _fetch(root: MemoryRoot, remote: str, url: str) -> GitResult:
    _kill_point("before-fetch")
    _forget_refs(root)
    res = git(
        root.path,
        *_NET,
        "fetch",
        "--no-tags",
        "--prune",
        "--no-write-fetch-head",
        "-q",
        url,
        f"+refs/heads/*:refs/ea/incoming/{remote}/*",
        check=False,
        timeout=600,
    )
    _forget_refs(root)
    _kill_point("after-fetch")
    return res


def _offline_reason(res: GitResult) -> str:
    lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
    return lines[-1].removeprefix("fatal: ") if lines else f"git exit {res.returncode}"


def _check_not_rewritten(root: MemoryRoot, remote: str) -> None:
    """What this device last synced must still be in the remote's branches."""
    problems = []
    for branch in (MAIN_BRANCH, DATA_BRANCH):
        seen = _rev(root, _synced(remote, branch))
        got = _rev(root, _incoming(remote, branch))
        if seen is None:
            continue
        if got is None:
            problems.append(f"no longer has branch '{branch}' (it held {seen[:10]})")
        elif not _is_ancestor(root, seen, got):
            problems.append(
                f"rewrote branch '{branch}': it no longer contains {seen[:10]}, which this "
                "device synced (a force-push or reset)"
            )
    if problems:
        raise SyncRefused(remote, problems)


# -- merge ---------------------------------------------------------------------------


@dataclass
class MergePlan:
    local: str | None  # this device's data commit (snapshot)
    merged: str | None  # the data commit to hold after the sync
    main_target: str | None  # where main goes (None: no main yet anywhere)
    main_before: str | None
    received: int = 0
    canon_commits: int = 0
    live_notes: list[dict[str, Any]] = field(default_factory=list)
    needs_full_verify: bool = False
    # Canon changed here and there: the data still syncs; main stays; sync then stops.
    canon_diverged: CanonDiverged | None = None


def _check_chain_extension(
    root: MemoryRoot, path: str, old: Entry | None, new_sha: str, problems: list[str]
) -> int:
    """A device's day file may only grow, by lines that continue its chain."""
    data = _blob(root, new_sha)
    offset = old.size if old else 0
    if old is not None and (len(data) < offset or gitrepo.blob_sha(data[:offset]) != old.sha):
        problems.append(f"rewrote {path}: its first {offset} bytes are no longer what was synced")
        return 0
    m = _EVIDENCE_PATH.fullmatch(path)
    assert m is not None
    day = date.fromisoformat(m.group(2))
    tail = data[offset:]
    if tail and not tail.endswith(b"\n"):
        problems.append(f"{path} ends in a partial line")
        return 0
    prev = genesis(day)
    if offset:
        last = data[:offset].rstrip(b"\n").rsplit(b"\n", 1)[-1]
        try:
            prev = json.loads(last)["hash"]
        except (ValueError, KeyError, TypeError):
            problems.append(f"{path}: the synced part ends in an unreadable line")
            return 0
    count = 0
    lineno = data[:offset].count(b"\n")
    for raw in tail.splitlines():
        lineno += 1
        where = f"{path}:{lineno}"
        try:
            rec = parse_line(raw, file=path, line=lineno)
        except InvalidInput as exc:
            problems.append(f"{where}: unreadable record ({exc})")
            return count
        if rec.expected_hash() != rec.hash or rec.expected_id() != rec.id:
            problems.append(f"{where}: record {rec.id} was edited (hash mismatch)")
        elif rec.prev != prev:
            problems.append(f"{where}: chain broken before record {rec.id}")
        elif not rec.fits_day(day):
            problems.append(f"{where}: record {rec.id} dated {rec.day()} in wrong file")
        prev = rec.hash
        count += 1
    return count


def _live_updated(root: MemoryRoot, sha: str) -> tuple[str, dict[str, Any]]:
    try:
        data = json.loads(_blob(root, sha))
        return str(data.get("updated", "")), data
    except (ValueError, AttributeError):
        return "", {}


def _decision_rank(root: MemoryRoot, sha: str) -> tuple[int, str]:
    try:
        data = json.loads(_blob(root, sha))
        return (1 if data.get("commit") else 0, str(data.get("ts", "")))
    except (ValueError, AttributeError):
        return (-1, "")


def plan_merge(
    root: MemoryRoot, remote: str, here: DeviceInfo, local: str | None, theirs: str | None
) -> MergePlan:
    """Check what the remote brings and build the merged data commit (not yet applied)."""
    main_before = gitrepo.head_commit(root)
    main_theirs = _rev(root, _incoming(remote, MAIN_BRANCH))
    plan = MergePlan(local, local, main_before, main_before)
    # Canon: fast-forward only, in either direction.
    if main_theirs is not None and main_theirs != main_before:
        if main_before is None:
            plan.main_target = main_theirs
            plan.needs_full_verify = True
        elif _is_ancestor(root, main_before, main_theirs):
            plan.main_target = main_theirs
            plan.needs_full_verify = True
        elif _is_ancestor(root, main_theirs, main_before):
            pass  # the remote is behind: the push brings it up
        elif _merge_base(root, main_before, main_theirs) is None:
            raise InvalidInput(
                f"remote '{remote}' holds another self's root (its Canon history shares no "
                "commit with this one); use a new remote, or 'clone' it into a new directory"
            )
        else:
            plan.canon_diverged = CanonDiverged(remote, main_before, main_theirs)
    if main_before is None and main_theirs is None:
        raise InvalidInput(f"remote '{remote}' is empty and this root has no history to send")
    if plan.main_target is not None and plan.main_target != main_before:
        span = f"{main_before}..{plan.main_target}" if main_before else plan.main_target
        plan.canon_commits = len(git(root.path, "rev-list", span).text.split())
    if theirs is None or theirs == local:
        return plan
    if local is not None and _is_ancestor(root, theirs, local):
        return plan
    base = _merge_base(root, local, theirs) if local else None
    problems: list[str] = []
    remote_changes = _diff(root, base, theirs)
    local_changes = _diff(root, base, local) if local else {}
    # Only the paths the remote changed: the merge reads what is new, not all that exists.
    ours = (
        _ls_tree(root, local, *remote_changes)
        if len(remote_changes) < 1000
        else _ls_tree(root, local)
    )
    theirs_tree_writer = _ls_tree(root, theirs, TODAY_WRITER_FILE)
    take: dict[str, str | None] = {}
    # Who writes Today after this merge decides whose Today files win.
    writer = today_writer(root)
    if TODAY_WRITER_FILE in remote_changes:
        entry = theirs_tree_writer.get(TODAY_WRITER_FILE)
        their_writer = _parse_writer(root, entry.sha) if entry else None
        if their_writer is not None and (
            TODAY_WRITER_FILE not in local_changes
            or writer is None
            or their_writer.since > writer.since
        ):
            writer = their_writer
            take[TODAY_WRITER_FILE] = entry.sha if entry else None
    i_write_today = writer is None or writer.device == here.id
    for path, (_old, new, mode) in sorted(remote_changes.items()):
        if path == TODAY_WRITER_FILE:
            continue
        if not _safe_tree_path(path) or (new is not None and mode not in ("100644", "100755")):
            problems.append(f"holds {path!r}, which no device writes (mode {mode})")
            continue
        m = _EVIDENCE_PATH.fullmatch(path)
        if m:
            device = m.group(1)
            if new is None:
                problems.append(f"dropped {path} (a device's chain is never deleted)")
            elif device == here.id:
                # Only this device changes its chain, and every commit of it the remote
                # holds is an ancestor of ours: any change there since the base is foreign.
                problems.append(
                    f"holds records in this device's own chain ({path}) that this device "
                    "did not write"
                )
            else:
                plan.received += _check_chain_extension(root, path, ours.get(path), new, problems)
                take[path] = new
            continue
        if path.startswith("evidence/"):
            problems.append(f"holds {path}, which is not a device's day file")
            continue
        if not path.startswith(SHARED_PREFIXES):
            problems.append(f"holds {path}, which no device writes")
            continue
        if path.startswith("sync/devices/"):
            if new is None:
                problems.append(f"dropped the device register entry {path}")
            elif path not in local_changes:
                take[path] = new
            continue
        mine_changed = path in local_changes
        if not mine_changed:
            take[path] = new
            if path.startswith("reviews/"):
                plan.needs_full_verify = True
            continue
        mine = ours.get(path)
        if mine is not None and mine.sha == new:
            continue
        if path.startswith("live/"):
            mine_sha = mine.sha if mine else None
            winner = _newest_live(root, mine_sha, new)
            loser = mine_sha if winner == new else new
            if winner == new:
                take[path] = new
            if loser is not None:
                _u, data = _live_updated(root, loser)
                plan.live_notes.append({"key": path[5:-5], "replaced": data})
        elif path.startswith("today/"):
            if not i_write_today:
                take[path] = new
        elif path.startswith("reviews/decisions/"):
            if new is not None and (
                mine is None or _decision_rank(root, new) > _decision_rank(root, mine.sha)
            ):
                take[path] = new
                plan.needs_full_verify = True
        elif path.startswith("reviews/"):
            if not i_write_today:
                take[path] = new
                plan.needs_full_verify = True
    if problems:
        raise SyncRefused(remote, problems)
    if local is not None and _is_ancestor(root, local, theirs) and not plan.live_notes:
        # Fast-forward: every remote change was accepted as it is.
        if all(take.get(p, "keep") == n for p, (_o, n, _m) in remote_changes.items()):
            plan.merged = theirs
            return plan
    tree = _write_tree(root, local, take)
    parents = [x for p in (local, theirs) if p for x in ("-p", p)]
    plan.merged = git(
        root.path,
        "commit-tree",
        tree,
        *parents,
        "-m",
        f"sync: merge on device {here.id}",
        identity=True,
    ).text
    return plan


def _parse_writer(root: MemoryRoot, sha: str) -> TodayWriter | None:
    try:
        return TodayWriter.model_validate_json(_blob(root, sha))
    except ValidationError:
        return None


def _newest_live(root: MemoryRoot, mine: str | None, theirs: str | None) -> str | None:
    """Per key, newest ``updated`` wins; a deletion loses to a change; ties by blob id."""
    if mine is None or theirs is None:
        return mine or theirs
    a, _ = _live_updated(root, mine)
    b, _ = _live_updated(root, theirs)
    return theirs if (b, theirs) > (a, mine) else mine


# -- verification before anything local changes ----------------------------------------------


def verify_merged(root: MemoryRoot, remote: str, here: DeviceInfo, plan: MergePlan) -> None:
    """Run ``verify`` on the merged state, staged in a private scratch root.

    The scratch root holds the merged files laid out as this device will hold them and
    a repository that borrows this one's objects, with ``main`` at the target; so every
    rule of ``verify`` (provenance, signatures, planted reviews) applies to what the
    remote brings before any of it reaches this device.
    """
    from evolving_agent.memory.verify import verify_root

    stage = root.state / f"sync-stage.{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    try:
        make_private_dir(stage)
        git(stage, "init", "-q", ".")
        alternates = stage / ".git" / "objects" / "info" / "alternates"
        alternates.write_text(str((root.path / ".git" / "objects").resolve()) + "\n")
        if plan.main_target:
            git(stage, "update-ref", "HEAD", plan.main_target)
            _extract(stage, git(stage, "archive", "--format=tar", plan.main_target).stdout, None)
        for layer in LAYERS:
            make_private_dir(stage / layer)
        for area in REVIEW_AREAS:
            make_private_dir(stage / "reviews" / area)
        if plan.merged:
            tar = git(stage, "archive", "--format=tar", plan.merged).stdout
            _extract(stage, tar, here.id)
        # This device's own chain and Canon snapshot are what it holds now.
        for day_path in root.evidence.glob("*.jsonl"):
            shutil.copyfile(day_path, stage / "evidence" / day_path.name)
        _stage_signing(root, MemoryRoot(stage))
        report = verify_root(MemoryRoot(stage))
        problems = [p.replace(str(stage), f"<{remote}>") for p in report.problems]
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    if problems:
        raise SyncRefused(remote, [f"fails verify: {p}" for p in problems])


def _stage_signing(root: MemoryRoot, stage: MemoryRoot) -> None:
    """Where signing is on, the scratch root checks signatures against the key this
    device trusts (its pinned allowed signers), not against anything the remote sent."""
    from evolving_agent.memory.canon.signing import marker_path, signing_state

    state = signing_state(root)
    if not state.enabled:
        return
    mkdirs_private(stage.state)
    if marker_path(root).is_file():
        shutil.copyfile(marker_path(root), marker_path(stage))
    if state.allowed_signers is not None and state.allowed_signers.is_file():
        shutil.copyfile(state.allowed_signers, stage.state / "signing.allowed_signers")


def _extract(stage: Path, tar: bytes, here: str | None) -> None:
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            if not member.isfile() or not _safe_tree_path(member.name):
                continue
            if (
                here is not None
                and _EVIDENCE_PATH.fullmatch(member.name)
                and f"/{here}/" in member.name
            ):
                continue  # this device's own chain is taken from disk
            target = _disk_path(MemoryRoot(stage), member.name, here or "")
            mkdirs_private(target.parent)
            fh = archive.extractfile(member)
            assert fh is not None
            target.write_bytes(fh.read())


# -- applying ---------------------------------------------------------------------------


def apply_plan(root: MemoryRoot, here: DeviceInfo, plan: MergePlan) -> None:
    """Put the verified merge on disk; journaled, so a kill is finished by the next sync."""
    if plan.merged and plan.merged != plan.local:
        _update_ref(root, APPLYING_REF, plan.merged, _rev(root, APPLYING_REF))
    if plan.main_target and plan.main_target != plan.main_before:
        _update_ref(root, APPLYING_MAIN_REF, plan.main_target, _rev(root, APPLYING_MAIN_REF))
    _kill_point("journaled")
    _finish_apply(root, here)


def _finish_apply(root: MemoryRoot, here: DeviceInfo) -> bool:
    """Complete a journaled apply (this sync's, or one a kill interrupted).  True if any."""
    merged = _rev(root, APPLYING_REF)
    target = _rev(root, APPLYING_MAIN_REF)
    if merged is None and target is None:
        return False
    if merged is not None:
        local = _rev(root, DATA_REF)
        _write_data(root, here, local, merged)
        _kill_point("data-written")
        if local != merged:
            _update_ref(root, DATA_REF, merged, local)
            _rekey_sizes(root, local, merged)
        _delete_ref(root, APPLYING_REF)
    if target is not None:
        _move_main(root, target)
        _delete_ref(root, APPLYING_MAIN_REF)
    return True


def _write_data(root: MemoryRoot, here: DeviceInfo, local: str | None, merged: str) -> None:
    for path, (old, new, _mode) in sorted(_diff(root, local, merged).items()):
        target = _disk_path(root, path, here.id)
        m = _EVIDENCE_PATH.fullmatch(path)
        if m:
            if m.group(1) == here.id or new is None:
                continue  # never write this device's own chain
            data = _blob(root, new)
            if not target.exists() or target.stat().st_size != len(data):
                atomic_write(target, data, base=root.real)
            EvidenceLog(root, m.group(1)).anchor_received(date.fromisoformat(m.group(2)), data)
            continue
        with _area_lock(root, _area_of(path)):
            current = target.read_bytes() if target.is_file() else None
            current_sha = gitrepo.blob_sha(current) if current is not None else None
            if current_sha not in (old, new):
                continue  # changed here since the snapshot: the next sync merges it
            if new is None:
                target.unlink(missing_ok=True)
            elif current_sha != new:
                atomic_write(target, _blob(root, new), base=root.real)
        _kill_point("file-written")


def _rekey_sizes(root: MemoryRoot, old: str | None, new: str) -> None:
    """The merge never changes this device's own chain: its snapshot sizes still hold."""
    sizes = _cached_sizes(root, old)
    if sizes is not None:
        record = {"commit": new, "sizes": sizes}
        atomic_write(root.state / SIZES_FILE, json.dumps(record).encode() + b"\n")


def _move_main(root: MemoryRoot, target: str) -> None:
    """Fast-forward main to ``target``: files first, then the ref (compare-and-swap),
    then git's index and the Canon snapshot boot checks - all under the writer's Canon
    lock, so an approval on this device cannot land in between."""
    with _area_lock(root, "canon"):
        before = gitrepo.head_commit(root)
        if before == target:
            record_canon_snapshot(root)
            return
        if before is not None and not _is_ancestor(root, before, target):
            # Canon was changed here since the plan (or target is already in HEAD's
            # history): nothing to write; the next round plans again from HEAD.
            return
        _fast_forward(root, before, target)


def _fast_forward(root: MemoryRoot, before: str | None, target: str) -> None:
    for path, (_old, new, _mode) in _diff(root, before, target).items():
        if not (gitrepo.is_tracked(path) or path == ".gitignore"):
            continue
        if path != ".gitignore" and not _safe_tree_path(path):
            continue
        disk = root.real / path
        if new is None:
            disk.unlink(missing_ok=True)
        else:
            atomic_write(disk, _blob(root, new), base=root.real)
    _kill_point("canon-written")
    _update_ref(root, "HEAD", target, before)
    git(root.path, "read-tree", target, check=False)  # git's own index, for 'git status'
    record_canon_snapshot(root)


# -- push ---------------------------------------------------------------------------------


def _push(root: MemoryRoot, remote: str, url: str, *, with_main: bool) -> tuple[bool, str]:
    """Fast-forward the remote's branches to ours; (accepted, git's message)."""
    specs = []
    main = gitrepo.head_commit(root) if with_main else None
    data = _rev(root, DATA_REF)
    for branch, sha in ((MAIN_BRANCH, main), (DATA_BRANCH, data)):
        if sha and sha != _rev(root, _incoming(remote, branch)):
            specs.append(f"{sha}:refs/heads/{branch}")
    if not specs:
        return True, ""
    _kill_point("before-push")
    res = git(
        root.path,
        *_NET,
        "push",
        "--atomic",
        "--porcelain",
        "-q",
        url,
        *specs,
        check=False,
        timeout=600,
    )
    _kill_point("after-push")
    return res.ok, (res.stderr + res.stdout.decode(errors="replace"))


def _record_synced(root: MemoryRoot, remote: str, *, with_main: bool) -> None:
    main = gitrepo.head_commit(root) if with_main else _rev(root, _incoming(remote, MAIN_BRANCH))
    updates: dict[str, str] = {}
    for branch, sha in ((MAIN_BRANCH, main), (DATA_BRANCH, _rev(root, DATA_REF))):
        if sha:
            updates[_synced(remote, branch)] = sha
            updates[_incoming(remote, branch)] = sha
    _set_refs(root, updates)


def _accept_incoming(root: MemoryRoot, remote: str) -> None:
    updates: dict[str, str] = {}
    for branch in (MAIN_BRANCH, DATA_BRANCH):
        sha = _rev(root, _incoming(remote, branch))
        if sha:
            updates[_synced(remote, branch)] = sha
    _set_refs(root, updates)


def _note_live(root: MemoryRoot, here: DeviceInfo, notes: list[dict[str, Any]], actor: str) -> None:
    if not notes:
        return
    EvidenceLog(root).append_many(
        EvidenceDraft(
            ts=now(),
            kind="sync",
            actor=actor,
            text=f"Live Bus key {n['key']!r}: a newer value from another device replaced this one",
            data={"live_key": n["key"], "replaced": n["replaced"], "device": here.id},
        )
        for n in notes
    )


# -- the command ---------------------------------------------------------------------------


MAX_ROUNDS = 5  # another device pushing between our fetch and push: fetch again


def sync(root: MemoryRoot, remote_name: str | None = None, *, actor: str = "human") -> SyncResult:
    """Fetch, check, merge, apply, push.  See the module docstring."""
    gitrepo.require_repo(root)
    remote, url = resolve_remote(root, remote_name)
    here = local_device(root)
    with _sync_lock(root):
        _forget_refs(root)  # another process may have synced since this one last looked
        result = SyncResult(remote=remote, device=here.id)
        result.resumed = _finish_apply(root, here)
        return _sync_rounds(root, remote, url, here, result, actor)


def _sync_rounds(
    root: MemoryRoot, remote: str, url: str, here: DeviceInfo, result: SyncResult, actor: str
) -> SyncResult:
    pushed_before = _rev(root, _synced(remote, DATA_BRANCH))
    for _round in range(MAX_ROUNDS):
        fetched = _fetch(root, remote, url)
        if not fetched.ok:
            result.offline = True
            result.offline_reason = _offline_reason(fetched)
            result.unpushed = unpushed_events(root, remote, here)
            return result
        _check_not_rewritten(root, remote)
        theirs = _rev(root, _incoming(remote, DATA_BRANCH))
        if today_writer(root) is None and not _ls_tree(root, theirs, TODAY_WRITER_FILE):
            # The first device to sync writes Today until the user moves it.
            set_today_writer(root, TodayWriter(device=here.id, since=now()))
        local = snapshot(root, here)
        _kill_point("snapshot")
        plan = plan_merge(root, remote, here, local, theirs)
        _kill_point("planned")
        if plan.needs_full_verify:
            verify_merged(root, remote, here, plan)
        apply_plan(root, here, plan)
        _accept_incoming(root, remote)
        result.received += plan.received
        result.canon_commits += plan.canon_commits
        result.live_replaced += [n["key"] for n in plan.live_notes]
        _note_live(root, here, plan.live_notes, actor)
        if plan.live_notes:
            snapshot(root, here)  # the records just appended travel with this push
        with_main = plan.canon_diverged is None
        ok, message = _push(root, remote, url, with_main=with_main)
        if ok:
            _record_synced(root, remote, with_main=with_main)
            if plan.canon_diverged is not None:
                raise plan.canon_diverged
            result.pushed = True
            data = _rev(root, DATA_REF)
            result.sent = _new_own_lines(root, pushed_before, data, here) if data else 0
            writer = today_writer(root)
            result.today_writer = writer.device if writer else None
            return result
        if (
            "rejected" not in message
            and "fetch first" not in message
            and "non-fast-forward" not in message
        ):
            result.offline = True
            result.offline_reason = (
                message.strip().splitlines()[-1] if message.strip() else "push failed"
            )
            result.unpushed = unpushed_events(root, remote, here)
            return result
    raise EvolvingAgentError(
        f"sync gave up after {MAX_ROUNDS} rounds: remote '{remote}' kept moving (another device "
        "syncing at the same time?); run sync again"
    )


# -- clone -------------------------------------------------------------------------------


def clone(url: str, directory: Path, *, name: str | None = None) -> tuple[MemoryRoot, SyncResult]:
    """Make ``directory`` a new device of the self held at ``url``: one command."""
    root = MemoryRoot(directory.absolute())
    if root.path.exists() and (not root.path.is_dir() or any(root.path.iterdir())):
        raise InvalidInput(f"{root.path} exists and is not empty; choose a new directory")
    created = not root.path.exists()
    try:
        make_private_dir(root.path)
        for layer in LAYERS:
            make_private_dir(root.path / layer)
        for area in REVIEW_AREAS:
            make_private_dir(root.path / "reviews" / area)
        make_private_dir(root.path / "crons")
        make_private_dir(root.lock_dir)
        gitrepo.init_repo(root)
        create_device(root, name)
        remotes = Remotes(remotes={"origin": _absolute_url(url)}, default="origin")
        _save_remotes(root, remotes)
        here = local_device(root)
        with _sync_lock(root):
            _forget_refs(root)
            fetched = _fetch(root, "origin", remotes.remotes["origin"])
            if not fetched.ok:
                raise InvalidInput(f"cannot fetch {url}: {_offline_reason(fetched)}")
            if _rev(root, _incoming("origin", MAIN_BRANCH)) is None:
                raise InvalidInput(
                    f"{url} holds no memory root yet (run 'evolving-agent sync' on the device "
                    "that has it first)"
                )
            result = SyncResult(remote="origin", device=here.id)
            result = _sync_rounds(root, "origin", remotes.remotes["origin"], here, result, "human")
        if result.offline:
            raise InvalidInput(f"cannot reach {url}: {result.offline_reason}")
        return root, result
    except BaseException:
        if created:
            shutil.rmtree(root.path, ignore_errors=True)
        else:
            for child in root.path.iterdir():
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink()
        raise


def remote_status(root: MemoryRoot) -> list[dict[str, Any]]:
    """``remote show``: each remote, its URL, and what this device has not pushed yet."""
    here = local_device(root)
    remotes = load_remotes(root)
    out = []
    for name, url in remotes.remotes.items():
        synced = _rev(root, _synced(name, DATA_BRANCH))
        out.append(
            {
                "name": name,
                "url": url,
                "default": name == remotes.default,
                "last_synced_data": synced,
                "unpushed_events": unpushed_events(root, name, here),
            }
        )
    return out
