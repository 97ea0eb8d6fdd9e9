"""Text from the root, made safe to show a person: invisible characters made visible.

HTML escaping (Jinja's autoescape) stops markup; it does not stop a bidi override from
reversing a line, a zero-width space from hiding inside a word, or a terminal escape
from surviving a copy-paste.  Every string a template prints passes through
:func:`visible` first (the environment's ``finalize``), so none of them reach the page
as they are: each becomes a short visible mark naming its code point.
"""

from __future__ import annotations

import unicodedata

_KEEP = {"\n", "\t"}
_BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def visible(text: str, *, multiline: bool = True) -> str:
    """``text`` with control, format (bidi, zero-width), private and unassigned
    characters replaced by ``⟨U+XXXX⟩``; newlines and tabs kept when ``multiline``."""
    out = []
    for ch in text:
        if ch in _KEEP and multiline:
            out.append(ch)
        elif unicodedata.category(ch) in _BAD_CATEGORIES:
            out.append(f"⟨U+{ord(ch):04X}⟩")
        else:
            out.append(ch)
    return "".join(out)
