"""Text from the root, made safe for a person's terminal: the one rendering rule.

Anything a human reads (``evidence show``, ``canon log``, ``review show``, a search
report, …) may hold text a session wrote: friction, a commit message, a hypothesis
trigger, a Live Bus note.  A terminal obeys control characters in it — ``ESC [1A``
moves the cursor up and erases the record above, ``\\r`` overwrites a line, OSC 52
writes to the clipboard, a bidi override reorders what is shown, a zero-width space
hides a difference.  So every view renders through :func:`neutralise`, whether or not
stdout is a terminal (a pager or ``| less -R`` is one, later).

The rule: C0 and C1 control characters (except tab and, where a view keeps lines,
newline), DEL, Unicode line/paragraph separators and every format character (bidi
embeddings, overrides and isolates, zero-width spaces and joiners, the BOM, …) are
shown as ``\\uXXXX`` (beyond the BMP, as its surrogate pair).  That notation is visible
to a person and is also a JSON string escape, so ``--json`` output stays valid JSON that
decodes back to the original text.
Everything else is kept.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL and the C1 block; line and paragraph separators;
# Unicode's format characters (category Cf, Unicode 15): bidi marks, embeddings,
# overrides and isolates, zero-width space/joiners, word joiner, BOM, tags.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_UNSAFE_KEEP_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + _FORMAT + "]")
_UNSAFE_ONE_LINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029" + _FORMAT + "]")


def _shown(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    if code > 0xFFFF:
        # JSON's \\u takes exactly four digits: a character beyond the BMP (the tag
        # characters that smuggle ASCII past a reader) is its UTF-16 surrogate pair, or
        # ``\\ue0041`` would decode as U+E004 followed by a literal "1".
        high, low = divmod(code - 0x10000, 0x400)
        return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
    return f"\\u{code:04x}"


def neutralise(text: str) -> str:
    """``text`` with every control, escape, bidi and zero-width character made visible
    as ``\\uXXXX``; newlines and tabs are kept."""
    return _UNSAFE_KEEP_LINES.sub(_shown, text)


def one_line(text: str) -> str:
    """:func:`neutralise`, and newlines shown too: for a field printed on one line, so
    text cannot start a line that looks like another record."""
    return _UNSAFE_ONE_LINE.sub(_shown, text)


def is_safe(text: str) -> bool:
    """True when :func:`neutralise` would not change ``text``."""
    return _UNSAFE_KEEP_LINES.search(text) is None
