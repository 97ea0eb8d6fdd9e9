"""The one permission-checked writer, and the read-scoped job context.

Every write in the product goes through :class:`Writer`.  It knows its actor, checks
the policy before touching disk, confines paths to their layer, writes atomically
under a file lock, and on refusal changes nothing, appends a ``write-denied`` record
to Evidence and raises :class:`WriteDenied`.  Canon writes are committed to git with
an ``Evidence-Id`` trailer pointing at a ``canon-write`` provenance record.

:class:`ScopedReader` is the read side: a job gets one for its actor (and, for
Evidence, a date window) and any read outside that scope raises ``ReadOutOfScope``.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import field
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from evolving_agent.errors import InvalidInput, InvalidPath, ReadOutOfScope, WriteDenied
from evolving_agent.fsio import in_flight
from evolving_agent.memory.base.atomic import atomic_write, open_dir, read_plain
from evolving_agent.memory.base.locks import area_lock
from evolving_agent.memory.base.redact import redact
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.policy import HUMAN_ONLY_WRITERS, Actor, Policy, check_actor
from evolving_agent.memory.canon.signing import (
    SIG_SUFFIX,
    SigningState,
    can_sign,
    file_signed,
    git_signing_args,
    sign_file,
)
from evolving_agent.memory.evidence.day_stream import DayStream
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog, EvidenceRecord, now
from evolving_agent.memory.evidence.signing_chain import in_force
from evolving_agent.paths import AREAS, Area, MemoryRoot, area_parts
from evolving_agent.records import record

NAME_MAX = 255  # bytes in one file name (Linux, macOS)

# Layers whose human writes carry a detached signature when signing is on (Canon's
# commits are signed by git itself): what boot and the jobs take as the human's word.
SIGNED_AREAS: frozenset[Area] = frozenset({"decisions", "today"})

# What a denial or a path check names: an area, or "config" (schedule.yaml, crons/).
Target = Area | Literal["config"]


@record(frozen=True)
class Approval:
    """What the monthly job holds when it applies a human-approved diff to Canon."""

    review_id: str
    approver: str
    evidence_ids: tuple[str, ...] = ()


class SymlinkRefused(InvalidPath):
    """A layer directory, a directory below it or the target is a symlink (or not a
    plain directory / file): following it could land a write in another layer."""

    def __init__(self, layer: str, relpath: str, reason: str) -> None:
        super().__init__(layer, relpath, reason)
        self.reason = reason


def confine(root: MemoryRoot, area: Area, relpath: str) -> Path:
    """Resolve ``relpath`` inside ``area``; refuse anything that would leave it.

    The check works on real paths: the root is resolved once (it may itself sit behind
    a symlink), and every component below it - the layer directory, the directories
    of ``relpath`` and the target - must be a plain directory or file, never a
    symlink, so ``today -> canon`` cannot turn a Today write into a Canon write.
    The writes themselves then walk the same components with ``O_NOFOLLOW``.
    """
    parts = _area_path_parts(area, relpath)
    check_plain_path(root, parts, area=area, relpath=relpath)
    return root.real.joinpath(*parts)


# The checks of the name alone, once a name: a night reads and writes the same few files
# of Today and Evidence hundreds of times (the filesystem is checked every time).
@functools.lru_cache(maxsize=1024)
def _area_path_parts(area: Area, relpath: str) -> tuple[str, ...]:
    if area not in AREAS:
        raise InvalidInput(f"unknown layer {area!r} (valid: {', '.join(AREAS)})")
    if not relpath or relpath.strip() in {"", "."}:
        raise InvalidPath(area, relpath, "empty path")
    if "\0" in relpath:
        raise InvalidPath(area, relpath, "NUL byte in path")
    pure = PurePosixPath(relpath)
    if pure.is_absolute() or os.path.isabs(relpath):
        raise InvalidPath(area, relpath, "absolute paths are not allowed")
    if any(part == ".." for part in pure.parts):
        raise InvalidPath(area, relpath, "'..' is not allowed")
    if any(part.startswith(".") for part in pure.parts):
        raise InvalidPath(area, relpath, "hidden files are reserved")
    if any(len(part.encode("utf-8", "surrogateescape")) > NAME_MAX for part in pure.parts):
        raise InvalidPath(area, relpath[:40] + "…", f"a name is longer than {NAME_MAX} bytes")
    return (*area_parts(area), *pure.parts)


def check_plain_path(
    root: MemoryRoot, parts: tuple[str, ...], *, area: Target, relpath: str, is_dir: bool = False
) -> None:
    """Refuse when any existing component of ``root/parts`` is a symlink, or a
    directory component is not a directory, or the last one not a regular file."""
    # Plain strings, not Path objects: every read and write of a layer walks this, and
    # pathlib's parsing was most of its cost.
    where = os.fspath(root.real)
    for i, part in enumerate(parts):
        where = os.path.join(where, part)
        try:
            mode = os.lstat(where).st_mode
        except FileNotFoundError:
            return  # the rest will be created as plain directories and a file
        last = i == len(parts) - 1
        if stat.S_ISLNK(mode):
            problem = "is a symlink"
        elif (not last or is_dir) and not stat.S_ISDIR(mode):
            problem = "is not a directory"
        elif last and not is_dir and not stat.S_ISREG(mode):
            problem = "is not a regular file"
        else:
            continue
        raise SymlinkRefused(area, relpath, f"{'/'.join(parts[: i + 1])} {problem}")


def _area_rel(root: MemoryRoot, target: Path) -> str:
    return target.relative_to(root.real).as_posix()


def _read_plain(target: Path) -> bytes | None:
    """Bytes of ``target`` opened without following a symlink, or None if absent."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


# Checks of the human's tracked files outside Canon (root-relative path -> check of the
# new bytes).  The models belong to higher layers (schedule.yaml is the jobs' file), so
# they are handed in by the caller instead of imported here: memory imports downward only.
TrackedChecks = Mapping[str, Callable[[bytes], None]]


@record
class Writer:
    """Writes on behalf of one actor.  Build one per actor; it is cheap."""

    root: MemoryRoot
    actor: Actor
    approval: Approval | None = None
    policy: Policy = field(init=False)

    def __post_init__(self) -> None:
        check_actor(self.actor)
        self.policy = Policy.load(self.root)
        self.evidence = EvidenceLog(self.root)

    # -- public API --------------------------------------------------------------

    def write(self, area: Area, relpath: str, content: str | bytes, *, message: str = "") -> Path:
        """Replace ``area/relpath`` with ``content`` atomically.  Returns the path."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        target = self._confine(area, relpath)
        self._authorise(area, relpath)
        if area in SIGNED_AREAS:
            self._require_signer(area, relpath)
        with self._os_refusal(area, relpath), self._lock(area):
            if area == "canon":
                self._write_canon({target: data}, message)
            else:
                self._put(target, data)
                if area in SIGNED_AREAS:
                    self._sign_decision(target)
        return target

    def write_many(self, area: Area, files: dict[str, str | bytes], *, message: str = "") -> None:
        """Replace several files of one layer; Canon gets them in a single commit."""
        targets: dict[Path, bytes] = {}
        for rel, content in files.items():
            targets[self._confine(area, rel)] = (
                content.encode("utf-8") if isinstance(content, str) else content
            )
            self._authorise(area, rel)
        with self._os_refusal(area, ", ".join(files)), self._lock(area):
            if area == "canon":
                self._write_canon(targets, message)
            else:
                for target, data in targets.items():
                    self._put(target, data)

    def update(self, area: Area, relpath: str, fn: Callable[[bytes | None], bytes | None]) -> Path:
        """Read-modify-write under the layer lock; ``fn`` returns None to delete."""
        target = self._confine(area, relpath)
        self._authorise(area, relpath)
        with self._os_refusal(area, relpath), self._lock(area):
            old = _read_plain(target)
            new = fn(old)
            if area == "canon":
                self._write_canon({target: new}, "")
            elif new is None:
                if target.exists():
                    target.unlink()
                target.with_name(target.name + SIG_SUFFIX).unlink(missing_ok=True)
            else:
                self._put(target, new)
        return target

    def delete(self, area: Area, relpath: str) -> bool:
        """Remove ``area/relpath``; True if it existed."""
        existed = self._confine(area, relpath).exists()
        self.update(area, relpath, lambda _old: None)
        return existed

    def write_tracked(
        self,
        files: Mapping[str, bytes | None],
        *,
        message: str = "",
        checks: TrackedChecks | None = None,
    ) -> list[str]:
        """Commit the human's own files outside Canon that only the human may change:
        ``schedule.yaml`` and ``crons/<job>.md`` (and Canon files, by their root-relative
        path), with the same provenance as a Canon write.  Returns what changed.

        ``files`` maps root-relative paths to new bytes (None deletes).  Unchanged files
        (already committed with those bytes) are skipped.  ``checks`` validate the new
        bytes of the files they name before anything is written.
        """
        targets: dict[Path, bytes | None] = {}
        for rel, data in files.items():
            target = self._tracked_target(rel)
            if (
                data is not None
                and gitrepo.committed_blob(self.root, rel) == gitrepo.blob_sha(data)
                and _read_plain(target) == data
            ):
                continue
            if data is None and gitrepo.committed_blob(self.root, rel) is None:
                continue
            targets[target] = data
        if not targets:
            return []
        for rel, check in (checks or {}).items():
            data = files.get(rel)
            if data is not None:
                check(data)
        with self._os_refusal("canon", ", ".join(files)), self._lock("canon"):
            self._write_canon(targets, message)
        return sorted(_area_rel(self.root, t) for t in targets)

    def _tracked_target(self, rel: str) -> Path:
        pure = PurePosixPath(rel)
        if rel.startswith("canon/"):
            target = self._confine("canon", rel.removeprefix("canon/"))
            self._authorise("canon", rel.removeprefix("canon/"))
            return target
        if rel == "schedule.yaml" or (
            len(pure.parts) == 2
            and pure.parts[0] == "crons"
            and rel.endswith(".md")
            and not pure.parts[1].startswith(".")
        ):
            if self.actor not in HUMAN_ONLY_WRITERS:
                self._deny("config", rel, "only the human changes the schedule and the prompts")
            try:
                check_plain_path(self.root, pure.parts, area="config", relpath=rel)
            except SymlinkRefused as exc:
                self._record_denial("config", rel, exc.reason)
                raise
            return self.root.real.joinpath(*pure.parts)
        raise InvalidPath(
            "config", rel, "only schedule.yaml, crons/<job>.md and canon/ files are tracked"
        )

    def append(
        self,
        kind: str,
        text: str = "",
        *,
        session: str | None = None,
        supports: str | None = None,
        contradicts: str | None = None,
        data: dict[str, Any] | None = None,
        ts: Any = None,
    ) -> EvidenceRecord:
        """Append one Evidence record as this actor (anyone may append)."""
        self._authorise("evidence", kind, replace=False)
        draft = EvidenceDraft.model_validate(
            {
                "ts": ts or now(),
                "kind": kind,
                "actor": self.actor,
                "text": text,
                "session": session,
                "supports": supports,
                "contradicts": contradicts,
                "data": data or {},
            }
        )
        return self.evidence.append(draft)

    def require_os_write(self, area: Area, relpath: str = "") -> None:
        """Refuse now (exit 3, recorded) when the OS will not let this user write ``area``:
        for a change that appends Evidence before it writes the layer, so a refused
        one leaves no record claiming a write that never happened."""
        directory = self.root.real.joinpath(*area_parts(area))
        if directory.exists() and not os.access(directory, os.W_OK):
            with self._os_refusal(area, relpath or "."):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(directory))

    def append_drafts(self, drafts: list[EvidenceDraft]) -> list[EvidenceRecord]:
        """Append prepared drafts (bulk import); each must name this writer's actor."""
        self._authorise("evidence", "import", replace=False)
        for d in drafts:
            if d.actor != self.actor:
                self._deny("evidence", "import", f"a record claims actor '{d.actor}'")
        return self.evidence.append_many(drafts)

    # -- internals -----------------------------------------------------------------

    def _confine(self, area: Area, relpath: str) -> Path:
        """:func:`confine`, recording a symlink escape attempt as a denied write."""
        try:
            return confine(self.root, area, relpath)
        except SymlinkRefused as exc:
            if area != "evidence":  # a broken Evidence directory cannot record anything
                self._record_denial(area, relpath, exc.reason)
            raise

    def _put(self, target: Path, data: bytes) -> None:
        """Atomic, private write that follows no symlink below the root."""
        atomic_write(target, data, base=self.root.real)

    def _authorise(self, area: Area, relpath: str, *, replace: bool = True) -> None:
        if not self.policy.may_write(self.actor, area):
            self._deny(area, relpath, "")
        if area == "evidence" and replace:
            self._deny(area, relpath, "Evidence is append-only; use 'evidence append'")
        if area == "canon" and self.actor == "monthly":
            reason = self._approval_problem()
            if reason:
                self._deny(area, relpath, reason)

    def _approval_problem(self) -> str:
        if self.approval is None:
            return "the monthly job needs an approved review to write canon"
        from evolving_agent.memory.canon.approvals import approved_review

        if not approved_review(self.root, self.approval.review_id):
            return f"review {self.approval.review_id} is not approved, or was already applied"
        state = in_force(self.root)
        decision = self.root.area_dir("decisions") / f"{self.approval.review_id}.json"
        if state.enabled and not file_signed(state, decision):
            return f"signing is on and the decision on {self.approval.review_id} is not signed"
        return ""

    def _signing_args(self) -> list[str] | None:
        """git options that sign this commit: the human's, when signing is on."""
        if self.actor != "human":
            return None
        state = in_force(self.root)
        if not state.enabled:
            return None
        self._require_signer("canon", "(commit)", state)
        return git_signing_args(state)

    def _require_signer(self, area: Area, relpath: str, state: SigningState | None = None) -> None:
        """With signing on, a human write this process cannot sign is refused (exit 3,
        recorded) before anything lands: "human" is then the key, not a word."""
        if self.actor != "human":
            return
        state = state or in_force(self.root)
        if not state.enabled or can_sign(state.key):
            return
        what = "commit" if area == "canon" else f"write to {area}"
        self._deny(
            area,
            relpath,
            "signing is on and this user has no pinned signing key it can use; a human "
            f"{what} must be signed by {state.fingerprint} (evolving-agent signing status)",
        )

    def _sign_decision(self, target: Path) -> None:
        """A human decision, edit or Today file gets its signature beside it, when
        signing is on."""
        state = in_force(self.root)
        if self.actor == "human" and state.enabled:
            sign_file(state, target)

    def _deny(self, area: Target, relpath: str, reason: str) -> None:
        self._record_denial(area, relpath, reason)
        raise WriteDenied(self.actor, area, relpath, reason)

    def _record_denial(self, area: Target, relpath: str, reason: str) -> None:
        self.evidence.append(
            EvidenceDraft(
                ts=now(),
                kind="write-denied",
                actor=self.actor,
                text=f"{self.actor} tried to write {area}/{relpath}",
                data={"layer": area, "path": relpath, "reason": reason},
            )
        )

    @contextmanager
    def _os_refusal(self, area: Area, relpath: str) -> Iterator[None]:
        """The operating system's refusal is a denied write too: in the OS-user
        deployment (memory/sync/deploy.py) the assistant's user may not write canon/,
        reviews/, .git or .ea/, whatever actor it claims.  Recorded when Evidence
        takes the record (the assistant's user may append), then exit 3."""
        try:
            yield
        except PermissionError as exc:
            where = exc.filename or "?"
            reason = f"the operating system refused it ({exc.strerror}: {where})"
            try:
                self._record_denial(area, relpath, reason)
            except OSError:
                pass  # Evidence is not writable by this user either: the error still says it
            raise WriteDenied(self.actor, area, relpath, reason) from None

    @contextmanager
    def _lock(self, area: Area) -> Iterator[None]:
        # Refuses a symlinked .ea/ or .ea/locks/ as every other write does (0700 if new).
        parts = self.root.lock_dir.relative_to(self.root.path).parts
        os.close(open_dir(self.root.real, list(parts)))
        # A human-only layer's lock is where only the human can create a file, a shared
        # layer's waits seconds at most for another user (memory/base/locks.py).
        with area_lock(self.root, area):
            _clear_temps(self.root, area)
            yield

    def _write_canon(self, targets: Mapping[Path, bytes | None], message: str) -> None:
        # Only a Canon write needs Canon's models and its snapshot: imported here, a
        # command that reads or writes only other layers does not build them.
        from evolving_agent.memory.canon.canon import check_canon_text
        from evolving_agent.memory.canon.canon_snapshot import record_canon_snapshot

        # A user the OS will not let write Canon or git (the assistant's, in the OS-user
        # deployment) is refused before the canon-write record, which would otherwise
        # name a tree that never reached git.
        for directory in {t.parent for t in targets} | {self.root.real / ".git"}:
            if directory.exists() and not os.access(directory, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(directory))
        # A commit message is kept in git forever and printed by 'canon log': no keys.
        message = redact(message)
        for target, content in targets.items():
            if content is not None:
                rel = _area_rel(self.root, target).removeprefix("canon/")
                check_canon_text(self.root, rel, content)
        gitrepo.require_repo(self.root)  # no repository: refuse before anything is written
        sign = self._signing_args()  # refuses an unsignable human commit before any write
        rels = {t: _area_rel(self.root, t) for t in targets}
        blobs = {
            rels[t]: (gitrepo.blob_sha(d) if d is not None else None) for t, d in targets.items()
        }
        # The whole tracked tree after this write: verify compares HEAD with the last
        # one recorded, so a commit dropped by 'git reset' is a rollback, not history.
        tree = gitrepo.tracked_tree(self.root)
        for rel, sha in blobs.items():
            if sha is None:
                tree.pop(rel, None)
            else:
                tree[rel] = sha
        data: dict[str, Any] = {"blobs": blobs, "tree": dict(sorted(tree.items()))}
        if self.approval is not None:
            data.update(
                review_id=self.approval.review_id,
                approver=self.approval.approver,
                evidence_ids=list(self.approval.evidence_ids),
            )
        record = self.append(
            "canon-write", message or f"{self.actor} changed {', '.join(blobs)}", data=data
        )
        for target, payload in targets.items():
            if payload is None:
                if target.exists():
                    target.unlink()
            else:
                self._put(target, payload)
        trailers = {"Actor": self.actor, "Evidence-Id": record.id}
        if self.approval is not None:
            trailers.update(
                {
                    "Review-Id": self.approval.review_id,
                    "Approved-By": self.approval.approver,
                    "Evidence-Ids": ", ".join(self.approval.evidence_ids) or "-",
                }
            )
        gitrepo.commit_contents(
            self.root,
            {rels[t]: d for t, d in targets.items()},
            message or f"canon: {self.actor} changed {', '.join(blobs)}",
            trailers,
            sign=sign,
        )
        record_canon_snapshot(self.root)  # boot serves only Canon matching this commit


def _clear_temps(root: MemoryRoot, area: Area) -> None:
    """Remove ``.NAME.XXXX.tmp`` files a killed writer left in ``area`` (and one level
    below).  Called under the area's lock, so no live writer of the area owns one."""
    base = root.real.joinpath(*area_parts(area))
    for pattern in (".*.tmp", "*/.*.tmp"):
        for tmp in base.glob(pattern):
            if not in_flight(tmp.name):
                continue  # a hand-made file that only looks like a temp is not ours to remove
            try:
                if tmp.is_file() and not tmp.is_symlink():
                    tmp.unlink()
            except OSError:
                continue


def accept_hand_edits(
    root: MemoryRoot,
    relpaths: list[str],
    *,
    message: str = "",
    checks: TrackedChecks | None = None,
) -> list[str]:
    """Commit the human's hand edits of tracked files (as found on disk) through the
    writer, validated, with provenance.  Returns the paths that changed."""
    files: dict[str, bytes | None] = {}
    for rel in relpaths:
        rel = PurePosixPath(rel).as_posix()
        if ".." in PurePosixPath(rel).parts or rel.startswith("/"):
            raise InvalidPath("config", rel, "give a path relative to the memory root")
        files[rel] = read_plain(root.real, PurePosixPath(rel).parts)
    return Writer(root, "human").write_tracked(
        files,
        message=message or f"human accepted hand edits of {', '.join(sorted(files))}",
        checks=checks,
    )


@record
class ScopedReader:
    """Reads on behalf of one actor, refusing anything outside its scope.

    ``evidence_window`` (inclusive first/last day) narrows Evidence further: the
    nightly job gets one day, the weekly job one week.
    """

    root: MemoryRoot
    actor: Actor
    evidence_window: tuple[date, date] | None = None

    def __post_init__(self) -> None:
        check_actor(self.actor)

    def _check(self, area: Area, detail: str = "") -> None:
        if not Policy.may_read(self.actor, area):
            raise ReadOutOfScope(self.actor, area, detail)

    def path(self, area: Area, relpath: str) -> Path:
        self._check(area, relpath)
        return confine(self.root, area, relpath)

    def read_text(self, area: Area, relpath: str) -> str | None:
        """Text of ``area/relpath``, or None when it does not exist."""
        p = self.path(area, relpath)
        try:
            return p.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise InvalidInput("not UTF-8 text", file=p) from None

    def read_json(self, area: Area, relpath: str) -> Any:
        text = self.read_text(area, relpath)
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError as exc:
            raise InvalidInput(f"malformed JSON: {exc}", file=self.path(area, relpath)) from None

    def list(self, area: Area, pattern: str = "*") -> list[Path]:
        self._check(area)
        check_plain_path(self.root, area_parts(area), area=area, relpath=".", is_dir=True)
        base = self.root.area_dir(area)
        return sorted(p for p in base.glob(pattern) if p.is_file()) if base.exists() else []

    def evidence(self, start: date, end: date | None = None) -> Iterator[EvidenceRecord]:
        """Evidence records of days start..end, inside this reader's window."""
        end = end or start
        self._check("evidence", f"{start}..{end}")
        if self.evidence_window is not None:
            lo, hi = self.evidence_window
            if start < lo or end > hi:
                raise ReadOutOfScope(
                    self.actor, "evidence", f"{start}..{end} is outside {lo}..{hi}"
                )
        return EvidenceLog(self.root).iter_range(start, end)

    def day_stream(self, day: date) -> DayStream:
        """One day of Evidence read lazily, checked against its chain as it is read
        (for a reader whose day nobody bounds: the nightly job)."""
        self._check("evidence", str(day))
        if self.evidence_window is not None:
            lo, hi = self.evidence_window
            if not lo <= day <= hi:
                raise ReadOutOfScope(self.actor, "evidence", f"{day} is outside {lo}..{hi}")
        return DayStream(EvidenceLog(self.root), day)
