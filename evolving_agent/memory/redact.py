"""Mask secrets before text is stored or shown: Evidence, Today, the Live Bus, boot, prompts.

Whatever a user pastes can reach friction text, and from there the bias, the boot
context and a model prompt.  ``redact`` replaces what looks like a credential with a
``[REDACTED:kind]`` marker and leaves everything else alone.

A pattern table of our own rather than a library, chosen after trying both candidates
(docs/authority.md, "Secrets"): ``detect-secrets`` (Yelp) found 4 of the 18 shapes the
issue lists, costs 130-400 ms to import (its plugin base pulls in ``requests``) on a
path every friction hook takes, and its entropy plugins flag the sha256 hashes every
Evidence line carries; the gitleaks rule set is the better-kept list, but it is Go
code and generated TOML we would have to copy and re-sync.  The table below covers
the shapes of both lists that matter for pasted text (provider keys by their fixed
prefixes, webhook URLs, PEM and PuTTY key blocks), plus what neither scanner catches
in prose and shell lines: keyword assignments (``password=``, ``DB_PASS:``,
``PGPASSWORD=``), command-line flags (``--password X``, ``mysql -pX``, ``curl -u
user:pass``), URL credentials (a password may hold ``@``) and HTTP Basic auth.
tests/memory/test_redact_shapes.py holds the shapes, one per provider.

The function is idempotent (a marker never matches again) and never changes text
that holds no credential, so it is safe to apply at every boundary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MARK = "[REDACTED:{}]"


class _Lazy:
    """A pattern compiled on its first use.  Most texts hold no literal of any pass (see
    ``_AS_IS`` below), so a friction write compiles none of the ~40 patterns; compiling
    them all at import cost more than the rest of that write's Python start."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def sub(self, repl: Callable[[re.Match[str]], str] | str, text: str) -> str:
        return self.pattern().sub(repl, text)

# Words that, as the name of an assignment, mark its value as a secret: the whole name or
# its last part (``db_password=``, ``GITHUB_TOKEN=``), never a plural (``max_tokens=4096``
# is not a secret).
_SECRET_NAMES = (
    r"pgpassword|password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?|account[_-]?key"
    r"|shared[_-]?access[_-]?(?:key|signature)|auth[_-]?token|session[_-]?key"
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
    (
        "putty-key",
        ("PuTTY-User-Key-File-",),
        r"PuTTY-User-Key-File-\d+:[^\n]*(?:\n(?!\n)[^\n]*)*?(?:Private-MAC:\s*[0-9A-Fa-f]+|$)",
    ),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}",
    ),
    (
        "discord-webhook",
        ("discord",),
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
    ),
    ("sendgrid-key", ("SG.",), r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("stripe-webhook-secret", ("whsec_",), r"\bwhsec_[A-Za-z0-9+/=]{20,}"),
    ("twilio-key", ("SK",), r"\bSK[0-9a-fA-F]{32}\b"),
    ("google-oauth-token", ("ya29.",), r"\bya29\.[A-Za-z0-9_-]{20,}"),
    ("pypi-token", ("pypi-",), r"\bpypi-[A-Za-z0-9_-]{40,}"),
    ("mailgun-key", ("key-",), r"\bkey-[0-9a-f]{32}\b"),
    ("telegram-token", (":AA",), r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
    ("shopify-token", ("shp",), r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    (
        "square-token",
        ("sq0", "EAAA"),
        r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}|\bEAAA[A-Za-z0-9_-]{60}\b",
    ),
    ("databricks-token", ("dapi",), r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
    ("digitalocean-token", ("do",), r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("linear-key", ("lin_api_",), r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("doppler-token", ("dp.",), r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("age-secret-key", ("AGE-SECRET-KEY-",), r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    ("azure-sas", ("sig=",), r"(?<=[?&]sig=)[A-Za-z0-9%+/=]{20,}"),
)

# ``Authorization: Bearer xyz`` / ``Bearer xyz`` / ``Basic dXNlcjpwYXNz``.
_BEARER_RE = _Lazy(
    r"(?i)\b(?P<scheme>bearer|basic|token)\s+(?P<value>[A-Za-z0-9._~+/-]{8,}=*)"
)

# ``scheme://user:password@host`` keeps the user, masks the password.
# The user may be empty (``redis://:pw@host``) and the password may hold ``@``: the
# host starts after the *last* ``@`` before the path.
_URL_RE = _Lazy(
    r"(?i)\b(?P<head>[a-z][a-z0-9+.-]*://[^\s:/@\"'<>\\]*:)(?P<value>[^\s/\"'<>\\]+)"
    r"@(?=[^\s@/\"'<>\\]+(?:[/?#\s\"'<>]|$))"
)

# Command-line credentials: ``--password X`` / ``--token=X``, ``mysql -pX``, and
# ``curl -u user:pass`` / ``--user user:pass`` (the user is kept).
_FLAG_RE = _Lazy(
    r"(?i)(?<![\w-])(?P<flag>--(?:password|passwd|pass|pwd|token|api-key|apikey|secret"
    r"|client-secret|access-key|secret-key|auth-token))(?P<sep>=|\s+)(?P<value>[^\s\"']+|\"[^\"]*\"|'[^']*')"
)
_MYSQL_RE = _Lazy(
    r"\b(?P<head>mysql(?:dump|admin|import|sh)?\b[^\n]*?\s-p)(?P<value>[^\s\"']+)"
)
_USER_RE = _Lazy(
    r"(?<![\w-])(?P<head>(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"']+:)(?P<value>[^\s\"']+)"
)

# ``password=...``, ``DB_PASSWORD: "..."``, ``"api_key": "..."``.  The name is the
# secret word itself, after a non-alphanumeric (``DB_``, a quote, a space) or nothing.
_ASSIGN_RE = _Lazy(
    r"(?i)(?<![A-Za-z0-9])(?P<name>" + _SECRET_NAMES + r")(?![\w-])(?P<q>[\"']?)"
    r"(?P<sep>\s*[:=]\s*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\,;&]+)"
)
_ASSIGN_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "signature")


def _token(kind: str) -> Callable[[re.Match[str]], str]:
    marker = MARK.format(kind)
    return lambda _m: marker


def _bearer(m: re.Match[str]) -> str:
    value = m.group("value")
    if value.startswith("[REDACTED"):
        return m.group(0)
    # "token implementation" is prose: a credential has a digit or a separator in it,
    # or (Basic) is base64 of "user:password".
    if not any(c.isdigit() or c in "._~+/-=" for c in value) and not _is_basic(value):
        return m.group(0)
    return f"{m.group('scheme')} {MARK.format('token')}"


def _is_basic(value: str) -> bool:
    import base64
    import binascii

    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and decoded.isascii()


def _keep_head(kind: str) -> Callable[[re.Match[str]], str]:
    marker = MARK.format(kind)

    def repl(m: re.Match[str]) -> str:
        if m.group("value").startswith(("[REDACTED", '"[REDACTED', "'[REDACTED")):
            return m.group(0)
        return m.group("head") + marker

    return repl


def _flag(m: re.Match[str]) -> str:
    if "[REDACTED" in m.group("value"):
        return m.group(0)
    return m.group("flag") + m.group("sep") + MARK.format("secret")


def _url(m: re.Match[str]) -> str:
    return m.group("head") + MARK.format("password") + "@"


def _assign(m: re.Match[str]) -> str:
    value = m.group("value")
    quoted = value[:1] in {'"', "'"}
    bare = value.strip("\"'")
    if not bare or bare.startswith("[REDACTED"):
        return m.group(0)
    # "token: the word" is prose; "password: hunter2", "token: a1b2c3d4e5" or "token=x"
    # is a credential.
    if ":" in m.group("sep") and not quoted and not m.group("q"):
        if len(bare) < 4 or not any(c.isdigit() or not c.isalnum() for c in bare):
            return m.group(0)
    masked = MARK.format("secret")
    if quoted:
        masked = value[0] + masked + value[0]
    return m.group("name") + m.group("q") + m.group("sep") + masked


# (literals that must occur, lower-cased first?, pattern, replacement)
_PASSES: tuple[tuple[tuple[str, ...], bool, _Lazy, Callable[[re.Match[str]], str]], ...]
_PASSES = (
    *((lits, False, _Lazy(pat), _token(kind)) for kind, lits, pat in _TOKENS),
    (("://",), False, _URL_RE, _url),
    (("--",), False, _FLAG_RE, _flag),
    (("mysql",), False, _MYSQL_RE, _keep_head("password")),
    (("-u", "--user"), False, _USER_RE, _keep_head("password")),
    (("bearer", "basic", "token"), True, _BEARER_RE, _bearer),
    (_ASSIGN_HINTS, True, _ASSIGN_RE, _assign),
)


# Unicode's format characters (category Cf, as of Unicode 14): what boot's rendering drops.
_FORMAT_CHARS = _Lazy(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f\u2028\u2029\u0085]"
)


def redact(text: str) -> str:
    """``text`` with every credential-shaped substring replaced by ``[REDACTED:kind]``.

    Invisible format characters (zero-width space, joiners, bidi marks) inside a key hide
    it from the patterns, and boot drops them when it renders: so when the text without
    them holds a credential, that text is the one masked and kept.
    """
    # Every format character is outside ASCII: most texts need no scan for them.
    if not text.isascii() and _FORMAT_CHARS.pattern().search(text):
        visible = _FORMAT_CHARS.sub("", text)
        masked = _redact(visible)
        if masked != visible:
            return masked
    return _redact(text)


# The literals of every pass in two patterns (as-is, and those matched on the lower-cased
# text): most strings (ids, dates, ordinary prose) hold none, and one scan in C tells so
# instead of a Python loop over ~60 substring checks (a nightly's records carry hundreds
# of such strings).  When neither finds anything, no pass below would run: same text.
_AS_IS = re.compile("|".join(re.escape(x) for lits, f, _, _ in _PASSES if not f for x in lits))
_FOLDED = re.compile("|".join(re.escape(x) for lits, f, _, _ in _PASSES if f for x in lits))


def _redact(text: str) -> str:
    if not _AS_IS.search(text) and not _FOLDED.search(text.lower()):
        return text
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
