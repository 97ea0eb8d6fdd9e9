"""What one event may hold, checked at write time, with the standard library only.

The limits of docs/authority.md ("Limits"): an event's text at :data:`MAX_TEXT_BYTES`
(16 KiB of UTF-8), a session id or hypothesis link at :data:`MAX_FIELD_CHARS` (one
line), an import line at :data:`MAX_IMPORT_LINE_BYTES`; and no event dated on a day the
nightly job already reflected, that day itself included (a clock stepped back).  Over a
limit the check raises ``InvalidInput`` (exit 4, one line) before anything is written.
Kept apart from :mod:`evolving_agent.memory.ops.events` so the friction fast path
(:mod:`evolving_agent.memory.evidence.frictionfast`) runs the very same checks without pydantic.
"""

from __future__ import annotations

import json
from datetime import date, datetime

from evolving_agent.errors import InvalidInput
from evolving_agent.paths import MemoryRoot

MAX_TEXT_BYTES = 16 * 1024
MAX_FIELD_CHARS = 200
MAX_IMPORT_LINE_BYTES = 32 * 1024
# Copy of reflectors.context.NIGHTLY_STATE_FILE (memory may not import reflectors).
NIGHTLY_STATE_FILE = "nightly.json"


def check_text(text: str, what: str = "friction text") -> str:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TEXT_BYTES:
        raise InvalidInput(
            f"the {what} is {size:,} bytes; the limit is {MAX_TEXT_BYTES:,} "
            "(say what felt off in a few lines; keep documents elsewhere)"
        )
    return text


def check_fields(**fields: str | None) -> None:
    for name, value in fields.items():
        if value is not None and (len(value) > MAX_FIELD_CHARS or "\n" in value):
            raise InvalidInput(
                f"--{name} must be one line of at most {MAX_FIELD_CHARS} characters "
                f"(got {len(value):,})"
            )


def last_reflected_day(root: MemoryRoot) -> date | None:
    """The last day the nightly job reflected (today/nightly.json), if any."""
    try:
        data = json.loads((root.today / NIGHTLY_STATE_FILE).read_text(encoding="utf-8"))
        return date.fromisoformat(str(data["last_date"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def refuse_reflected_day(root: MemoryRoot, ts: datetime) -> None:
    """An event dated on a day already reflected would never be reflected: refuse it.

    The reflected day itself counts: its nightly has run (a catch-up reflects only the
    days after it), so an event a clock stepped back onto it would be silently lost."""
    last = last_reflected_day(root)
    day = ts.date()
    if last is not None and day <= last:
        raise InvalidInput(
            f"the clock says {ts:%Y-%m-%d %H:%M}, but the nightly job already reflected "
            f"{last}: an event dated {day} would never be reflected; nothing was written "
            "(check the system clock)"
        )
