"""Mask secrets before text is stored or shown: Evidence, Today, the Live Bus, boot, prompts.

Whatever a user pastes can reach friction text, and from there the bias, the boot
context and a model prompt.  ``redact`` replaces what looks like a credential with a
``[REDACTED:kind]`` marker and leaves everything else alone.

Three layers (docs/authority.md, "Secrets", has the evaluation behind the choice):

1. Provider keys come from a maintained detector, bc-detect-secrets (the maintained
   fork of Yelp's detect-secrets; import name ``detect_secrets``): its regex plugins'
   patterns, read at run time, so plugins it adds are used without a change here.
   Its entropy plugins (they flag the sha256 hashes Evidence carries) and its keyword
   and Basic-auth plugins (layer 3 does those better for prose) are left out.
2. ``_GAPS``: the shapes its plugins miss (Anthropic, OpenAI, GitLab, PyPI, webhooks,
   PGP and PuTTY key blocks, ...).  tests/memory/base/test_redact_detector.py checks each
   row against the installed detector, so a row it learns fails there and goes.
3. What no scanner catches in prose and shell lines: keyword assignments
   (``password=``, ``DB_PASS:``, ``PGPASSWORD=``), command-line flags (``--password
   X``, ``mysql -pX``, ``curl -u user:pass``, ``sshpass -p X``), ``.netrc`` lines, URL
   credentials (a password may hold ``@``) and HTTP Basic auth.

4. Shapes that hide a key from every pattern above, undone before they run: a key split
   by a newline (``_rejoined``), written in full-width or other compatibility forms
   (``_compat``), wrapped in base64 or an OpenSSH key body without its header
   (``_encoded``).

The detector is a core dependency, but a heavy import (it pulls in ``requests``): it
is imported only for text holding a key-shaped run (``_may_hold_key``) and then kept
for the process, so an ordinary friction never pays for it; boot's fast path never
imports it (``redact_fast``: ``_FALLBACK``, our copy of its common shapes, stands in).
An install without it gets ``_FALLBACK`` too.

The function is idempotent (a marker never matches again) and never changes text
that holds no credential, so it is safe to apply at every boundary.
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False  # boot's fast path imports this module, not typing (mypy: typing's)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

MARK = "[REDACTED:{}]"


class _Lazy:
    """A pattern compiled on its first use.  Most texts hold no literal of any pass (see
    ``_AS_IS`` below), so a friction write compiles none of the ~50 patterns; compiling
    them all at import cost more than the rest of that write's Python start."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern().search(text)

    def sub(self, repl: Callable[[re.Match[str]], str] | str, text: str) -> str:
        return self.pattern().sub(repl, text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.pattern().fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern().finditer(text)


# Words that, as the name of an assignment, mark its value as a secret: the whole name or
# its last part (``db_password=``, ``GITHUB_TOKEN=``), never a plural (``max_tokens=4096``
# is not a secret).
_SECRET_NAMES = (
    r"pgpassword|password|passwd|passphrase|pass|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|secret[_-]?key|client[_-]?secret|credentials?|account[_-]?key"
    r"|shared[_-]?access[_-]?(?:key|signature)|auth[_-]?token|session[_-]?key"
)

# (kind, literals, pattern): a pattern runs only when one of its literals is in the
# text, so ordinary text costs a few substring checks.  Order matters: whole blocks
# and prefixed keys before the generic assignments.
# Provider keys by their fixed prefixes, in two tables.  (kind, literals, pattern): a
# pattern runs only when one of its literals is in the text, so ordinary text costs a few
# substring checks.  Order matters: whole blocks and prefixed keys before the generic
# assignments.
#
# _GAPS: shapes the maintained detector (below) does not find — PGP key blocks and PuTTY
# key files (it masks only their first line), and providers its plugins lack.  Always
# applied.
# tests/memory/base/test_redact_detector.py checks that the detector still misses each one, so
# an entry whose provider the detector gains fails that test and is deleted here.
_GAPS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "private-key",
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----",),
        # Its PEM plugin stops at " BLOCK": the armoured body would stay.
        r"-----BEGIN PGP PRIVATE KEY BLOCK-----"
        r"(?:[^\"]*?-----END PGP PRIVATE KEY BLOCK-----|[A-Za-z0-9+/=\s\\]*)",
    ),
    (
        "putty-key",
        ("PuTTY-User-Key-File-",),
        r"PuTTY-User-Key-File-\d+:[^\n]*(?:\n(?!\n)[^\n]*)*?(?:Private-MAC:\s*[0-9A-Fa-f]+|$)",
    ),
    ("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_-]{10,}"),
    ("openai-key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
    ("stripe-key", ("k_test_",), r"\b[rs]k_test_[A-Za-z0-9]{12,}"),
    ("github-token", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    ("slack-token", ("xapp-",), r"\bxapp-[A-Za-z0-9-]{10,}"),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        r"https?://hooks\.slack\.com/(?:workflows|triggers)/[A-Za-z0-9_/+-]{8,}",
    ),
    ("google-key", ("AIza",), r"\bAIza[0-9A-Za-z_-]{30,}"),
    ("huggingface-token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}"),
    ("gitlab-token", ("glpat-",), r"\bglpat-[A-Za-z0-9_-]{20,}"),
    (
        "discord-webhook",
        ("discord",),
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
    ),
    ("stripe-webhook-secret", ("whsec_",), r"\bwhsec_[A-Za-z0-9+/=]{20,}"),
    ("google-oauth-token", ("ya29.",), r"\bya29\.[A-Za-z0-9_-]{20,}"),
    ("pypi-token", ("pypi-",), r"\bpypi-[A-Za-z0-9_-]{40,}"),
    ("mailgun-key", ("key-",), r"\bkey-[0-9a-f]{32}\b"),
    ("telegram-token", (":AA",), r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
    ("shopify-token", ("shp",), r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("square-token", ("sq0atp", "EAAA"), r"\bsq0atp-[A-Za-z0-9_-]{22,}|\bEAAA[A-Za-z0-9_-]{60}\b"),
    ("databricks-token", ("dapi",), r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
    ("digitalocean-token", ("_v1_",), r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("linear-key", ("lin_api_",), r"\blin_api_[A-Za-z0-9]{40}\b"),
    ("doppler-token", ("dp.",), r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("age-secret-key", ("AGE-SECRET-KEY-",), r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    ("azure-sas", ("sig=",), r"(?<=[?&]sig=)[A-Za-z0-9%+/=]{20,}"),
)

# _FALLBACK: the shapes the detector's plugins cover (PEM blocks, AWS, GitHub classic,
# Slack, Stripe live, Twilio, SendGrid, JWT, npm, Square OAuth).  Used only where the
# detector is not: boot's fast path (which must not pay its import) and an install
# without it.
_FALLBACK: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "private-key",
        ("-----BEGIN",),
        # The whole PEM block, also when it sits JSON-escaped in one line; a truncated
        # paste (no END line) is masked up to the end of its base64 body.
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[^\"]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)",
    ),
    (
        "json-web-token",
        ("eyJ",),
        r"\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}",
    ),
    ("stripe-access-key", ("k_live_",), r"\b[rs]k_live_[A-Za-z0-9]{12,}"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    ("slack-token", ("xox",), r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    (
        "aws-access-key",
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    ),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        r"https?://hooks\.slack\.com/services/[A-Za-z0-9_/+-]{8,}",
    ),
    ("sendgrid-api-key", ("SG.",), r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("twilio-api-key", ("SK",), r"\bSK[0-9a-fA-F]{32}\b"),
    ("npm-tokens", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("square-oauth-secret", ("sq0csp",), r"\bsq0csp-[A-Za-z0-9_-]{22,}"),
)

# ``Authorization: Bearer xyz`` / ``Bearer xyz`` / ``Basic dXNlcjpwYXNz``.
_BEARER_RE = _Lazy(r"(?i)\b(?P<scheme>bearer|basic|token)\s+(?P<value>[A-Za-z0-9._~+/-]{8,}=*)")

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
_MYSQL_RE = _Lazy(r"\b(?P<head>mysql(?:dump|admin|import|sh)?\b[^\n]*?\s-p)(?P<value>[^\s\"']+)")
# ``sshpass -p X``, ``docker login -u me -p X`` (podman, buildah, helm registry alike).
_LOGIN_P_RE = _Lazy(
    r"\b(?P<head>(?:sshpass|(?:docker|podman|buildah|helm(?:\s+registry)?)\s+login)\b"
    r"[^\n]*?\s-p\s*)(?P<value>'[^']*'|\"[^\"]*\"|[^\s\"']+)"
)
# A ~/.netrc line: ``machine HOST login USER password X``.
_NETRC_RE = _Lazy(r"\b(?P<head>machine\s+\S+\s+login\s+\S+\s+password\s+)(?P<value>\S+)")
_USER_RE = _Lazy(r"(?<![\w-])(?P<head>(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"']+:)(?P<value>[^\s\"']+)")

# ``password=...``, ``DB_PASSWORD: "..."``, ``"api_key": "..."``.  The name is the
# secret word itself, after a non-alphanumeric (``DB_``, a quote, a space) or nothing.
_ASSIGN_RE = _Lazy(
    r"(?i)(?<![A-Za-z0-9])(?P<name>" + _SECRET_NAMES + r")(?![\w-])(?P<q>[\"']?)"
    r"(?P<sep>\s*[:=]\s*)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\,;&]+)"
)
_ASSIGN_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "signature")

# A credential in a URL's query: ``https://maps.example.com/api?key=AIza…&q=x``.  ``key=``
# alone is no assignment name above (``sort key=name`` is prose), but in a query after
# ``?`` or ``&`` it is the API key.
_QUERY_RE = _Lazy(
    r"(?i)(?P<head>[?&;](?:key|api[_-]?key|apikey|access[_-]?token|auth|token|secret|sig"
    r"|signature|password|pass|pwd|client[_-]?secret|x-amz-signature|x-goog-signature"
    r"|x-amz-security-token|code)=)(?P<value>[^&#\s\"'<>\\]{6,})"
)
# A cloud provider's secret key in prose: ``my aws secret is wJalrXUtnFEMI/K7MDENG/…`` (40
# characters; the detector knows Azure's 88-character storage keys itself).  Its AWS rule
# wants the key in quotes; the context words within a few words before it are
# what make a 40-character run a key and not a hash (a hash is plain hex, never mixed case).
_CLOUD_RE = _Lazy(
    r"(?i)\b(?P<head>(?:aws|amazon|azure|gcp|google cloud|cloud|s3|storage|secret|access)\b"
    r"[^\n]{0,40}?)(?<![A-Za-z0-9/+])(?P<value>[A-Za-z0-9/+]{40})"
    r"(?![A-Za-z0-9/+=])"
)


def _token(kind: str) -> Callable[[re.Match[str]], str]:
    marker = MARK.format(kind)
    # A block whose body the detector masked already keeps its frame: masking is idempotent.
    return lambda m: m.group(0) if "[REDACTED" in m.group(0) else marker


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


def _user(m: re.Match[str]) -> str:
    # ``docker run -u 1000:1000`` is a uid:gid, not a user and password.
    if re.fullmatch(r"\d+", m.group("value")) and re.search(r"\d+:$", m.group("head")):
        return m.group(0)
    return _keep_head("password")(m)


def _cloud(m: re.Match[str]) -> str:
    value = m.group("value")
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    if not mixed or not any(c.isdigit() or c in "/+" for c in value):
        return m.group(0)  # a word run, a hex hash, a path: no key
    return m.group("head") + MARK.format("cloud-secret-key")


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
    if not bare or "[REDACTED" in bare:  # masked already, maybe by a pass that kept a frame
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


if TYPE_CHECKING:
    _Pass = tuple[tuple[str, ...], bool, _Lazy, Callable[[re.Match[str]], str]]


def _table(rows: tuple[tuple[str, tuple[str, ...], str], ...]) -> tuple[_Pass, ...]:
    return tuple((lits, False, _Lazy(pat), _token(kind)) for kind, lits, pat in rows)


# (literals that must occur, lower-cased first?, pattern, replacement)
_GAP_PASSES = _table(_GAPS)
_FALLBACK_PASSES = _table(_FALLBACK)
# What no scanner's plugins catch in prose and shell lines.
_PROSE_PASSES: tuple[_Pass, ...] = (
    (("://",), False, _URL_RE, _url),
    (("--",), False, _FLAG_RE, _flag),
    (("mysql",), False, _MYSQL_RE, _keep_head("password")),
    (("-u", "--user"), False, _USER_RE, _user),
    (("sshpass", "login"), False, _LOGIN_P_RE, _keep_head("password")),
    (("machine",), False, _NETRC_RE, _keep_head("password")),
    (("bearer", "basic", "token"), True, _BEARER_RE, _bearer),
    (_ASSIGN_HINTS, True, _ASSIGN_RE, _assign),
    (("=",), False, _QUERY_RE, _keep_head("secret")),
    (
        ("aws", "amazon", "azure", "gcp", "cloud", "s3", "storage", "secret", "access"),
        True,
        _CLOUD_RE,
        _cloud,
    ),
)


# --- the maintained detector ------------------------------------------------------------
#
# bc-detect-secrets (the maintained fork of Yelp's detect-secrets; its import name is
# ``detect_secrets``).  Its regex plugins are the provider-key rules; these are left out:
# the entropy plugins (they flag the sha256 hashes and ids every Evidence line carries),
# its keyword and Basic-auth plugins (ours, in _PROSE_PASSES, know prose and shell lines and
# keep the user name), and a public-IP plugin some versions ship (an address is no secret).
_SKIPPED_PLUGINS = frozenset(
    {
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "KeywordDetector",
        "BasicAuthDetector",
        "IPPublicDetector",
    }
)

# Every string the detector's plugins match is a run of at least this many key characters
# with a digit in it: text without such a run never pays for the detector's import.  A run
# of lower-case hex and dashes (a sha256, a git sha, a uuid, an Evidence id) is no provider
# key the plugins know, so it does not count either.
_TOKEN_RUN = _Lazy(r"[A-Za-z0-9+/=_.~-]{16,}")
_PLAIN_HEX = _Lazy(r"[0-9a-f-]+")


def _may_hold_key(text: str) -> bool:
    for m in _TOKEN_RUN.finditer(text):
        run = m.group(0)
        if any(c.isdigit() for c in run) and not _PLAIN_HEX.fullmatch(run):
            return True
    return False


class _Detector:
    """The detector's regex plugins, imported on first use and kept for the process."""

    def __init__(self) -> None:
        self._plugins: list[tuple[str, list[re.Pattern[str]]]] | None = None

    def plugins(self) -> list[tuple[str, list[re.Pattern[str]]]]:
        """(kind, the plugin's patterns) pairs; empty when the detector is not installed.

        The patterns themselves, not the plugin's ``analyze_line``: that may call the
        plugin's ``verify()``, which sends the key to its provider over the network.
        """
        if self._plugins is None:
            self._plugins = _load_plugins()
        return self._plugins

    def available(self) -> bool:
        return bool(self.plugins())

    def mask(self, text: str) -> str:
        for kind, patterns in self.plugins():
            repl = functools.partial(_mask_match, marker=MARK.format(kind))
            for pattern in patterns:
                text = pattern.sub(repl, text)
        return text


_SEPARATORS = " \t\n=:\"'"


def _mask_match(m: re.Match[str], marker: str) -> str:
    """The match with its secret part masked.

    A plugin's pattern may capture the key after its context (``aws ... secret ...
    (KEY)``: the name stays), name it (``(?P<secret_key>…)`` between a PEM block's
    header and footer), or capture only a prefix (``(ghp|gho)_…``: the whole match goes):
    a group named for the secret, else the longest group of 8 characters or more, else
    the whole match.
    """
    whole = m.group(0)
    if "[REDACTED" in whole:
        return whole
    named = [i for name, i in m.re.groupindex.items() if "secret" in name and m.group(i)]
    groups = named or [
        i for i in range(1, m.re.groups + 1) if m.group(i) is not None and len(m.group(i)) >= 8
    ]
    if not groups:
        # Some patterns take the separators around the key with it (``(?:\s|=|:)AKC…\s``).
        key = whole.strip(_SEPARATORS)
        lead = whole.index(key) if key else 0
        return whole[:lead] + marker + whole[lead + len(key) :]
    best = max(groups, key=lambda i: len(m.group(i)))
    start, end = m.start(best) - m.start(), m.end(best) - m.start()
    return whole[:start] + marker + whole[end:]


def _load_plugins() -> list[tuple[str, list[re.Pattern[str]]]]:
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    except ImportError:  # installed without it: _FALLBACK stands in
        return []
    plugins = []
    for secret_type, cls in sorted(get_mapping_from_secret_type_to_class().items()):
        if cls.__name__ in _SKIPPED_PLUGINS or not hasattr(cls, "denylist"):
            continue
        kind = re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
        plugin: Any = cls()  # a RegexBasedDetector: ``denylist`` is its compiled patterns
        patterns = [p for p in plugin.denylist if isinstance(p, re.Pattern)]
        if patterns:
            plugins.append((kind, patterns))
    return plugins


DETECTOR = _Detector()


# Unicode's format characters (category Cf, as of Unicode 14): what boot's rendering drops.
_FORMAT_CHARS = _Lazy(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f\u2028\u2029\u0085]"
)


def redact(text: str, *, detector: bool = True) -> str:
    """``text`` with every credential-shaped substring replaced by ``[REDACTED:kind]``.

    ``detector=False`` is for boot's fast path: our fallback table instead of the
    detector, so a session start never pays its import (what boot shows was masked with
    the detector when it was written; only Canon, the human's own text, was not).

    Invisible format characters (zero-width space, joiners, bidi marks) inside a key hide
    it from the patterns, and boot drops them when it renders: so when the text without
    them holds a credential, that text is the one masked and kept.
    """
    return _masked(text, detector)


def _masked(text: str, detector: bool) -> str:
    """:func:`redact` without keyword arguments, from the cache when the text is short."""
    if len(text) > _CACHED_LEN:
        return _redact_text(text, detector)
    key = (text, detector)
    if key in _clean:
        return text
    masked = _redact_text(text, detector)
    if masked == text:
        if len(_clean) >= _CLEAN_MAX:
            _clean.clear()  # one step, safe beside another thread; refills in a night
        _clean[key] = None
    return masked


def _redact_text(text: str, detector: bool) -> str:
    # Every format character is outside ASCII: most texts need no scan for them.
    if not text.isascii():
        if _FORMAT_CHARS.search(text):
            visible = _FORMAT_CHARS.sub("", text)
            masked = _redact(visible, detector)
            if masked != visible:
                return _encoded(masked, detector)
        text = _compat(text, detector)
    if "\n" in text:
        text = _rejoined(text, detector)
    return _encoded(_redact(text, detector), detector)


# A pure function of the text (the detector's plugins are loaded once a process), and a
# nightly masks the same strings again and again: each record's fields when it is
# appended, Today's files, the register's quotes (four in five calls of a generated life
# repeat one).  Short texts only: a cache of whole files would keep them in memory.  And
# only the texts that had nothing to mask: a long-lived process (the MCP server) would
# otherwise keep every secret it masked, unmasked, as the cache's key.
_CACHED_LEN = 4096
_CLEAN_MAX = 8192
_clean: dict[tuple[str, bool], None] = {}


# A run of key characters at the end of one line and the start of the next: a key a
# terminal or an editor wrapped.
_SPLIT_RE = re.compile(
    r"(?P<left>[A-Za-z0-9_+/=.-]{2,})[ \t]*\r?\n[ \t]*"
    r"(?=(?P<right>[A-Za-z0-9_+/=-]{4,})(?P<tail>\S*))"
)


# A plain word (``Finally``, ``then``, ``README``): random key material is mixed case with
# digits, and 8 random key characters make such a word about once in 500.
_WORD = _Lazy(r"[A-Z]?[a-z]+|[A-Z]{2,6}")


def _rejoined(text: str, detector: bool) -> str:
    """A key split by a newline is masked whole: when the two halves joined hold a key
    whose mask swallows the second half, and the second half is no key of its own, the
    joined, masked form replaces both lines' pieces.  Where the first half is a whole key
    already, a plain word on the next line stays a word (``…KEY`` then ``Finally``)."""

    def joined(m: re.Match[str]) -> str | None:
        left, right = m.group("left"), m.group("right")
        masked = _redact(left + right, detector)
        word = right + m.group("tail")
        if masked == left + right or right in masked or _redact(word, detector) != word:
            return None  # no key across the break, or two keys on two lines
        if _WORD.fullmatch(right) and _redact(left, detector) != left:
            return None  # a whole key, then a word on the next line
        return masked

    # The second half is a lookahead: it may be the first half of the next break's pair.
    out, done = [], 0
    for m in _SPLIT_RE.finditer(text):
        if m.start() < done:
            continue
        masked = joined(m)
        if masked is not None:
            out += [text[done : m.start()], masked]
            done = m.end("right")
    return "".join(out) + text[done:] if out else text


# Characters with a compatibility form: full-width Latin and digits (U+FF01–FF5E), the
# ideographic space, and the like.  NFKC maps them to ASCII.
_COMPAT = "[\uff01-\uff5e\u3000\u2000-\u200a\ufe50-\ufe6b]"
# From the word holding the first such character to the word holding the last, on one
# line: a full-width ``－－ｐａｓｓｗｏｒｄ ｓ３ｃｒｅｔ`` is a flag and its value.
_COMPAT_RUN = _Lazy(r"\S*" + _COMPAT + r"(?:[^\n]*" + _COMPAT + r")?\S*")


def _compat(text: str, detector: bool) -> str:
    """A key written in full-width characters (``ｓｋ－ａｎｔ－…``) reads as the key to a
    model: each run holding such characters is masked in its NFKC form when that form
    holds a credential, and left as written otherwise."""
    import unicodedata

    def one(m: re.Match[str]) -> str:
        run = m.group(0)
        folded = unicodedata.normalize("NFKC", run)
        masked = _redact(folded, detector)
        return masked if masked != folded else run

    return _COMPAT_RUN.sub(one, text)


# A run of base64 long enough to wrap a key: standard or URL-safe alphabet, padded or not.
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/_=-])")
# "openssh-key-v1\0" in base64: the body of an OpenSSH private key, with or without its
# BEGIN line.
_OPENSSH_BODY = "b3BlbnNzaC1rZXktdjE"


def _encoded(text: str, detector: bool) -> str:
    """Keys hidden in an encoding: an OpenSSH private-key body pasted without its header
    (its base64 lines masked), and a base64 run that decodes to text
    holding a credential (``Z2hwX…`` for ``ghp_…``)."""
    if _OPENSSH_BODY in text:
        # The body's first line, and each following line that is base64 only (a key's
        # lines are 70 characters; a sentence after it has spaces).
        text = re.sub(
            _OPENSSH_BODY + r"[A-Za-z0-9+/=]*(?:\r?\n[A-Za-z0-9+/=]{16,}(?![^\n]))*",
            MARK.format("private-key"),
            text,
        )
    if not _B64_RUN.search(text):
        return text
    return _B64_RUN.sub(lambda m: _decoded_secret(m.group(0), detector), text)


def _decoded_secret(run: str, detector: bool) -> str:
    import base64
    import binascii

    if _PLAIN_HEX.fullmatch(run) or not any(c.isdigit() for c in run):
        return run  # a hash, an id, a word: not base64 of anything
    alphabet = base64.urlsafe_b64decode if ("-" in run or "_" in run) else base64.b64decode
    try:
        raw = alphabet(run + "=" * (-len(run.rstrip("=")) % 4))
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return run
    if not decoded.isprintable() and not all(c.isprintable() or c in "\n\t\r" for c in decoded):
        return run
    masked = _redact(decoded, detector)
    return MARK.format("encoded-secret") if masked != decoded else run


class _AnyOf:
    """Whether any of some literals occurs in a text.  A process's first few texts get
    substring checks (boot masks a dozen or so; compiling the alternation of ~80 literals
    costs more than that), the rest one scan in C of the compiled alternation (a
    nightly's records carry hundreds of strings).  Both say the same."""

    FEW = 64

    def __init__(self, literals: tuple[str, ...]) -> None:
        self.literals = literals
        self.calls = 0
        self.alternation = _Lazy("|".join(re.escape(x) for x in literals))

    def found(self, text: str) -> bool:
        if self.calls < self.FEW:
            self.calls += 1
            return any(lit in text for lit in self.literals)
        return self.alternation.search(text) is not None


# The literals of every pass, as-is and those matched on the lower-cased text: most
# strings (ids, dates, ordinary prose) hold none.  When neither finds anything and no
# key-shaped run is there for the detector, no pass below would change the text.
_ALL_PASSES = (*_GAP_PASSES, *_FALLBACK_PASSES, *_PROSE_PASSES)
_AS_IS = _AnyOf(tuple(x for lits, f, _, _ in _ALL_PASSES if not f for x in lits))
_FOLDED = _AnyOf(tuple(x for lits, f, _, _ in _ALL_PASSES if f for x in lits))


def _redact(text: str, detector: bool) -> str:
    if (
        not _AS_IS.found(text)
        and not _FOLDED.found(text.lower())
        and not (detector and _may_hold_key(text))
    ):
        return text
    return _redact_all(text, detector)


def _redact_all(text: str, detector: bool) -> str:
    """Every pass in turn (``_redact`` without its one-scan shortcut)."""
    text = _apply(_GAP_PASSES, text)
    if not detector or not _may_hold_key(text):
        # The prefilter first: ordinary text never imports the detector.  The fallback
        # table costs a few substring checks, and still catches what is too short to
        # count as a key run (a PEM block with a stub body).
        text = _apply(_FALLBACK_PASSES, text)
    elif DETECTOR.available():
        text = DETECTOR.mask(text)
    else:
        text = _apply(_FALLBACK_PASSES, text)
    return _apply(_PROSE_PASSES, text)


def _apply(passes: tuple[_Pass, ...], text: str) -> str:
    lower = text.lower()
    for literals, folded, pattern, repl in passes:
        haystack = lower if folded else text
        if any(lit in haystack for lit in literals):
            text = pattern.sub(repl, text)
            lower = text.lower()
    return text


def redact_data(value: Any, *, detector: bool = True) -> Any:
    """Redact every string inside a JSON-like value (dict keys are names, kept as they are)."""
    return _redact_value(value, detector)


def _redact_value(value: Any, detector: bool) -> Any:
    # redact_data's walk without keyword arguments: an Evidence record's data (hypothesis
    # snapshots, lists of ids) holds dozens of strings, and every record is walked
    if isinstance(value, str):
        return _masked(value, detector)
    if isinstance(value, dict):
        return {k: _redact_value(v, detector) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_value(v, detector) for v in value]
    return value


def redact_fast(text: str) -> str:
    """``redact`` without the detector: boot's rendering, which must not pay its import."""
    return redact(text, detector=False)


def redact_fast_data(value: Any) -> Any:
    """``redact_data`` without the detector (see ``redact_fast``)."""
    return redact_data(value, detector=False)
