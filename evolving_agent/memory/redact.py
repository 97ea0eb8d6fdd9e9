"""Mask secrets before text is stored or shown: Evidence, Today, the Live Bus, boot, prompts.

Whatever a user pastes can reach friction text, and from there the bias, the boot
context and a model prompt.  ``redact`` replaces what looks like a credential with a
``[REDACTED:kind]`` marker and leaves everything else alone.

A small pattern table rather than a library: the maintained scanners either look for
PII (scrubadub, presidio: names and phone numbers, spaCy models) or scan files for
review (detect-secrets: per-line plugins, global settings, entropy heuristics that
flag the sha256 hashes every Evidence line carries).  We need a pure function over a
string that masks well-known credential shapes and keeps hashes and ids intact.

The function is idempotent (a marker never matches again) and never changes text
that holds no credential, so it is safe to apply at every boundary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MARK = "[REDACTED:{}]"

# Words that, as the name of an assignment, mark its value as a secret: the whole name or
# its last part (``db_password=``, ``GITHUB_TOKEN=``), never a plural (``max_tokens=4096``
# is not a secret).
_SECRET_NAMES = (
    r"password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?"
)

# (kind, literals, pattern): a pattern runs only when one of its literals is in the
# text, so ordinary text costs a few substring checks.  Order matters: whole blocks
# and prefixed keys before the generic assignments.
_TOKENS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "private-key",
        ("-----BEGIN",),
        # The whole PEM block, also when it sits JSON-escaped in one line; a truncated
        # paste (no END line) is masked up to the end of its base64 body.
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^\"]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
    ),
    ("jwt", ("eyJ",), r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}"),
    ("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_-]{10,}"),
    ("openai-key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
    ("stripe-key", ("k_live_", "k_test_"), r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{12,}"),
    (
        "github-token",
        ("github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        r"\bgithub_pat_[A-Za-z0-9_]{20,}|\bgh[pousr]_[A-Za-z0-9]{20,}",
    ),
    ("slack-token", ("xox", "xapp-"), r"\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}"),
    ("aws-key", ("AKIA", "ASIA", "ABIA", "ACCA"), r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("google-key", ("AIza",), r"\bAIza[0-9A-Za-z_-]{30,}"),
    ("huggingface-token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    ("gitlab-token", ("glpat-",), r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
)

# ``Authorization: Bearer xyz`` / ``Bearer xyz`` / ``Basic dXNlcjpwYXNz``.
_BEARER_RE = re.compile(
    r"(?i)\b(?P<scheme>bearer|basic|token)\s+(?P<value>[A-Za-z0-9._~+/-]{12,}=*)"
)

# ``scheme://user:password@host`` keeps the user, masks the password.
_URL_RE = re.compile(
    r"(?i)\b(?P<head>[a-z][a-z0-9+.-]*://[^\s:/@\"'<>\\]+:)(?P<value>[^\s/@\"'<>\\]+)@"
)

# ``password=...``, ``DB_PASSWORD: "..."``, ``"api_key": "..."``.  The name is the
# secret word itself, after a non-alphanumeric (``DB_``, a quote, a space) or nothing.
_ASSIGN_RE = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?P<name>" + _SECRET_NAMES + r")(?![\w-])(?P<q>[\"']?)"
    r"(?P<sep>\s*[:=]\s*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\,;&]+)"
)
_ASSIGN_HINTS = ("pass", "secret", "token", "key", "credential")


def _token(kind: str) -> Callable[[re.Match[str]], str]:
    marker = MARK.format(kind)
    return lambda _m: marker


def _bearer(m: re.Match[str]) -> str:
    value = m.group("value")
    # "token implementation" is prose: a credential has a digit or a separator in it.
    if value.startswith("[REDACTED") or not any(c.isdigit() or c in "._~+/-" for c in value):
        return m.group(0)
    return f"{m.group('scheme')} {MARK.format('token')}"


def _url(m: re.Match[str]) -> str:
    return m.group("head") + MARK.format("password") + "@"


def _assign(m: re.Match[str]) -> str:
    value = m.group("value")
    quoted = value[:1] in {'"', "'"}
    bare = value.strip("\"'")
    if not bare or bare.startswith("[REDACTED"):
        return m.group(0)
    # "token: the word" is prose; "token: a1b2c3d4e5" or "token=x" is a credential.
    if ":" in m.group("sep") and not quoted and not m.group("q"):
        if len(bare) < 8 or not any(c.isdigit() for c in bare):
            return m.group(0)
    masked = MARK.format("secret")
    if quoted:
        masked = value[0] + masked + value[0]
    return m.group("name") + m.group("q") + m.group("sep") + masked


# (literals that must occur, lower-cased first?, pattern, replacement)
_PASSES: tuple[tuple[tuple[str, ...], bool, re.Pattern[str], Callable[[re.Match[str]], str]], ...]
_PASSES = (
    *((lits, False, re.compile(pat), _token(kind)) for kind, lits, pat in _TOKENS),
    (("://",), False, _URL_RE, _url),
    (("bearer", "basic", "token"), True, _BEARER_RE, _bearer),
    (_ASSIGN_HINTS, True, _ASSIGN_RE, _assign),
)


# Unicode's format characters (category Cf, as of Unicode 14): what boot's rendering drops.
_FORMAT_CHARS = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]"
)


def redact(text: str) -> str:
    """``text`` with every credential-shaped substring replaced by ``[REDACTED:kind]``.

    Invisible format characters (zero-width space, joiners, bidi marks) inside a key hide
    it from the patterns, and boot drops them when it renders: so when the text without
    them holds a credential, that text is the one masked and kept.
    """
    if _FORMAT_CHARS.search(text):
        visible = _FORMAT_CHARS.sub("", text)
        masked = _redact(visible)
        if masked != visible:
            return masked
    return _redact(text)


def _redact(text: str) -> str:
    lower = text.lower()
    for literals, folded, pattern, repl in _PASSES:
        haystack = lower if folded else text
        if any(lit in haystack for lit in literals):
            text = pattern.sub(repl, text)
            lower = text.lower()
    return text


def redact_data(value: Any) -> Any:
    """Redact every string inside a JSON-like value (dict keys are names, kept as they are)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(v) for v in value]
    return value
