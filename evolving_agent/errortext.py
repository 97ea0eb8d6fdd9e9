"""What a model CLI's failure says, in one line (reflectors, probe answerers, search agents).

A CLI that fails prints its reason first and then noise — warnings every call prints,
a stack trace, a hint, the braces of a pretty-printed object — so the reason is the first
line that says something.  An API error an agent CLI passes on as JSON
(``[API Error: {"error":{"code":429,"message":"…"}}]``) is named as ``HTTP 429: …``.
Below both ``reflectors`` and ``search`` (which may not import each other), beside
``process.py``, which runs the CLIs.
"""

from __future__ import annotations

import json
import re

LIMIT = 300  # characters of a reason: one line a person reads

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Lines that are never the reason: warnings every call prints, stack frames, braces.
_NOISE = re.compile(
    r"^(warning\b|warn\b|ripgrep is not available|loaded cached credentials|"
    r"data collection is disabled|yolo mode is enabled|"
    r"at |[{}\[\]],?$|status: \d+|\d{4}-\d\d-\d\dT[\d:.]+Z (warn|info|debug)\b)",
    re.IGNORECASE,
)


def first_error_line(text: str) -> str:
    """The first line of ``text`` that says something (not a warning or a stack frame)."""
    for raw in text.splitlines():
        line = _ANSI.sub("", raw).strip()
        if line and not _NOISE.match(line):
            return line[:LIMIT]
    return ""


def api_error_text(text: str) -> str:
    """``[API Error: {"error":{"code":429,"message":"…"}}]`` as ``HTTP 429: …``; any
    other text as its first line that says something."""
    start = text.find("{")
    if start >= 0:
        try:
            data = json.loads(text[start : text.rfind("}") + 1])
        except json.JSONDecodeError:
            data = None
        inner = data.get("error") if isinstance(data, dict) else None
        if isinstance(inner, dict) and inner.get("message"):
            code = inner.get("code")
            head = f"HTTP {code}: " if isinstance(code, int) else ""
            return first_error_line(f"{head}{inner['message']}")
    return first_error_line(text)
