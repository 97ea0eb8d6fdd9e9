"""Boot: the context an assistant starts its day with.

Reads Canon, Today and the Live Bus through the session's read scope, and never the
Evidence history, so it costs the same on day 1 and day 1,000.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from pydantic import BaseModel, ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.memory import live as live_bus
from evolving_agent.memory.authority import ScopedReader
from evolving_agent.memory.canon import IDENTITY_FILE, Identity
from evolving_agent.memory.root import require_root
from evolving_agent.memory.today import BIAS_FILE, CARRY_FILE, EMPTY_BIAS, EMPTY_CARRY, Carry
from evolving_agent.memory.yamlio import parse_yaml, validate
from evolving_agent.paths import MemoryRoot


class BootContext(BaseModel):
    bias: str
    carry: dict[str, Any]
    # The day the bias and carry were written for, when a later nightly run left them
    # (a quiet day): an old bias shows its date instead of passing for today's.
    stale: str | None = None
    canon: dict[str, Any]
    live: dict[str, str]

    def markdown(self) -> str:
        ident = self.canon.get("identity", {})
        lines = [f"# Boot context: {ident.get('name', 'Assistant')}", ""]
        if ident.get("description"):
            lines += [ident["description"], ""]
        for key, title in (
            ("values", "Values"),
            ("self_understanding", "Self-understanding"),
            ("habits", "Habits"),
        ):
            items = ident.get(key) or []
            if items:
                lines += [f"## {title}", *[f"- {i}" for i in items], ""]
        for name, text in self.canon.get("notes", {}).items():
            lines += [f"## {name}", text.strip(), ""]
        dated = f" (written for {self.stale}; nothing newer since)" if self.stale else ""
        lines += [f"## Today's bias{dated}", self.bias, ""]
        carry = self.carry
        if carry.get("type"):
            hyp = f" (hypothesis {carry['hypothesis']})" if carry.get("hypothesis") else ""
            lines += [
                f"## Carry-forward{dated}",
                f"**{carry['type']}**{hyp}: {carry['text']}",
                "",
            ]
        else:
            lines += ["## Carry-forward", EMPTY_CARRY, ""]
        lines += ["## Live Bus"]
        lines += [f"- **{k}**: {v}" for k, v in self.live.items()] or ["(nothing open)"]
        return "\n".join(lines).rstrip() + "\n"

    def claude_hook(self) -> str:
        return json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": self.markdown(),
                }
            },
            ensure_ascii=False,
        )


def build_boot(root: MemoryRoot) -> BootContext:
    require_root(root)
    reader = ScopedReader(root, "session")
    ident_text = reader.read_text("canon", IDENTITY_FILE)
    identity: dict[str, Any] = {}
    if ident_text is not None:
        path = root.canon / IDENTITY_FILE
        identity = validate(Identity, parse_yaml(ident_text, file=path), file=path).model_dump(
            exclude={"schema_version"}
        )
    notes = {p.name: reader.read_text("canon", p.name) or "" for p in reader.list("canon", "*.md")}
    bias = (reader.read_text("today", BIAS_FILE) or "").strip() or EMPTY_BIAS
    carry: dict[str, Any] = {"type": None, "text": EMPTY_CARRY, "hypothesis": None}
    raw_carry = reader.read_json("today", CARRY_FILE)
    if raw_carry is not None:
        try:
            carry = Carry.model_validate(raw_carry).model_dump(
                mode="json", exclude={"schema_version"}
            )
        except ValidationError as exc:
            raise InvalidInput(
                f"invalid carry: {exc.errors()[0]['msg']}", file=root.today / CARRY_FILE
            ) from None
    live = {e.key: e.text for e in live_bus.entries(root)}
    return BootContext(
        bias=bias,
        carry=carry,
        canon={"identity": identity, "notes": notes},
        live=live,
        stale=_stale(reader, carry.get("date")),
    )


def _stale(reader: ScopedReader, written_for: Any) -> str | None:
    """The carry's date when the nightly job has reflected a later day than it was for."""
    state = reader.read_json("today", "nightly.json")
    if not written_for or not isinstance(state, dict) or "last_date" not in state:
        return None
    try:
        last, for_day = date.fromisoformat(state["last_date"]), date.fromisoformat(written_for)
    except (TypeError, ValueError):
        return None
    return written_for if for_day <= last else None
