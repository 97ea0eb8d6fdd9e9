"""Talk to the remote: the remotes file, fetch, the no-rewrite check, the atomic push."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.gitcmd import GitResult, git
from evolving_agent.memory.base.atomic import atomic_write, mkdirs_private
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import (
    local_device,
)
from evolving_agent.memory.sync.base import (
    DATA_BRANCH,
    DATA_REF,
    MAIN_BRANCH,
    NAME_RE,
    NET_OPTIONS,
    REMOTES_FILE,
    SyncRefused,
    incoming,
    kill_point,
    synced,
)
from evolving_agent.memory.sync.snapshot import unpushed_events
from evolving_agent.paths import MemoryRoot


class Remotes(BaseModel):
    """``.ea/remotes.json``: the remotes of this device, by name."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

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
    remotes.remotes[name] = absolute_url(url)
    remotes.default = remotes.default or name
    save_remotes(root, remotes)
    local_device(root)  # a root made before devices existed gets its id here
    return remotes


def absolute_url(url: str) -> str:
    """A local path is kept absolute, so sync works from any working directory."""
    if "://" in url or re.match(r"^[^/]+@[^:/]+:", url) or re.match(r"^[^/:]+:[^/]", url):
        return url
    return str(Path(url).expanduser().absolute())


def save_remotes(root: MemoryRoot, remotes: Remotes) -> None:
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


def fetch(root: MemoryRoot, remote: str, url: str) -> GitResult:
    kill_point("before-fetch")
    gitrepo.forget_refs(root)
    res = git(
        root.path,
        *NET_OPTIONS,
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
    gitrepo.forget_refs(root)
    kill_point("after-fetch")
    return res


# git's standard advice after a failed fetch or push: not the reason, and what a newcomer
# was shown ("…: and the repository exists.") when only the last line was kept.
_GIT_ADVICE = ("Please make sure you have the correct access rights", "and the repository exists.")
_GIT_REASON = ("fatal:", "error:", "ssh:", "remote:")


def git_reason(stderr: str, returncode: int | None = None) -> str:
    """Why a git fetch or push failed, in one line: its ``fatal:`` / ``error:`` lines (and
    ssh's own) quoted whole, in order, without git's standard advice."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(_GIT_ADVICE)]
    reasons = [ln for ln in lines if ln.startswith(_GIT_REASON)] or lines[-1:]
    return "; ".join(reasons) if reasons else f"git exit {returncode}"


def offline_reason(res: GitResult) -> str:
    return git_reason(res.stderr, res.returncode)


def check_not_rewritten(root: MemoryRoot, remote: str) -> None:
    """What this device last synced must still be in the remote's branches."""
    problems = []
    for branch in (MAIN_BRANCH, DATA_BRANCH):
        seen = gitrepo.ref(root, synced(remote, branch))
        got = gitrepo.ref(root, incoming(remote, branch))
        if seen is None:
            continue
        if got is None:
            problems.append(f"no longer has branch '{branch}' (it held {seen[:10]})")
        elif not gitrepo.is_ancestor(root, seen, got):
            problems.append(
                f"rewrote branch '{branch}': it no longer contains {seen[:10]}, which this "
                "device synced (a force-push or reset)"
            )
    if problems:
        raise SyncRefused(remote, problems)


def push(root: MemoryRoot, remote: str, url: str, *, with_main: bool) -> tuple[bool, str]:
    """Fast-forward the remote's branches to ours; (accepted, git's message)."""
    specs = []
    main = gitrepo.head_commit(root) if with_main else None
    data = gitrepo.ref(root, DATA_REF)
    for branch, sha in ((MAIN_BRANCH, main), (DATA_BRANCH, data)):
        if sha and sha != gitrepo.ref(root, incoming(remote, branch)):
            specs.append(f"{sha}:refs/heads/{branch}")
    if not specs:
        return True, ""
    kill_point("before-push")
    res = git(
        root.path,
        *NET_OPTIONS,
        "push",
        "--atomic",
        "--porcelain",
        "-q",
        url,
        *specs,
        check=False,
        timeout=600,
    )
    kill_point("after-push")
    return res.ok, (res.stderr + res.stdout.decode(errors="replace"))


def record_synced(root: MemoryRoot, remote: str, *, with_main: bool) -> None:
    main = (
        gitrepo.head_commit(root) if with_main else gitrepo.ref(root, incoming(remote, MAIN_BRANCH))
    )
    updates: dict[str, str] = {}
    for branch, sha in ((MAIN_BRANCH, main), (DATA_BRANCH, gitrepo.ref(root, DATA_REF))):
        if sha:
            updates[synced(remote, branch)] = sha
            updates[incoming(remote, branch)] = sha
    gitrepo.set_refs(root, updates)


def accept_incoming(root: MemoryRoot, remote: str) -> None:
    updates: dict[str, str] = {}
    for branch in (MAIN_BRANCH, DATA_BRANCH):
        sha = gitrepo.ref(root, incoming(remote, branch))
        if sha:
            updates[synced(remote, branch)] = sha
    gitrepo.set_refs(root, updates)


def remote_status(root: MemoryRoot) -> list[dict[str, Any]]:
    """``remote show``: each remote, its URL, and what this device has not pushed yet."""
    here = local_device(root)
    remotes = load_remotes(root)
    out = []
    for name, url in remotes.remotes.items():
        last = gitrepo.ref(root, synced(name, DATA_BRANCH))
        out.append(
            {
                "name": name,
                "url": url,
                "default": name == remotes.default,
                "last_synced_data": last,
                "unpushed_events": unpushed_events(root, name, here),
            }
        )
    return out
