"""The Live Bus: what is going on now, as keyed entries any actor may replace.

One JSON file per key under ``live/`` so setting one key never races another.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence import now
from evolving_agent.paths import MemoryRoot

KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class LiveEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    text: str
    actor: str
    updated: str


def _check_key(key: str) -> str:
    if not KEY_RE.match(key) or key.endswith(".json"):
        raise InvalidInput(
            f"invalid Live Bus key {key!r}: use letters, digits, '.', '_' or '-' (max 64)"
        )
    return key


def set_entry(root: MemoryRoot, actor: str, key: str, text: str) -> LiveEntry:
    if not text.strip():
        raise InvalidInput(
            f"Live Bus text for {_check_key(key)!r} is empty (to remove the entry: "
            f"evolving-agent live clear {key})"
        )
    entry = LiveEntry(key=_check_key(key), text=text, actor=actor, updated=now().isoformat())
    Writer(root, actor).write("live", f"{key}.json", entry.model_dump_json(indent=2) + "\n")
    return entry


def clear_entry(root: MemoryRoot, actor: str, key: str) -> bool:
    return Writer(root, actor).delete("live", f"{_check_key(key)}.json")


def entries(root: MemoryRoot) -> list[LiveEntry]:
    out = []
    for p in sorted(root.live.glob("*.json")):
        try:
            out.append(LiveEntry.model_validate(json.loads(p.read_text(encoding="utf-8"))))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "(entry)"
            raise InvalidInput(
                f"malformed Live Bus entry: {field}: {first['msg']}", file=p
            ) from None
        except ValueError as exc:  # not JSON, or not UTF-8
            raise InvalidInput(f"malformed Live Bus entry: {exc}", file=p) from None
    return out
