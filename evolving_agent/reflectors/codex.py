"""The ``codex`` reflector: the user's own Codex CLI, ``codex exec`` in a read-only sandbox.

For users who have Codex and no API key for anything else.  The prompt goes on stdin
to::

    codex exec --json --sandbox read-only --skip-git-repo-check --ephemeral
               [-c mcp_servers.NAME.enabled=false ...] -

The read-only sandbox lets the model's shell commands write nothing; every MCP server
of the user's ``config.toml`` is switched off for the call (MCP tools run outside the
sandbox, and this root's own memory server among them could append as ``session`` while
the job holds write authority).  The answer is the last ``agent_message``;
``turn.failed`` / ``error`` events (a 429 after Codex's retries) mean the backend never
answered: :class:`ReflectorUnavailable`, the job falls back to rules at once.

It runs with the command reflector's containment and the same meaning checks, retry and
``rules`` fallback.  ``--reflector-cmd`` (or ``reflector.command``) names the program and
extra flags, e.g. ``"codex -m gpt-5.1"``; the preset's flags follow them.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.command import CliPresetReflector

PRESET_ARGS = ("exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral")


def mcp_server_names(environ: dict[str, str] | None = None) -> list[str]:
    """The MCP servers the user's Codex config declares (to switch them off)."""
    env = os.environ if environ is None else environ
    home = Path(env.get("CODEX_HOME") or Path(env.get("HOME", "~")).expanduser() / ".codex")
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    servers = config.get("mcp_servers")
    return sorted(servers) if isinstance(servers, dict) else []


class CodexReflector(CliPresetReflector):
    name = "codex"
    program = "codex"

    def preset_argv(self) -> list[str]:
        # Read at every call: the user's config may have gained a server since.
        off = [
            part
            for name in mcp_server_names()
            for part in ("-c", f"mcp_servers.{_key(name)}.enabled=false")
        ]
        return [*self.base_argv, *PRESET_ARGS, *off, "-"]

    def answer_of(self, stdout: str) -> str:
        return answer_of(stdout)


def _key(name: str) -> str:
    """A TOML dotted-key part: bare when it can be (codex takes a quoted part literally)."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def answer_of(stdout: str) -> str:
    """The last agent message of ``codex exec --json`` (or why there is none)."""
    message: str | None = None
    failed: str | None = None
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        raw = event.get("item")
        item: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if kind == "item.completed" and item.get("type") == "agent_message":
            message = str(item.get("text") or "")
        elif kind == "turn.failed":
            error = event.get("error")
            failed = str(error.get("message") if isinstance(error, dict) else error)
        elif kind == "error" and failed is None:
            failed = str(event.get("message") or "")
    if failed is not None:
        raise ReflectorUnavailable(f"codex turn failed: {failed[:300]}")
    if message is None:
        raise ReflectorUnavailable("codex printed no answer (no agent_message event)")
    return message
