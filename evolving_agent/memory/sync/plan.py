"""Plan the merge: check what the remote brings, path by path, and build the merged data
commit - nothing on disk changes here (apply.py does that, after check.py).

The steps, in the order :func:`plan_merge` takes them:

1. :func:`plan_canon` - where ``main`` goes: fast-forward only, either way; Canon
   changed on both sides is :class:`CanonDiverged` (the data still syncs);
2. :meth:`Merge.start` - what each side changed since the merge base, and who writes
   Today after this merge (the later claim of the today writer wins);
3. :meth:`Merge.take` - each path the remote changed, checked before it is taken: a
   device's day file may only grow by lines that continue its chain
   (:func:`~evolving_agent.memory.evidence.evidence.check_chain`, verify's own rule); a file
   a reader parses must parse (:func:`received_problem`); a path no device writes is
   refused; a conflict is resolved by its layer's rule (:meth:`Merge.resolve`);
4. :meth:`Merge.commit` - the merged data commit (or the remote's, on a fast-forward).

Any problem refuses the whole sync (:class:`SyncRefused`, exit 5) before anything is
applied; reviews and decisions then go through ``verify`` on a staged copy (check.py).
"""

from __future__ import annotations

import json
from dataclasses import field
from datetime import date
from typing import Any

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import InvalidInput, first_error
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import (
    TODAY_WRITER_FILE,
    DeviceInfo,
    TodayWriter,
    today_writer,
)
from evolving_agent.memory.evidence.evidence import check_chain
from evolving_agent.memory.ops.live import LiveEntry
from evolving_agent.memory.ops.today import Carry
from evolving_agent.memory.sync.base import (
    MAIN_BRANCH,
    SHARED_PREFIXES,
    CanonDiverged,
    SyncRefused,
    evidence_path,
    incoming,
    safe_tree_path,
)
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

Changes = dict[str, tuple[str | None, str | None, str]]  # path -> (old blob, new blob, mode)


@record
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


def plan_merge(
    root: MemoryRoot, remote: str, here_id: str, local: str | None, theirs: str | None
) -> MergePlan:
    """Check what the remote brings and build the merged data commit (not yet applied)."""
    plan = plan_canon(root, remote, local)
    if theirs is None or theirs == local:
        return plan
    if local is not None and gitrepo.is_ancestor(root, theirs, local):
        return plan  # the remote is behind: the push brings it up
    merge = Merge.start(root, here_id, plan, local, theirs)
    for path, (_old, new, mode) in sorted(merge.remote_changes.items()):
        merge.take(path, new, mode)
    if merge.problems:
        raise SyncRefused(remote, merge.problems)
    plan.merged = merge.commit()
    return plan


# -- 1. Canon ------------------------------------------------------------------------------


def plan_canon(root: MemoryRoot, remote: str, local: str | None) -> MergePlan:
    """Where main goes: the remote's main when it is ahead, else where it is."""
    main_before = gitrepo.head_commit(root)
    main_theirs = gitrepo.ref(root, incoming(remote, MAIN_BRANCH))
    plan = MergePlan(local, local, main_before, main_before)
    if main_before is None and main_theirs is None:
        raise InvalidInput(f"remote '{remote}' is empty and this root has no history to send")
    if main_theirs is None or main_theirs == main_before:
        return plan
    if main_before is None or gitrepo.is_ancestor(root, main_before, main_theirs):
        plan.main_target = main_theirs
        plan.needs_full_verify = True
        span = f"{main_before}..{main_theirs}" if main_before else main_theirs
        plan.canon_commits = len(gitrepo.rev_list(root, span))
    elif gitrepo.is_ancestor(root, main_theirs, main_before):
        pass  # the remote is behind: the push brings it up
    elif gitrepo.merge_base(root, main_before, main_theirs) is None:
        raise InvalidInput(
            f"remote '{remote}' holds another self's root (its Canon history shares no "
            "commit with this one); use a new remote, or 'clone' it into a new directory"
        )
    else:
        plan.canon_diverged = CanonDiverged(remote, main_before, main_theirs)
    return plan


# -- 2.-4. the data branch -----------------------------------------------------------------


@record
class Merge:
    """The data merge being planned: what each side changed, and what is taken."""

    root: MemoryRoot
    here_id: str
    plan: MergePlan
    local: str | None
    theirs: str
    remote_changes: Changes
    local_changes: Changes
    ours: dict[str, gitrepo.TreeEntry]  # this side's entries of the paths the remote changed
    i_write_today: bool = True
    take_: dict[str, str | None] = field(default_factory=dict)  # path -> blob (None: delete)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def start(
        cls, root: MemoryRoot, here_id: str, plan: MergePlan, local: str | None, theirs: str
    ) -> Merge:
        base = gitrepo.merge_base(root, local, theirs) if local else None
        remote_changes = gitrepo.diff_trees(root, base, theirs)
        # Only the paths the remote changed: the merge reads what is new, not all there is.
        ours = (
            gitrepo.ls_tree(root, local, *remote_changes)
            if len(remote_changes) < 1000
            else gitrepo.ls_tree(root, local)
        )
        local_changes = gitrepo.diff_trees(root, base, local) if local else {}
        merge = cls(root, here_id, plan, local, theirs, remote_changes, local_changes, ours)
        merge.choose_today_writer()
        return merge

    def choose_today_writer(self) -> None:
        """Who writes Today after this merge decides whose Today files win: the remote's
        claim when only it changed, or when it is the later one."""
        writer = today_writer(self.root)
        if TODAY_WRITER_FILE in self.remote_changes:
            entry = gitrepo.ls_tree(self.root, self.theirs, TODAY_WRITER_FILE).get(
                TODAY_WRITER_FILE
            )
            theirs = _parse_writer(self.root, entry.sha) if entry else None
            if entry is not None and theirs is None:
                self.problems.append(f"holds {TODAY_WRITER_FILE}, which is not a today writer")
            elif theirs is not None and (
                TODAY_WRITER_FILE not in self.local_changes
                or writer is None
                or theirs.since > writer.since
            ):
                writer = theirs
                self.take_[TODAY_WRITER_FILE] = entry.sha if entry else None
        self.i_write_today = writer is None or writer.device == self.here_id

    def take(self, path: str, new: str | None, mode: str) -> None:
        """Check one path the remote changed, and take it (or keep ours) by its layer's rule."""
        if path == TODAY_WRITER_FILE:
            return  # chosen first (choose_today_writer)
        if not safe_tree_path(path) or (new is not None and mode not in ("100644", "100755")):
            self.problems.append(f"holds {path!r}, which no device writes (mode {mode})")
            return
        if evidence_path(path):
            self.take_chain(path, new)
            return
        if path.startswith("evidence/"):
            self.problems.append(f"holds {path}, which is not a device's day file")
            return
        if not path.startswith(SHARED_PREFIXES):
            self.problems.append(f"holds {path}, which no device writes")
            return
        problem = received_problem(self.root, path, new)
        if problem:
            self.problems.append(problem)
            return
        if path.startswith("sync/devices/"):
            if new is None:
                self.problems.append(f"dropped the device register entry {path}")
            elif path not in self.local_changes:
                self.take_[path] = new
            return
        if path.startswith("reviews/"):
            self.plan.needs_full_verify = True  # verify's review rules, on the staged merge
        if path not in self.local_changes:
            self.take_[path] = new
            return
        mine = self.ours.get(path)
        if mine is None or mine.sha != new:
            self.resolve(path, mine.sha if mine else None, new)

    def take_chain(self, path: str, new: str | None) -> None:
        """Another device's day file: it may only grow, by records that continue its
        chain; this device's own chain and a dropped one are never taken."""
        match = evidence_path(path)
        assert match is not None
        if new is None:
            self.problems.append(f"dropped {path} (a device's chain is never deleted)")
        elif match.group(1) == self.here_id:
            # Only this device changes its chain, and every commit of it the remote
            # holds is an ancestor of ours: any change there since the base is foreign.
            self.problems.append(
                f"holds records in this device's own chain ({path}) that this device did not write"
            )
        else:
            day = date.fromisoformat(match.group(2))
            self.plan.received += _check_growth(self.root, path, day, self.ours.get(path), new,
                                                self.problems)  # fmt: skip
            self.take_[path] = new

    def resolve(self, path: str, mine: str | None, new: str | None) -> None:
        """Both sides changed ``path``: the Live Bus by newest value, Today and reviews
        by the today writer, decisions by the furthest one (applied beats approved)."""
        if path.startswith("live/"):
            winner = _newest_live(self.root, mine, new)
            loser = mine if winner == new else new
            if winner == new:
                self.take_[path] = new
            if loser is not None:
                _updated, data = _live_updated(self.root, loser)
                self.plan.live_notes.append({"key": path[5:-5], "replaced": data})
        elif path.startswith("reviews/decisions/"):
            if new is not None and (
                mine is None or _decision_rank(self.root, new) > _decision_rank(self.root, mine)
            ):
                self.take_[path] = new
        elif path.startswith(("today/", "reviews/")):
            if not self.i_write_today:
                self.take_[path] = new

    def commit(self) -> str:
        """The merged data commit: the remote's own on a fast-forward that took it all."""
        if (
            self.local is not None
            and gitrepo.is_ancestor(self.root, self.local, self.theirs)
            and not self.plan.live_notes
            and all(
                self.take_.get(p, "keep") == n for p, (_o, n, _m) in self.remote_changes.items()
            )
        ):
            return self.theirs
        tree = gitrepo.write_tree(self.root, self.local, self.take_, index_name="sync-index")
        parents = [p for p in (self.local, self.theirs) if p]
        return gitrepo.commit_tree(
            self.root, tree, parents, f"sync: merge on device {self.here_id}"
        )


# -- the checks of what is received ----------------------------------------------------------

# Files a reader parses, by the tree path's prefix: what boot, the Live Bus and the
# device register would choke on is refused at the door, not found later on every device.
_FORMATS: tuple[tuple[str, str, type[BaseModel]], ...] = (
    ("live/", ".json", LiveEntry),
    ("today/carry", ".json", Carry),
    ("sync/devices/", ".json", DeviceInfo),
)


def received_problem(root: MemoryRoot, path: str, sha: str | None) -> str:
    """Why a received shared file cannot be taken ('' when it can): one that its reader
    parses must parse.  Reviews and decisions are checked by ``verify`` (check.py)."""
    if sha is None:
        return ""
    for prefix, suffix, model in _FORMATS:
        if path.startswith(prefix) and path.endswith(suffix):
            try:
                model.model_validate_json(gitrepo.blob(root, sha))
            except ValidationError as exc:
                return f"holds {path}, which is not a valid {model.__name__} ({first_error(exc)})"
    return ""


def _check_growth(
    root: MemoryRoot,
    path: str,
    day: date,
    old: gitrepo.TreeEntry | None,
    new_sha: str,
    problems: list[str],
) -> int:
    """A device's day file may only grow, by lines that continue its chain (verify's
    rule, :func:`check_chain`); the number of records it grew by."""
    data = gitrepo.blob(root, new_sha)
    offset = old.size if old else 0
    if old is not None and (len(data) < offset or gitrepo.blob_sha(data[:offset]) != old.sha):
        problems.append(f"rewrote {path}: its first {offset} bytes are no longer what was synced")
        return 0
    tail = data[offset:]
    if tail and not tail.endswith(b"\n"):
        problems.append(f"{path} ends in a partial line")
        return 0
    prev = None
    if offset:
        last = data[:offset].rstrip(b"\n").rsplit(b"\n", 1)[-1]
        try:
            prev = str(json.loads(last)["hash"])
        except (ValueError, KeyError, TypeError):
            problems.append(f"{path}: the synced part ends in an unreadable line")
            return 0
    checked = check_chain(
        tail.splitlines(), day=day, file=path, prev=prev, first_line=data[:offset].count(b"\n") + 1
    )
    problems += checked.problems
    return checked.records


def _parse_writer(root: MemoryRoot, sha: str) -> TodayWriter | None:
    try:
        return TodayWriter.model_validate_json(gitrepo.blob(root, sha))
    except ValidationError:
        return None


def _live_updated(root: MemoryRoot, sha: str) -> tuple[str, dict[str, Any]]:
    try:
        data = json.loads(gitrepo.blob(root, sha))
        return str(data.get("updated", "")), data
    except (ValueError, AttributeError):
        return "", {}


def _decision_rank(root: MemoryRoot, sha: str) -> tuple[int, str]:
    try:
        data = json.loads(gitrepo.blob(root, sha))
        return (1 if data.get("commit") else 0, str(data.get("ts", "")))
    except (ValueError, AttributeError):
        return (-1, "")


def _newest_live(root: MemoryRoot, mine: str | None, theirs: str | None) -> str | None:
    """Per key, newest ``updated`` wins; a deletion loses to a change; ties by blob id."""
    if mine is None or theirs is None:
        return mine or theirs
    a, _ = _live_updated(root, mine)
    b, _ = _live_updated(root, theirs)
    return theirs if (b, theirs) > (a, mine) else mine
