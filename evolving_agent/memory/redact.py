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

# Words that, as the name of an assignment, mark its value as a secret.  Matched as the
# end of the name (``db_password=``, ``GITHUB_TOKEN=``), never as a plural
# (``max_tokens=4096`` is not a secret).
_SECRET_NAMES = (
    r"password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?"
)

# (kind, pattern) — order matters: whole blocks and prefixed keys before assignments.
_TOKENS: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        # The whole PEM block, also when it sits JSON-escaped in one line; a truncated
        # paste (no END line) is masked up to the end of its base64 body.
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^\"]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
    ),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}"),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{10,}"),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
    ("stripe-key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{12,}"),
    ("github-token", r"\bgithub_pat_[A-Za-z0-9_]{20,}|\bgh[pousr]_[A-Za-z0-9]{20,}"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}"),
    ("aws-key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    ("google-key", r"\bAIza[0-9A-Za-z_-]{30,}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}"),
)

_TOKEN_RE = re.compile("|".join(f"(?P<k{i}>{p})" for i, (_, p) in enumerate(_TOKENS)))
_TOKEN_KINDS = {f"k{i}": kind for i, (kind, _) in enumerate(_TOKENS)}

# ``Authorization: Bearer xyz`` / ``Bearer xyz`` / ``Basic dXNlcjpwYXNz``.
_BEARER_RE = re.compile(
    r"(?i)\b(?P<scheme>bearer|basic|token)\s+(?P<value>[A-Za-z0-9._~+/-]{12,}=*)"
)

# ``scheme://user:password@host`` keeps the user, masks the password.
_URL_RE = re.compile(
    r"(?i)\b(?P<head>[a-z][a-z0-9+.-]*://[^\s:/@\"'<>\\]+:)(?P<value>[^\s/@\"'<>\\]+)@"
)

# ``password=...``, ``DB_PASSWORD: "..."``, ``"api_key": "..."``.
_ASSIGN_RE = re.compile(
    r"(?i)(?P<name>\b[\w.-]*?(?:" + _SECRET_NAMES + r"))(?![\w-])(?P<q>[\"']?)"
    r"(?P<sep>\s*[:=]\s*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\,;&]+)"
)


def _token(m: re.Match[str]) -> str:
    kind = _TOKEN_KINDS[m.lastgroup or ""]
    return MARK.format(kind)


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


_PASSES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (_TOKEN_RE, _token),
    (_URL_RE, _url),
    (_BEARER_RE, _bearer),
    (_ASSIGN_RE, _assign),
)


def redact(text: str) -> str:
    """``text`` with every credential-shaped substring replaced by ``[REDACTED:kind]``."""
    for pattern, repl in _PASSES:
        text = pattern.sub(repl, text)
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
