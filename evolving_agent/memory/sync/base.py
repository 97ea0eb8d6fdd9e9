"""What every step of sync shares: the refs and branches, the errors, the result, the
path mapping between the data tree and the disk, the lock and the test kill points."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from evolving_agent.errors import EXIT_INVALID, EXIT_TAMPERED, EvolvingAgentError
from evolving_agent.memory.base.locks import human_lock_dir, lock_file
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import (
    shared_path,
)
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

DATA_BRANCH = "ea-data"


DATA_REF = f"refs/heads/{DATA_BRANCH}"


MAIN_BRANCH = "main"


APPLYING_REF = "refs/ea/applying"


APPLYING_MAIN_REF = "refs/ea/applying-main"


REMOTES_FILE = "remotes.json"  # below .ea/


NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")


KILL_ENV = "EVOLVING_AGENT_SYNC_KILL_AT"  # tests: SIGKILL this process at a named step


# Shared areas of the data branch (besides evidence/): tree path prefix = disk path.
SHARED_PREFIXES = ("live/", "today/", "reviews/proposals/", "reviews/pending/",
                   "reviews/decisions/", "sync/")  # fmt: skip


# Transports sync needs beyond the runner's defaults (which allow local files only):
# ssh and https by name, never ``ext::`` (a URL that runs a command) or ``fd::``.
NET_OPTIONS = (
    "-c", "protocol.ssh.allow=always",
    "-c", "protocol.https.allow=always",
    "-c", "core.sshCommand=ssh",
)  # fmt: skip


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


@record
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


def update_ref(root: MemoryRoot, ref: str, new: str, old: str | None) -> None:
    gitrepo.update_ref(root, ref, new, old, "evolving-agent sync")


def kill_point(step: str) -> None:
    """Test hook: die here like a power cut (SIGKILL: no cleanup, no finally)."""
    if os.environ.get(KILL_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def sync_lock(root: MemoryRoot) -> Iterator[None]:
    with lock_file(human_lock_dir(root) / "sync-run.lock"):
        yield


EVIDENCE_PATH = re.compile(r"evidence/devices/(d-[0-9a-f]{12})/(\d{4}-\d\d-\d\d)\.jsonl")


def evidence_path(path: str) -> re.Match[str] | None:
    """The (device, day) match of a device's day file in the data tree, or None."""
    return EVIDENCE_PATH.fullmatch(path)


def disk_path(root: MemoryRoot, tree_path: str, here: str) -> Path:
    m = evidence_path(tree_path)
    if m:
        device, day = m.groups()
        if device == here:
            return root.real / "evidence" / f"{day}.jsonl"
        return root.real / "evidence" / "devices" / device / f"{day}.jsonl"
    if tree_path.startswith("sync/"):
        return shared_path(root, tree_path)  # the register and today writer sit below .ea/
    return root.real / tree_path


def safe_tree_path(path: str) -> bool:
    """A relative path of plain, visible parts: split on "/" as written, not normalised
    (``PurePosixPath`` would drop a "." part and keep a leading "/", and ``disk_path``
    joins an absolute path as itself)."""
    parts = path.split("/")
    return not any(p in ("", ".", "..", ".git") or p.startswith(".") for p in parts)


def area_of(path: str) -> str:
    if path.startswith("reviews/"):
        return path.split("/")[1]
    return path.split("/")[0]


def incoming(remote: str, branch: str) -> str:
    return f"refs/ea/incoming/{remote}/{branch}"


def synced(remote: str, branch: str) -> str:
    return f"refs/ea/synced/{remote}/{branch}"
