"""The command: sync as a chain of named steps, and clone.

``sync -> sync_rounds -> one_round``: fetch (remote.py), refuse a rewritten remote,
snapshot (snapshot.py), plan the merge (plan.py), check it with verify (check.py),
apply (apply.py), push (remote.py); a remote that moved meanwhile is fetched again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from evolving_agent.errors import EvolvingAgentError, InvalidInput
from evolving_agent.memory.base.atomic import make_private_dir
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.evidence.devices import (
    TODAY_WRITER_FILE,
    DeviceInfo,
    TodayWriter,
    create_device,
    local_device,
    set_today_writer,
    today_writer,
)
from evolving_agent.memory.evidence.evidence import now
from evolving_agent.memory.sync.apply import apply_plan, finish_apply, note_live
from evolving_agent.memory.sync.base import (
    DATA_BRANCH,
    DATA_REF,
    MAIN_BRANCH,
    SyncResult,
    incoming,
    kill_point,
    sync_lock,
    synced,
)
from evolving_agent.memory.sync.check import verify_merged
from evolving_agent.memory.sync.plan import MergePlan, plan_merge
from evolving_agent.memory.sync.remote import (
    Remotes,
    absolute_url,
    accept_incoming,
    check_not_rewritten,
    fetch,
    git_reason,
    offline_reason,
    push,
    record_synced,
    resolve_remote,
    save_remotes,
)
from evolving_agent.memory.sync.snapshot import new_own_lines, snapshot, unpushed_events
from evolving_agent.paths import LAYERS, REVIEW_AREAS, MemoryRoot

MAX_ROUNDS = 5  # another device pushing between our fetch and push: fetch again


def sync(root: MemoryRoot, remote_name: str | None = None, *, actor: str = "human") -> SyncResult:
    """Fetch, check, merge, apply, push.  See the module docstring."""
    gitrepo.require_repo(root)
    remote, url = resolve_remote(root, remote_name)
    here = local_device(root)
    with sync_lock(root):
        gitrepo.forget_refs(root)  # another process may have synced since this one last looked
        result = SyncResult(remote=remote, device=here.id)
        result.resumed = finish_apply(root, here)
        return sync_rounds(root, remote, url, here, result, actor)


def sync_rounds(
    root: MemoryRoot, remote: str, url: str, here: DeviceInfo, result: SyncResult, actor: str
) -> SyncResult:
    """Rounds of :func:`one_round` until the push lands (another device may push between
    our fetch and our push: then fetch again), at most :data:`MAX_ROUNDS`."""
    pushed_before = gitrepo.ref(root, synced(remote, DATA_BRANCH))
    for _round in range(MAX_ROUNDS):
        if one_round(root, remote, url, here, result, actor, pushed_before):
            return result
    raise EvolvingAgentError(
        f"sync gave up after {MAX_ROUNDS} rounds: remote '{remote}' kept moving (another device "
        "syncing at the same time?); run sync again"
    )


def one_round(
    root: MemoryRoot,
    remote: str,
    url: str,
    here: DeviceInfo,
    result: SyncResult,
    actor: str,
    pushed_before: str | None,
) -> bool:
    """fetch -> refuse a rewrite -> snapshot -> plan -> check -> apply -> push.  True when
    the round is the last (pushed, or offline); False when the remote moved meanwhile."""
    fetched = fetch(root, remote, url)
    if not fetched.ok:
        _offline(root, remote, here, result, offline_reason(fetched))
        return True
    check_not_rewritten(root, remote)
    theirs = gitrepo.ref(root, incoming(remote, DATA_BRANCH))
    if today_writer(root) is None and not gitrepo.ls_tree(root, theirs, TODAY_WRITER_FILE):
        # The first device to sync writes Today until the user moves it.
        set_today_writer(root, TodayWriter(device=here.id, since=now()))
    local = snapshot(root, here)
    kill_point("snapshot")
    plan = plan_merge(root, remote, here.id, local, theirs)
    kill_point("planned")
    if plan.needs_full_verify:
        verify_merged(root, remote, here, plan)  # raises before anything here changes
    apply_plan(root, here, plan)
    accept_incoming(root, remote)
    _count(result, plan)
    note_live(root, here, plan.live_notes, actor)
    if plan.live_notes:
        snapshot(root, here)  # the records just appended travel with this push
    return _push_round(root, remote, url, here, result, plan, pushed_before)


def _count(result: SyncResult, plan: MergePlan) -> None:
    result.received += plan.received
    result.canon_commits += plan.canon_commits
    result.live_replaced += [n["key"] for n in plan.live_notes]


def _push_round(
    root: MemoryRoot,
    remote: str,
    url: str,
    here: DeviceInfo,
    result: SyncResult,
    plan: MergePlan,
    pushed_before: str | None,
) -> bool:
    with_main = plan.canon_diverged is None
    ok, message = push(root, remote, url, with_main=with_main)
    if ok:
        record_synced(root, remote, with_main=with_main)
        if plan.canon_diverged is not None:
            raise plan.canon_diverged
        result.pushed = True
        data = gitrepo.ref(root, DATA_REF)
        result.sent = new_own_lines(root, pushed_before, data, here) if data else 0
        writer = today_writer(root)
        result.today_writer = writer.device if writer else None
        return True
    if any(word in message for word in ("rejected", "fetch first", "non-fast-forward")):
        return False  # the remote moved: another round
    _offline(root, remote, here, result, git_reason(message) if message.strip() else "push failed")
    return True


def _offline(
    root: MemoryRoot, remote: str, here: DeviceInfo, result: SyncResult, reason: str
) -> None:
    result.offline = True
    result.offline_reason = reason
    result.unpushed = unpushed_events(root, remote, here)


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
        remotes = Remotes(remotes={"origin": absolute_url(url)}, default="origin")
        save_remotes(root, remotes)
        here = local_device(root)
        with sync_lock(root):
            gitrepo.forget_refs(root)
            fetched = fetch(root, "origin", remotes.remotes["origin"])
            if not fetched.ok:
                raise InvalidInput(f"cannot fetch {url}: {offline_reason(fetched)}")
            if gitrepo.ref(root, incoming("origin", MAIN_BRANCH)) is None:
                raise InvalidInput(
                    f"{url} holds no memory root yet (run 'evolving-agent sync' on the device "
                    "that has it first)"
                )
            result = SyncResult(remote="origin", device=here.id)
            result = sync_rounds(root, "origin", remotes.remotes["origin"], here, result, "human")
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
