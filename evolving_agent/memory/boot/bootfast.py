"""The boot fast path: today's boot context with the standard library only.

Boot runs on every session start (the Claude Code hook), and the full path imports
click, pydantic and ruamel before it reads a byte.  This module re-derives the boot
context from the very files the full boot reads, with the same checks, and renders it
with the same code (:mod:`bootview`), so its output is the full boot's byte for byte.
It gives up — and the caller runs the full boot — whenever anything is unusual: an
option it does not know, any warning the full boot would print (a Canon snapshot
problem, a skipped Live Bus file, a bad Today file), a carry or Live Bus entry outside
the plain shapes it checks by hand, or an ``identity.yaml`` outside a small YAML subset.

Nothing is served from a stored copy.  The one thing kept between runs is an
*attestation* in ``.ea/boot-cache.json``: the sha256 of the last ``identity.yaml`` the
full boot parsed (with ruamel and pydantic), and what it parsed to.  The fast path
parses identity.yaml with its own small parser and serves only when its result equals
the attested one for the same bytes.  A forged cache file therefore cannot add a word:
whatever it says, the text served is derived from Canon files that passed the Canon
snapshot check; at worst a forged or stale cache sends boot down the full path.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import sys

from evolving_agent.memory.base.fastargv import plain_call, utf8
from evolving_agent.memory.base.fasthash import sha256
from evolving_agent.memory.base.live_listing import list_live, live_key_ok
from evolving_agent.memory.boot.bootview import (
    BIAS_FILE,
    CARRY_FILE,
    DEFAULT_MAX_CHARS,
    EMPTY_BIAS,
    EMPTY_CARRY,
    LIVE_ENTRIES,
    LIVE_ENTRY_CHARS,
    MAX_CHARS_ENV,
    MIN_MAX_CHARS,
    _clip,
    _one_line,
    claude_hook_json,
    context_json,
    iso_day,
    printable_but_layout,
    read_today,
    render_markdown,
    stale_date,
    updated_order,
    withhold_instructions,
)
from evolving_agent.paths import MemoryRoot

# What this path imports is the floor of every session start: no typing, dataclasses,
# datetime or hashlib at run time (a test in tests/memory/boot/test_bootfast.py keeps it so).
# mypy reads TYPE_CHECKING as typing's.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CACHE_NAME = "boot-cache.json"
SCHEMA_VERSION = 1
FORMATS = ("markdown", "json", "claude-hook")

# Copies of names whose modules need pydantic (canon.py, today.py, live.py); a test keeps
# them equal to the originals.
IDENTITY_FILE = "identity.yaml"
CARRY_TYPES = (
    "vow",
    "experiment",
    "watchpoint",
    "refusal",
    "rule-for-tomorrow",
    "question",
    "release",
    "repair",
    "practice",
)


LIVE_FILE_BYTES = 64 * 1024
IDENTITY_LISTS = ("values", "self_understanding", "habits")


class _Fallback(Exception):
    """Something the fast path does not handle: run the full boot."""


# -- the attestation (written by the full boot) ----------------------------------------------


def cache_file(root: MemoryRoot) -> str:
    return os.path.join(root.path, ".ea", CACHE_NAME)


def attestation(data: bytes, identity: dict[str, Any]) -> bytes:
    """The cache file's bytes attesting that ``data`` (identity.yaml) parses to ``identity``."""
    state = {
        "schema_version": SCHEMA_VERSION,
        "identity": {"sha256": sha256(data).hexdigest(), "value": identity},
    }
    return json.dumps(state, indent=2, sort_keys=True, ensure_ascii=True).encode("ascii") + b"\n"


def _attested(root: MemoryRoot, data: bytes) -> Any:
    """What the full boot parsed ``data`` to, or None when the cache does not say."""
    try:
        fd = os.open(cache_file(root), os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            state = json.loads(fh.read(1024 * 1024))
        entry = state["identity"]
        if state["schema_version"] == SCHEMA_VERSION and entry["sha256"] == (
            sha256(data).hexdigest()
        ):
            return entry["value"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


# -- the command line ------------------------------------------------------------------------


class Request:
    __slots__ = ("root", "fmt", "max_chars", "write_file")

    def __init__(
        self,
        root: str | None = None,
        fmt: str = "markdown",
        max_chars: int = DEFAULT_MAX_CHARS,
        write_file: str | None = None,
    ) -> None:
        self.root = root
        self.fmt = fmt
        self.max_chars = max_chars
        self.write_file = write_file

    def __eq__(self, other: object) -> bool:
        if type(other) is not Request:
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass it was

    def _fields(self) -> tuple[str | None, str, int, str | None]:
        return (self.root, self.fmt, self.max_chars, self.write_file)

    def __repr__(self) -> str:
        root, fmt, chars, path = self._fields()
        return f"Request(root={root!r}, fmt={fmt!r}, max_chars={chars!r}, write_file={path!r})"


_VALUE_OPTIONS = ("--root", "--format", "--max-chars", "--write-file")
RAISE_ENV = "EVOLVING_AGENT_RAISE"


def parse_argv(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> Request | None:
    """``[--root R] boot [--root R] [--format F] [--max-chars N] [--write-file P]``.

    None for anything else (the full path parses it), and while debugging with
    ``$EVOLVING_AGENT_RAISE``.
    """
    if environ.get(RAISE_ENV):
        return None
    call = plain_call(argv, "boot", _VALUE_OPTIONS, arguments=0)
    if call is None:
        return None
    values, _ = call
    fmt = values.get("--format", "markdown")
    chars = values.get("--max-chars", environ.get(MAX_CHARS_ENV))  # the option wins
    if fmt not in FORMATS:
        return None
    req = Request(
        root=values.get("--root"),
        fmt=fmt,
        max_chars=DEFAULT_MAX_CHARS if chars is None else _max_chars(chars),
        write_file=values.get("--write-file"),
    )
    return req if req.max_chars >= MIN_MAX_CHARS else None


def _max_chars(value: str) -> int:
    # Plain digits only ([0-9]{1,9}); anything click would read differently goes the full path.
    return int(value) if 0 < len(value) <= 9 and value.isascii() and value.isdigit() else -1


# -- serving ---------------------------------------------------------------------------------


def try_boot(
    argv: list[str], *, write_file: Callable[[MemoryRoot, str, Any], None] | None = None
) -> int | None:
    """Serve ``evolving-agent boot`` from the fast path and return its exit code; None
    when the full path must run.  Writes nothing unless it serves, so the caller can
    fall back after None.
    """
    req = parse_argv(argv, os.environ)
    if req is None:
        return None
    try:
        if codecs.lookup(sys.stdout.encoding).name != "utf-8":
            return None
        root = MemoryRoot.resolve(req.root)  # a vanished cwd raises: the full path words it
        view = derive(root, req.max_chars)
        out = render(view, req.fmt)
    except Exception:  # noqa: BLE001 - anything unexpected: the full path reports it properly
        return None
    hook = req.fmt == "claude-hook"
    if req.write_file is not None and not hook:
        try:
            write_file(root, req.write_file, view)  # type: ignore[misc]  # checked above
        except Exception:  # noqa: BLE001 - the full path tries again and reports the error
            return None
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:
        # A reader closed stdout early (`| head`): exit 1 quietly, as the full path does.
        os._exit(1)
    if req.write_file is not None and hook:
        # As the full path: the hook's stdout is out; a failed copy is only a warning.
        from evolving_agent.errors import EvolvingAgentError

        try:
            write_file(root, req.write_file, view)  # type: ignore[misc]  # checked above
        except (EvolvingAgentError, OSError) as exc:
            sys.stderr.write(f"warning: boot file not written: {exc}\n")
        except Exception as exc:  # noqa: BLE001 - the CLI's last-resort wording
            sys.stderr.write(
                f"error: unexpected {type(exc).__name__}: {exc} "
                f"(set {RAISE_ENV}=1 to see the traceback)\n"
            )
            return 1
    return 0


def fast_output(root: MemoryRoot, fmt: str, max_chars: int) -> str | None:
    """stdout of ``boot --format fmt`` exactly, or None when the full boot must run."""
    try:
        return render(derive(root, max_chars), fmt)
    except Exception:  # noqa: BLE001 - anything unexpected: the full path reports it properly
        return None


class _View:
    """What :func:`derive` read, as :class:`bootview.BootView` reads it."""

    __slots__ = ("bias", "carry", "stale", "canon", "live", "live_more", "max_chars", "warnings")
    notices: list[str] | None = None  # the fast path serves only roots with no warnings

    def __init__(
        self,
        *,
        bias: str,
        carry: dict[str, Any],
        stale: str | None,
        canon: dict[str, Any],
        live: dict[str, str],
        live_more: int,
        max_chars: int,
    ) -> None:
        self.bias = bias
        self.carry = carry
        self.stale = stale
        self.canon = canon
        self.live = live
        self.live_more = live_more
        self.max_chars = max_chars
        self.warnings: list[str] = []

    def markdown(self) -> str:
        return render_markdown(self, self.max_chars)


def neutralise(text: str) -> str:
    """``textsafe.neutralise(text)``, as the CLI's ``echo`` prints; without compiling its
    pattern when nothing would change: every character it shows is one ``str.isprintable``
    refuses (a test checks all of Unicode), and it keeps tabs and newlines."""
    if printable_but_layout(text):
        return text
    from evolving_agent.textsafe import neutralise as shown

    return shown(text)


def render(view: _View, fmt: str) -> str:
    """stdout of ``boot --format fmt``, exactly: neutralised as the CLI's ``echo`` prints
    (a format character in Canon reaches ``--format json`` as ``\\u200b``)."""
    if fmt == "json":
        return neutralise(context_json(view)) + "\n"
    markdown = view.markdown()
    return (
        neutralise(claude_hook_json(markdown)) + "\n"
        if fmt == "claude-hook"
        else neutralise(markdown)
    )


def _signing_on(root: MemoryRoot) -> bool:
    """The root's signing marker, or this user's pinned record (memory/canon/signing.py)."""
    if os.path.lexists(os.path.join(root.path, ".ea", "signing.json")):
        return True
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    name = sha256(str(root.real).encode()).hexdigest()[:16] + ".json"
    return os.path.lexists(os.path.join(base, "evolving-agent", "signing", name))


def derive(root: MemoryRoot, max_chars: int) -> _View:
    """The boot context the full boot would build, when it would build it without warnings."""
    from evolving_agent.memory.base.redact import redact_fast as redact
    from evolving_agent.memory.base.redact import redact_fast_data as redact_data
    from evolving_agent.memory.canon.canon_snapshot import load_canon

    # require_root, without its errors (the full path words them).  The session's read
    # scope (canon, today, live) is fixed in code (policy.READ_SCOPES), not configurable.
    if not os.path.isdir(root.path) or not root.exists():
        raise _Fallback("no memory root")
    if _signing_on(root):
        raise _Fallback("signing on: the full boot checks Canon's commit signature")
    canon = load_canon(root)  # InvalidInput: the full path reports it
    if canon.problems:
        raise _Fallback("Canon snapshot problems")
    data = canon.files.get(IDENTITY_FILE)
    identity: dict[str, Any] = {}
    if data is not None:
        identity = parse_identity(data)
        if _attested(root, data) != identity:
            raise _Fallback("identity.yaml not attested")
    notes = {}
    for name, raw in sorted(canon.files.items()):
        if name.endswith(".md") and "/" not in name and not name.startswith("."):
            notes[name] = redact(raw.decode("utf-8"))  # UnicodeDecodeError: a warning
    warnings: list[str] = []
    bias_text = read_today(root, BIAS_FILE, warnings)
    bias = withhold_instructions(redact(bias_text).strip()) if bias_text is not None else ""
    carry = _carry(root, warnings, redact)
    carry["text"] = withhold_instructions(str(carry.get("text") or ""))
    entries, total = _live(root)
    newest = sorted(entries, key=lambda e: updated_order(e["updated"], e["key"]), reverse=True)
    live = {
        e["key"]: _clip(_one_line(redact(e["text"])), LIVE_ENTRY_CHARS)
        for e in newest[:LIVE_ENTRIES]
    }
    stale = stale_date(root, carry.get("date"), warnings)
    if warnings:
        raise _Fallback("warnings")
    return _View(
        bias=bias or EMPTY_BIAS,
        carry=carry,
        stale=stale,
        canon={"identity": redact_data(identity), "notes": notes},
        live=live,
        live_more=max(0, total - len(live)),
        max_chars=max_chars,
    )


def _str(value: Any, *, empty: bool = True) -> str:
    if type(value) is not str or (not empty and not value) or not utf8(value):
        raise _Fallback("not a plain string")
    return value


def _carry(root: MemoryRoot, warnings: list[str], redact: Any) -> dict[str, Any]:
    """today/carry.json as ``Carry.model_dump(mode="json")``, for the plain shapes only."""
    text = read_today(root, CARRY_FILE, warnings)
    if text is None:
        return {"type": None, "text": EMPTY_CARRY, "hypothesis": None}
    obj = json.loads(text)
    if type(obj) is not dict or not set(obj) <= {
        "schema_version",
        "type",
        "text",
        "hypothesis",
        "date",
    }:
        raise _Fallback("carry shape")
    version = obj.get("schema_version", 1)
    if type(version) is not int or version > 1 or obj.get("type") not in CARRY_TYPES:
        raise _Fallback("carry shape")
    text = _str(obj.get("text"), empty=False)
    hypothesis = obj.get("hypothesis")
    if hypothesis is not None:
        _str(hypothesis)
    day = obj.get("date")
    if day is not None:
        if not iso_day(_str(day)):
            raise _Fallback("carry date")
    return {"type": obj["type"], "text": redact(text), "hypothesis": hypothesis, "date": day}


def _live(root: MemoryRoot) -> tuple[list[dict[str, str]], int]:
    """The newest live/*.json entries as the full boot reads them (and how many there
    are), when each is a plain entry and the Live Bus is within its limit."""
    base = root.live
    try:
        if not stat.S_ISDIR(os.lstat(base).st_mode):
            raise _Fallback("live/ not a directory")
    except FileNotFoundError:
        return [], 0
    listing = list_live(base)
    if listing.over_limit:
        raise _Fallback("live/ over its key limit")  # the full boot words the warning
    out = []
    for name in listing.newest[:LIVE_ENTRIES]:  # any invalid one: the full boot reports it
        p = base / name
        st = os.lstat(p)
        if not stat.S_ISREG(st.st_mode) or st.st_size > LIVE_FILE_BYTES:
            raise _Fallback("live file")
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            obj = json.loads(fh.read().decode("utf-8"))
        if type(obj) is not dict or set(obj) != {"key", "text", "actor", "updated"}:
            raise _Fallback("live entry shape")
        entry = {k: _str(obj[k]) for k in ("key", "text", "actor", "updated")}
        key = entry["key"]
        if not live_key_ok(key) or key != p.stem:
            raise _Fallback("live key")
        out.append(entry)
    return out, listing.total


# -- identity.yaml, a small YAML subset ------------------------------------------------------

_TOP = re.compile(r"([a-z_]+):(?: (.*))?")
_ITEM = re.compile(r"( *)-(?: (.*))?")
_SCALAR_KEYS = ("name", "description")
_PLAIN_WORDS = {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}


def parse_identity(data: bytes) -> dict[str, Any]:
    """``Identity.model_dump()`` (without schema_version) for the YAML the template uses.

    Top-level ``key: scalar`` lines, ``key:`` followed by ``- item`` lines, ``key: []``,
    comments and blank lines; plain, 'single' and "double" (no escapes) scalars on one
    line.  Anything else — block scalars, flow collections, anchors, tags, multi-line
    scalars, a plain scalar YAML would read as a number, bool, null or date — raises
    :class:`_Fallback`.
    """
    text = data.decode("utf-8")
    if any(ord(c) < 32 and c != "\n" for c in text) or "\ufeff" in text or "\x7f" in text:
        raise _Fallback("control characters")
    found: dict[str, Any] = {}
    current: list[str] | None = None
    indent: int | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        item = _ITEM.fullmatch(line)
        if item is not None:
            if current is None or item.group(2) is None:
                raise _Fallback("list item")
            if indent is None:
                indent = len(item.group(1))
            elif indent != len(item.group(1)):
                raise _Fallback("list indent")
            current.append(_scalar(item.group(2)))
            continue
        top = _TOP.fullmatch(line)
        if top is None or top.group(1) in found:
            raise _Fallback("line")
        key, value = top.group(1), (top.group(2) or "").strip()
        current, indent = None, None
        if key == "schema_version":
            if value not in ("0", "1"):
                raise _Fallback("schema_version")
            found[key] = int(value)
        elif key in _SCALAR_KEYS:
            found[key] = _scalar(value)
        elif key in IDENTITY_LISTS:
            if value.startswith("#") or not value:
                current = found[key] = []
            elif value == "[]":
                found[key] = []
            else:
                raise _Fallback("list value")
        else:
            raise _Fallback("unknown key")
    if not found:  # an empty document is null in YAML, which the model refuses
        raise _Fallback("empty identity")
    # `key:` with no items is null in YAML, which the model refuses.
    if any(key in found and found[key] == [] and _bare(text, key) for key in IDENTITY_LISTS):
        raise _Fallback("empty list")
    return {
        "name": found.get("name", "Assistant"),
        "description": found.get("description", ""),
        **{key: found.get(key, []) for key in IDENTITY_LISTS},
    }


def _bare(text: str, key: str) -> bool:
    """``key:`` stands alone (no ``[]``), so an empty list there is YAML null."""
    return re.search(rf"(?m)^{key}:[ ]*(#.*)?$", text) is not None


def _scalar(value: str) -> str:
    if not value:
        raise _Fallback("empty scalar")
    first = value[0]
    if first == "'":
        end = 1
        out = []
        while True:
            nxt = value.find("'", end)
            if nxt < 0:
                raise _Fallback("open quote")
            out.append(value[end:nxt])
            if value[nxt + 1 : nxt + 2] == "'":
                out.append("'")
                end = nxt + 2
                continue
            rest = value[nxt + 1 :]
            break
        result = "".join(out)
    elif first == '"':
        nxt = value.find('"', 1)
        if nxt < 0 or "\\" in value[:nxt]:
            raise _Fallback("double quote")
        result, rest = value[1:nxt], value[nxt + 1 :]
    else:
        plain = value.split(" #", 1)[0].rstrip()
        if (
            not first.isalpha()
            or plain.lower() in _PLAIN_WORDS
            or ": " in plain
            or plain.endswith(":")
            or not plain
        ):
            raise _Fallback("plain scalar")
        return plain
    if rest.strip() and not rest.lstrip().startswith("#") or (rest and not rest[0].isspace()):
        raise _Fallback("after quote")
    if rest.strip().startswith("#") and not rest.startswith(" "):
        raise _Fallback("comment")
    return result
