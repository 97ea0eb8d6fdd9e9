"""TOML written by hand: the standard library reads TOML (``tomllib``) but writes none.

Two places write it: the Codex reflector's ``config.toml`` (the user's model settings
carried into a scratch home) and ``integrations show codex`` (the MCP server's table,
with a root path any user may have).  One quoter serves both, because the rule is easy
to get wrong: a TOML basic string is not ``json.dumps`` — JSON leaves DEL raw and may
write a character beyond the BMP as a surrogate pair, and TOML refuses both.
"""

from __future__ import annotations

import re
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string that ``tomllib`` reads back as ``text``."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(name: str) -> str:
    """A TOML key: bare when it can be, else quoted."""
    return name if _BARE_KEY.fullmatch(name) else toml_string(name)


def toml_value(value: Any) -> str:
    """A TOML value for a JSON-like ``value`` (inline tables for tables; anything else
    as its ``str``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    return toml_string(str(value))
