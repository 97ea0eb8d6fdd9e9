"""The OS-user deployment: the human's user owns the root, the assistant's user appends.

Without it, the assistant runs as your OS user and everything in the root is writable
by it: "human" is a claim.  With it, the operating system draws the line the writer
draws in code, for a program that does not go through the writer too:

==========================================  =========================  ==============
path                                        owner : group, mode        assistant
==========================================  =========================  ==============
the root, ``canon/``, ``crons/``,           human : G, dirs 2750,      read
``schedule.yaml``, ``today/``, ``reviews/``  files 0640
(``proposals/``, ``pending/``,
``decisions/``), ``.git/``, ``.ea/``
``evidence/``, ``.ea/evidence/`` (heads)    human : G, dirs 3770       append
                                            (setgid, sticky),
                                            files 0660
``live/``, ``.ea/locks/``                   human : G, dirs 2770,      write
                                            files 0660
==========================================  =========================  ==============

The setgid bit makes every new entry's group G, and the writer gives a file the group
bits of the setgid directory it is created in (``fsio.shared_mode``), whatever the
umask: so the day files and locks the assistant creates stay readable and writable by
the human's jobs, and what the human's jobs write stays readable for the assistant's
boot.  The sticky bit on ``evidence/`` and ``.ea/evidence/`` keeps the assistant's user
from deleting, renaming or replacing a file it did not create.  ``.git`` is set to
``core.sharedRepository=0640``, so git keeps its new objects group-readable.

The set-up is recorded in ``.ea/deploy.json`` (the human's, read-only for the group);
``verify`` names it in its note on what human authority rests on.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import stat
from collections.abc import Sequence
from dataclasses import field
from datetime import date
from pathlib import Path
from typing import Any

from evolving_agent.errors import EXIT_DENIED, EvolvingAgentError, InvalidInput
from evolving_agent.memory.base.atomic import atomic_write
from evolving_agent.memory.evidence.evidence import seal_days_before
from evolving_agent.memory.root import (  # re-exported: the deployment record, where it was
    DEPLOY_FILE,
    deployment,
    require_root,
)
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

GIT_SHARED = "0640"

# What the assistant's user may write: (root-relative prefix, sticky).
SHARED_AREAS: tuple[tuple[tuple[str, ...], bool], ...] = (
    (("evidence",), True),
    ((".ea", "evidence"), True),
    (("live",), False),
    ((".ea", "locks"), False),
)
READ_DIR, READ_FILE = 0o2750, 0o640
SHARED_DIR, SHARED_FILE = 0o2770, 0o660
STICKY_DIR = 0o3770


class NotPermitted(EvolvingAgentError):
    """This OS user may not set the deployment up (only root or the root's owner may)."""

    exit_code = EXIT_DENIED

    def __init__(self, why: str) -> None:
        super().__init__(f"deploy os-users: {why}")


@record(frozen=True)
class Account:
    name: str
    uid: int
    gid: int  # primary group


@record
class DeployReport:
    """What ``deploy os-users`` did, and what it could not make safe on its own."""

    root: Path
    human: str
    assistant: str
    group: str
    changed: int = 0  # paths whose owner, group or mode changed
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "human": self.human,
            "assistant": self.assistant,
            "group": self.group,
            "changed": self.changed,
            "warnings": self.warnings,
        }


def _account(name: str, role: str) -> Account:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise InvalidInput(f"--{role} {name!r}: no such OS user") from None
    return Account(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _members(group: grp.struct_group) -> set[str]:
    primary = {p.pw_name for p in pwd.getpwall() if p.pw_gid == group.gr_gid}
    return set(group.gr_mem) | primary


def area_of(rel: Sequence[str]) -> tuple[int, int]:
    """(directory mode, file mode) of a root-relative path in the deployment."""
    for prefix, sticky in SHARED_AREAS:
        if tuple(rel[: len(prefix)]) == prefix:
            return (STICKY_DIR if sticky else SHARED_DIR), SHARED_FILE
    return READ_DIR, READ_FILE


def seal_reflected(root: MemoryRoot, day: date) -> list[date]:
    """After the human's nightly job reflected ``day``: seal the days before it (the
    writer refuses new events for them anyway), so the assistant's user can no longer
    rewrite them (``EvidenceLog.seal_day``).  Nothing outside the deployment."""
    if deployment(root) is None:
        return []
    return seal_days_before(root, day)


def can_reach(path: Path, account: Account, groups: set[int]) -> Path | None:
    """The first directory on the way to ``path`` that ``account`` cannot enter (by
    mode bits; ACLs aside), or None when it can reach ``path``."""
    for directory in [*reversed(path.parents), path]:
        st = os.stat(directory)
        if account.uid == st.st_uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid in groups:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if account.uid != 0 and not ok:
            return directory
    return None


def readable_by(path: Path, account: Account, groups: set[int]) -> bool:
    """Whether ``account`` can read ``path`` (mode bits of it and its directories)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if can_reach(path.parent, account, groups) is not None:
        return False
    if account.uid == st.st_uid:
        return bool(st.st_mode & stat.S_IRUSR)
    if st.st_gid in groups:
        return bool(st.st_mode & stat.S_IRGRP)
    return bool(st.st_mode & stat.S_IROTH)


def _groups_of(account: Account) -> set[int]:
    return set(os.getgrouplist(account.name, account.gid))


def deploy_os_users(
    root: MemoryRoot, *, human: str, assistant: str, group: str | None = None
) -> DeployReport:
    """Give ``root`` to ``human`` with ``assistant`` in a shared group (see the module
    docstring).  Run as root, or as the human (who must own the root and be in the
    group).  Idempotent: a second run changes nothing."""
    from evolving_agent.gitcmd import git

    require_root(root)
    owner, helper = _account(human, "human"), _account(assistant, "assistant")
    if owner.uid == helper.uid:
        raise InvalidInput("--human and --assistant must be two different OS users")
    if helper.uid == 0:
        raise InvalidInput("--assistant may not be root: root can write everything")
    name = group or grp.getgrgid(helper.gid).gr_name
    try:
        entry = grp.getgrnam(name)
    except KeyError:
        raise InvalidInput(f"--group {name!r}: no such group (groupadd {name})") from None
    members = _members(entry)
    for account, role in ((owner, "human"), (helper, "assistant")):
        if account.name not in members:
            raise InvalidInput(
                f"the {role}'s user {account.name!r} is not in group {name!r} "
                f"(usermod -aG {name} {account.name})"
            )
    euid = os.geteuid()
    real = root.real
    if euid not in (0, owner.uid):
        raise NotPermitted(f"run it as root or as {owner.name!r} (the root's owner), not {euid}")
    if euid != 0 and os.stat(real).st_uid != owner.uid:
        raise NotPermitted(f"{real} is not owned by {owner.name!r}: run it as root")
    # Before anything changes hands: git keeps new objects group-readable from now on.
    # (safe.directory on the command line: as root, the repository is someone else's.)
    safe = ("-c", f"safe.directory={real}")
    current = git(real, *safe, "config", "--get", "core.sharedRepository", check=False).text
    if current != GIT_SHARED:
        git(real, *safe, "config", "core.sharedRepository", GIT_SHARED)
    report = DeployReport(real, owner.name, helper.name, name)
    for prefix, _sticky in SHARED_AREAS:
        # The assistant's user cannot make these below the human's .ea/: make them now.
        real.joinpath(*prefix).mkdir(mode=0o700, parents=True, exist_ok=True)
    _apply(real, owner, entry.gr_gid, as_root=euid == 0, report=report)
    record = {
        "schema_version": 1,
        "kind": "os-users",
        "human": owner.name,
        "assistant": helper.name,
        "group": name,
        "assistant_writes": ["evidence/", "live/", ".ea/evidence/", ".ea/locks/"],
    }
    path = root.state / DEPLOY_FILE
    data = (json.dumps(record, indent=2) + "\n").encode()
    if deployment(root) != record:
        atomic_write(path, data, base=real)
        report.changed += 1
    _set(path, owner.uid if euid == 0 else -1, entry.gr_gid, READ_FILE, report)
    report.warnings += _reach_warnings(real, owner, helper)
    return report


def _apply(real: Path, owner: Account, gid: int, *, as_root: bool, report: DeployReport) -> None:
    """Owner, group and mode of every path below the root (symlinks are not followed;
    the writer never makes one, and verify reports any)."""
    for top, dirs, files in os.walk(real):
        here = Path(top)
        rel = here.relative_to(real).parts
        dir_mode, file_mode = area_of(rel)
        # A file or directory the assistant's user made in its areas stays its own
        # (the group and mode are set); everything else is the human's.
        shared = dir_mode != READ_DIR
        uid = owner.uid if as_root else -1
        _set(here, uid, gid, dir_mode, report, keep_owner=shared)
        for name in files:
            path = here / name
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                report.warnings.append(f"{path}: a symlink, left alone (verify reports it)")
                continue
            mode = file_mode
            if not shared and not st.st_mode & stat.S_IWUSR:
                mode &= ~0o222  # git's read-only objects stay read-only
            _set(path, uid, gid, mode, report, keep_owner=shared)
        kept = []
        for name in dirs:
            if (here / name).is_symlink():
                report.warnings.append(f"{here / name}: a symlink, left alone (verify reports it)")
            else:
                kept.append(name)
        dirs[:] = kept  # each is visited next, with the area its own path decides


def _set(
    path: Path, uid: int, gid: int, mode: int, report: DeployReport, *, keep_owner: bool = False
) -> None:
    st = os.lstat(path)
    want_uid = st.st_uid if (uid == -1 or (keep_owner and st.st_uid != 0)) else uid
    if st.st_uid != want_uid or st.st_gid != gid:
        if st.st_uid != os.geteuid() and os.geteuid() != 0:
            report.warnings.append(f"{path}: owned by uid {st.st_uid}; its group was left alone")
        else:
            os.lchown(path, want_uid if want_uid != st.st_uid else -1, gid)
            report.changed += 1
    if stat.S_IMODE(st.st_mode) != mode:
        if st.st_uid != os.geteuid() and os.geteuid() != 0:
            return
        os.chmod(path, mode)  # after chown, which clears setgid bits
        report.changed += 1


def _reach_warnings(real: Path, owner: Account, helper: Account) -> list[str]:
    """What the modes inside the root cannot fix: a directory above it the assistant
    cannot enter, or the human's signing key readable by the assistant."""
    out = []
    groups = _groups_of(helper)
    blocked = can_reach(real, helper, groups)
    if blocked is not None:
        out.append(
            f"{blocked}: the assistant's user {helper.name!r} cannot enter it, so it cannot "
            f"reach the root (chmod o+x {blocked}, or g+x for a group it is in)"
        )
    home = Path(pwd.getpwuid(owner.uid).pw_dir)
    config = home / ".config" / "evolving-agent"
    if config.exists() and readable_by(config, helper, groups):
        out.append(f"{config}: readable by {helper.name!r}; make it 0700 (chmod 700 {config})")
    for key in _pinned_keys(config / "signing"):
        if readable_by(key, helper, groups):
            out.append(
                f"{key}: the human's signing key is readable by {helper.name!r}: it can sign "
                f"as the human (chmod 600 {key})"
            )
    return out


def _pinned_keys(directory: Path) -> list[Path]:
    keys = []
    try:
        records = list(directory.glob("*.json"))
    except OSError:
        return []
    for path in records:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("key"):
            keys.append(Path(str(data["key"])))
    return keys
