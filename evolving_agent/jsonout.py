"""The JSON a model CLI prints on stdout, found among whatever else it prints.

A CLI asked for JSON does not always print only JSON: a warning line before a
pretty-printed object, a banner after a one-line result, an event stream of one object a
line with log lines between them.  The reflectors and the search agents read their answer
with these two functions, so "which text counts as the JSON" is decided in one place.
Below both ``reflectors`` and ``search`` (which may not import each other), beside
``errortext.py``, which says what the CLI's failure was.
"""

from __future__ import annotations

import json
from typing import Any


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` holds: all of it, or from its first ``{`` on (after a
    warning line), or its last line that is one (before a banner); ``None`` if none."""
    text = text.strip()
    brace = text.find("{")
    tail = [text[brace:]] if brace > 0 else []
    for chunk in [text, *tail, *reversed(text.splitlines())]:
        try:
            data = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return None


def json_lines(text: str) -> list[dict[str, Any]]:
    """Every line of ``text`` that is a JSON object, in order (an event stream's events);
    other lines, and JSON that is not an object, are skipped."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.lstrip().startswith("{"):
            continue  # no object; and a log line costs no parse
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            out.append(data)
    return out
