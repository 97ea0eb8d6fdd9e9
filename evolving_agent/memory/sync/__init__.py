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

The package is the chain of steps, one module each (``run.py`` strings them together:
``sync -> sync_rounds -> one_round``):

- ``remote.py`` - the remotes file, fetch, the no-rewrite check, the atomic push;
- ``snapshot.py`` - this device's state as a data commit;
- ``plan.py`` - what the remote brings, checked path by path, and the merged commit;
- ``check.py`` - ``verify`` on the merged state, staged, before anything changes here;
- ``apply.py`` - the journaled apply, then main's fast-forward;
- ``base.py`` - what they share (refs, errors, the result, path mapping).

Its git plumbing is the one git reader's (memory/canon/gitrepo.py); its chain rule is
verify's (:func:`evolving_agent.memory.evidence.evidence.check_chain`).
"""

from __future__ import annotations

from evolving_agent.memory.sync.base import (
    DATA_BRANCH,
    DATA_REF,
    KILL_ENV,
    MAIN_BRANCH,
    CanonDiverged,
    SyncRefused,
    SyncResult,
)
from evolving_agent.memory.sync.remote import (
    add_remote,
    git_reason,
    load_remotes,
    remote_status,
    resolve_remote,
)
from evolving_agent.memory.sync.run import clone, sync
from evolving_agent.memory.sync.snapshot import unpushed_events

__all__ = [
    "DATA_BRANCH",
    "DATA_REF",
    "KILL_ENV",
    "MAIN_BRANCH",
    "CanonDiverged",
    "SyncRefused",
    "SyncResult",
    "add_remote",
    "clone",
    "git_reason",
    "load_remotes",
    "remote_status",
    "resolve_remote",
    "sync",
    "unpushed_events",
]
