"""Listing the Live Bus (``live/*.json``), newest first, with the standard library only.

Shared by the Live Bus itself (:mod:`live`, which refuses a key beyond the limit) and by
boot's view (:mod:`bootview`, which lists no further than one past it), so neither
imports the other and both stop at the same count.
"""

from __future__ import annotations

import os
import re

# At most this many Live Bus keys: the writer refuses a new key beyond it, and boot lists
# no further than one past it, so boot costs the same with 1,000 keys or a million.
LIVE_MAX_KEYS = 1_000
# A Live Bus key names its own file in live/: letters, digits, '.', '_' or '-', at most 64.
LIVE_KEY = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"


def live_key_ok(key: str) -> bool:
    """``key`` may name a Live Bus entry, for the writer that refuses it and for boot that
    reads it alike.  ``fullmatch``: ``$`` would accept a trailing newline ("thread\n").  The
    pattern is compiled on first use, by re's own cache (most roots' live/ holds no entry)."""
    return re.fullmatch(LIVE_KEY, key) is not None and not key.endswith(".json")


class LiveListing:
    """The Live Bus files boot reads: the newest few by mtime, out of ``total``.

    A plain class (boot's fast path does not import ``dataclasses``), read-only by
    convention."""

    __slots__ = ("newest", "total", "over_limit")

    def __init__(self, newest: list[str], total: int, over_limit: bool) -> None:
        self.newest = newest  # file names, newest written first (all of them listed)
        self.total = total  # *.json files seen (at most LIVE_MAX_KEYS + 1)
        self.over_limit = over_limit  # the listing stopped: more than LIVE_MAX_KEYS files


def list_live(base: str | os.PathLike[str]) -> LiveListing:
    """The ``*.json`` names in ``base``, most recently written first, without reading any.

    One directory listing and one ``lstat`` per entry, stopped after LIVE_MAX_KEYS + 1
    entries: boot then parses the first few valid ones whatever the Live Bus holds.  The
    writer stamps ``updated`` as it writes, so mtime order is ``updated`` order for its files.
    """
    found: list[tuple[int, str]] = []
    over = False
    with os.scandir(base) as entries:
        for seen, entry in enumerate(entries):
            if seen > LIVE_MAX_KEYS:
                over = True
                break
            if entry.name.endswith(".json"):
                found.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
    found.sort(reverse=True)
    return LiveListing([name for _, name in found], len(found), over)


def over_limit_warning(base: object) -> str:
    return (
        f"{base}: holds more than {LIVE_MAX_KEYS:,} entries (the Live Bus limit); boot read "
        "the newest of the first ones listed. Clear old keys: evolving-agent live clear KEY"
    )
