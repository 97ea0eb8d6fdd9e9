"""The Live Bus: what is going on now, as keyed entries any actor may replace.

One JSON file per key under ``live/`` so setting one key never races another.  Every
way in validates the same: ``live set``, the MCP tool and ``write … live KEY.json``
all go through :func:`set_entry` / :func:`write_entry_file` (key, size, JSON shape,
secrets masked).  Reading is forgiving: a file that is not a valid entry (written
behind the writer's back, or by an older version) is skipped and reported, never
allowed to break boot or the Claude Code hook.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from evolving_agent.errors import InvalidInput, first_error
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.live_listing import (
    LIVE_MAX_KEYS,
    list_live,
    live_key_ok,
    over_limit_warning,
)
from evolving_agent.memory.base.redact import redact
from evolving_agent.memory.evidence.evidence import now
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

if TYPE_CHECKING:
    from evolving_agent.memory.canon.policy import Actor

MAX_TEXT_CHARS = 4000  # a note of where work stopped, not a document
MAX_FILE_BYTES = 64 * 1024  # larger files in live/ are skipped unread
MAX_KEYS = LIVE_MAX_KEYS  # keys; boot reads the newest 20 whatever the count


class LiveEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    key: str
    text: str
    actor: str
    updated: str

    @field_validator("key")
    @classmethod
    def _key(cls, v: str) -> str:
        return _check_key(v)


@record
class LiveScan:
    """The valid entries of the Live Bus, and a one-line report per file skipped."""

    entries: list[LiveEntry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    total: int = 0  # *.json files in live/ (boot's bounded scan: at most MAX_KEYS + 1)
    invalid: int = 0  # files read and skipped

    @property
    def unread(self) -> int:
        """Files neither read as entries nor skipped (boot's bounded scan left them)."""
        return max(0, self.total - len(self.entries) - self.invalid)


class LiveBusFull(InvalidInput):
    """A new key beyond the Live Bus's key limit."""

    def __init__(self, key: str, count: int) -> None:
        super().__init__(
            f"the Live Bus holds {count:,} keys, its limit is {MAX_KEYS:,}; {key!r} was not "
            "written (clear finished threads: evolving-agent live clear KEY)"
        )


def _check_room(root: MemoryRoot, key: str) -> None:
    base = root.live
    if (base / f"{key}.json").exists():
        return  # replacing a key never needs room
    try:
        with os.scandir(base) as it:
            count = sum(1 for e in it if e.name.endswith(".json"))
    except FileNotFoundError:
        return
    if count >= MAX_KEYS:
        raise LiveBusFull(key, count)


def _check_key(key: str) -> str:
    if not live_key_ok(key):
        raise InvalidInput(
            f"invalid Live Bus key {key!r}: use letters, digits, '.', '_' or '-' (max 64)"
        )
    return key


def _check_text(key: str, text: str) -> str:
    if not text.strip():
        raise InvalidInput(
            f"Live Bus text for {key!r} is empty (to remove the entry: "
            f"evolving-agent live clear {key})"
        )
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(
            f"Live Bus text for {key!r} is {len(text):,} characters; the limit is "
            f"{MAX_TEXT_CHARS:,} (note where work stopped, and keep documents elsewhere)"
        )
    return redact(text)


def set_entry(root: MemoryRoot, actor: Actor, key: str, text: str) -> LiveEntry:
    key = _check_key(key)
    entry = LiveEntry(key=key, text=_check_text(key, text), actor=actor, updated=now().isoformat())
    _check_room(root, key)
    Writer(root, actor).write("live", f"{key}.json", entry.model_dump_json(indent=2) + "\n")
    return entry


def write_entry_file(root: MemoryRoot, actor: Actor, relpath: str, data: bytes) -> Path:
    """``write --as ACTOR live KEY.json``: the same checks as :func:`set_entry`.

    Invalid content is refused (exit 4) before anything is written.
    """
    key = relpath.removesuffix(".json")
    if not relpath.endswith(".json") or "/" in relpath:
        raise InvalidInput(
            f"a Live Bus file is KEY.json directly in live/, not {relpath!r} "
            "(or use: evolving-agent live set KEY TEXT)"
        )
    _check_key(key)
    where = root.live / relpath
    entry = parse_entry(data, file=where)
    if entry.key != key:
        raise InvalidInput(f"entry key {entry.key!r} does not match the file name", file=where)
    if entry.actor != actor:
        raise InvalidInput(
            f"entry claims actor {entry.actor!r} but is written as {actor!r}", file=where
        )
    entry.text = _check_text(key, entry.text)
    _check_room(root, key)
    return Writer(root, actor).write(
        "live", relpath, entry.model_dump_json(indent=2) + "\n", message=f"{actor} wrote {relpath}"
    )


def parse_entry(data: bytes, *, file: Path | str) -> LiveEntry:
    """One Live Bus file's bytes as an entry; InvalidInput naming the field otherwise."""
    try:
        return LiveEntry.model_validate(json.loads(data.decode("utf-8")))
    except ValidationError as exc:
        raise InvalidInput(
            f"malformed Live Bus entry: {first_error(exc, whole='(entry)')}", file=file
        ) from None
    except ValueError as exc:  # not JSON, or not UTF-8
        raise InvalidInput(f"malformed Live Bus entry: {exc}", file=file) from None


def clear_entry(root: MemoryRoot, actor: Actor, key: str) -> bool:
    return Writer(root, actor).delete("live", f"{_check_key(key)}.json")


def scan(root: MemoryRoot) -> LiveScan:
    """Every valid entry (sorted by key); every other file in live/ skipped with a reason."""
    out = LiveScan()
    base = root.live
    if not _plain_dir(base, out):
        return out
    paths = sorted(base.glob("*.json"))
    out.total = len(paths)
    _read_into(out, paths)
    return out


def scan_newest(root: MemoryRoot, keep: int) -> LiveScan:
    """The ``keep`` most recently written entries, reading no other file (boot's scan:
    its cost does not grow with the number of keys; see ``live_listing.list_live``)."""
    out = LiveScan()
    base = root.live
    if not _plain_dir(base, out):
        return out
    listing = list_live(base)
    out.total = listing.total
    if listing.over_limit:
        out.skipped.append(over_limit_warning(base))
    for name in listing.newest:  # newest first, until ``keep`` valid ones are read
        if len(out.entries) >= keep:
            break
        _read_into(out, [base / name])
    return out


def _plain_dir(base: Path, out: LiveScan) -> bool:
    try:
        if not stat.S_ISDIR(os.lstat(base).st_mode):
            out.skipped.append(f"{base}: not a directory (a symlink?); Live Bus not read")
            return False
    except FileNotFoundError:
        return False
    return True


def _read_into(out: LiveScan, paths: list[Path]) -> None:
    for p in paths:
        try:
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode):
                raise InvalidInput("not a regular file (a symlink?)", file=p)
            if st.st_size > MAX_FILE_BYTES:
                raise InvalidInput(f"{st.st_size:,} bytes, more than a Live Bus entry", file=p)
            fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as fh:
                entry = parse_entry(fh.read(), file=p)
            if entry.key != p.stem:
                raise InvalidInput(f"entry key {entry.key!r} does not match the file name", file=p)
        except InvalidInput as exc:
            out.skipped.append(_one_line(f"{exc}; skipped"))
            out.invalid += 1
            continue
        except OSError as exc:
            out.skipped.append(_one_line(f"{p}: unreadable ({exc.strerror}); skipped"))
            out.invalid += 1
            continue
        out.entries.append(entry)


def _one_line(text: str) -> str:
    # A file name may hold a newline; a report is one line.
    return " ".join(text.split())


def entries(root: MemoryRoot) -> list[LiveEntry]:
    """The valid Live Bus entries, sorted by key (see :func:`scan` for what was skipped)."""
    return scan(root).entries
