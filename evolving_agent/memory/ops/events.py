"""Appending to Evidence from the outside world: friction, raw/journal events, imports.

Inputs are bounded at write time (docs/authority.md, "Limits"): an event's text at
:data:`MAX_TEXT_BYTES` (16 KiB of UTF-8), a session id or hypothesis link at
:data:`MAX_FIELD_CHARS`, an import line at :data:`MAX_IMPORT_LINE_BYTES`.  Over a limit
the call raises ``InvalidInput`` (exit 4, one line; an MCP tool error) and nothing is
written.  An event whose day the nightly job has already reflected (a clock stepped
back) is refused too, with the dates: it would never be reflected otherwise.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from evolving_agent.errors import InvalidInput, first_error
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.base.bounds import (
    MAX_FIELD_CHARS,
    MAX_IMPORT_LINE_BYTES,
    MAX_TEXT_BYTES,
    check_fields,
    check_text,
    refuse_reflected_day,
)
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog, EvidenceRecord, now
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.results import Result

if TYPE_CHECKING:
    from evolving_agent.memory.canon.policy import Actor


def record_friction(
    root: MemoryRoot,
    actor: Actor,
    text: str,
    *,
    session: str | None = None,
    supports: str | None = None,
    contradicts: str | None = None,
    refuse_unknown: bool = False,
) -> Result[EvidenceRecord]:
    """Append one friction event: something that really felt off.  No quota, ever.

    A hypothesis id that is in neither the register nor Evidence (a session's hypothesis
    waits there for the next nightly run) is refused with ``refuse_unknown`` — the CLI,
    where a person typed it and can fix it (exit 4, nothing recorded); otherwise (hooks
    and MCP send these unattended) the event is kept and the result warns that no job
    will count it.
    """
    require_root(root)
    if not text.strip():
        raise InvalidInput("friction text is empty: describe what felt off")
    check_text(text)
    check_fields(session=session, supports=supports, contradicts=contradicts)
    refuse_reflected_day(root, now())
    linked = [h for h in (supports, contradicts) if h]
    unknown = _unknown_hypotheses(root, linked, deep=refuse_unknown)
    if unknown and refuse_unknown:
        raise InvalidInput(
            f"no hypothesis {unknown[0]}: nothing was recorded (see 'evolving-agent "
            "hypothesis list' for the ids, or leave --supports/--contradicts out)"
        )
    result = Result(
        Writer(root, actor).append(
            "friction", text, session=session, supports=supports, contradicts=contradicts
        )
    )
    for hid in unknown:
        result.warn(
            f"no hypothesis {hid} in the register; the event is recorded, "
            "but no job will count it for a hypothesis "
            "(see 'evolving-agent hypothesis list')"
        )
    return result


def _unknown_hypotheses(root: MemoryRoot, ids: list[str], *, deep: bool) -> list[str]:
    """The ids in ``ids`` not in the register; with ``deep`` (the human's CLI, never an
    assistant-facing caller, which must not read Evidence) nor added in Evidence since."""
    if not ids:
        return []
    from evolving_agent.memory.ops.hypotheses import list_hypotheses  # only when linked

    missing = [h for h in ids if h not in {x.id for x in list_hypotheses(root)}]
    if missing and deep:
        folded = {x.id for x in list_hypotheses(root, from_evidence=True)}
        missing = [h for h in missing if h not in folded]
    return missing


def append_event(
    root: MemoryRoot, actor: Actor, kind: str, text: str, *, session: str | None = None
) -> EvidenceRecord:
    require_root(root)
    if kind not in {"raw", "journal"}:
        raise InvalidInput(f"unknown kind {kind!r} (valid: raw, journal)")
    if not text.strip():
        raise InvalidInput("evidence text is empty: say what happened")
    check_text(text, f"{kind} text")
    check_fields(session=session)
    refuse_reflected_day(root, now())
    return Writer(root, actor).append(kind, text, session=session)


class ImportLine(BaseModel):
    """One line of an import file."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    ts: datetime
    kind: Literal["friction", "raw", "journal"]
    text: str
    session: str | None = None
    supports: str | None = None
    contradicts: str | None = None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        # Same rule as `friction` and `evidence append`: an empty event says nothing.
        if not value.strip():
            raise PydanticCustomError("blank", "the text is empty")
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_TEXT_BYTES:
            raise PydanticCustomError(
                "too_long", f"the text is {size:,} bytes; the limit is {MAX_TEXT_BYTES:,}"
            )
        return value

    @field_validator("session", "supports", "contradicts")
    @classmethod
    def _short(cls, value: str | None) -> str | None:
        if value is not None and (len(value) > MAX_FIELD_CHARS or "\n" in value):
            raise PydanticCustomError("too_long", f"one line of at most {MAX_FIELD_CHARS} chars")
        return value


def import_events(root: MemoryRoot, actor: Actor, file: Path) -> list[EvidenceRecord]:
    """Bulk append from JSON lines.  Validates every line first: one bad line, nothing lands.

    Every record's ``ts`` is the import's own time; a line's ``ts`` is kept as
    ``data.claimed_ts``.
    """
    require_root(root)
    if not file.is_file():
        raise InvalidInput("no such file", file=file)
    recorded = now()
    refuse_reflected_day(root, recorded)
    drafts: list[EvidenceDraft] = []
    with file.open("rb") as fh:
        # readline with a bound: a one-line gigabyte file is refused, not read whole.
        for lineno, raw_bytes in enumerate(
            iter(lambda: fh.readline(MAX_IMPORT_LINE_BYTES + 1), b""), 1
        ):
            if len(raw_bytes) > MAX_IMPORT_LINE_BYTES:
                raise InvalidInput(
                    f"line longer than {MAX_IMPORT_LINE_BYTES:,} bytes; nothing was imported",
                    file=file,
                    line=lineno,
                )
            try:
                raw = raw_bytes.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInput("not UTF-8 text", file=file, line=lineno) from None
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
                if not isinstance(data, dict):
                    raise InvalidInput("not a JSON object", file=file, line=lineno)
                line = ImportLine.model_validate(data)
            except ValueError as exc:
                msg = (
                    first_error(exc)
                    if isinstance(exc, ValidationError)
                    else f"not a JSON object ({exc})"
                )
                raise InvalidInput(msg, file=file, line=lineno) from None
            # The record is stamped with the time it is *recorded* (now, today's file);
            # the time the line claims is kept beside it.  So a back-dated import counts
            # as evidence of today, and cannot fill past days to skip the slow clock.
            fields = line.model_dump(exclude={"ts"})
            drafts.append(
                EvidenceDraft(
                    actor=actor,
                    ts=recorded,
                    data={"claimed_ts": line.ts.isoformat()},
                    **fields,
                )
            )
    return Writer(root, actor).append_drafts(drafts)


def show(root: MemoryRoot, day: date) -> list[EvidenceRecord]:
    require_root(root)
    return EvidenceLog(root).read_day(day)


def show_range(root: MemoryRoot, start: date, end: date) -> list[EvidenceRecord]:
    """Every record of the day files ``start``..``end`` (inclusive), day by day.

    Only days that have a file are read, so a year's range costs what its records cost.
    """
    require_root(root)
    if start > end:
        raise InvalidInput(f"--since {start} is after --until {end}")
    log = EvidenceLog(root)
    return [r for d in log.days() if start <= d <= end for r in log.read_day(d)]
