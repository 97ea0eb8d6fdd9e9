"""The ``codex`` reflector: the user's own Codex CLI, ``codex exec`` in a read-only sandbox.

For users who have Codex and no API key for anything else.  The prompt goes on stdin
to::

    codex exec --json --sandbox read-only --skip-git-repo-check --ephemeral -

with ``CODEX_HOME`` set to an empty config home made for the call: it holds only the
user's login (``auth.json``) and the few settings that say which model to ask
(``model``, ``model_provider`` and its ``model_providers`` table, the reasoning
effort), nothing else of their ``config.toml`` — no MCP server (MCP tools run outside
the sandbox, and this root's own memory server among them could append as ``session``
while the job holds write authority), no hooks, no ``AGENTS.md`` or rules, no skills.
The read-only sandbox lets the model's shell commands write nothing.  The answer is the
last ``agent_message``; ``turn.failed`` / ``error`` events (a 429 after Codex's retries)
mean the backend never answered: :class:`ReflectorUnavailable` with Codex's own words,
read before the exit status, and the job falls back to rules at once.

It runs with the command reflector's containment and the same meaning checks, retry and
``rules`` fallback.  ``--reflector-cmd`` (or ``reflector.command``) names the program and
extra flags, e.g. ``"codex -m gpt-5.1"``; the preset's flags follow them.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

from evolving_agent.errortext import first_error_line
from evolving_agent.jsonout import json_lines
from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.command import NO_ANSWER, CliPresetReflector
from evolving_agent.tomltext import toml_value

PRESET_ARGS = ("exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral")


# The settings of the user's config.toml that say which model to ask; nothing else is kept.
CARRIED = ("model", "model_provider", "model_providers", "model_reasoning_effort")


def codex_home(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("CODEX_HOME") or Path(env.get("HOME", "~")).expanduser() / ".codex")


def carried_config(home: Path) -> str:
    """The model settings of ``home/config.toml`` as TOML (empty when there are none)."""
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return ""
    lines = [f"{key} = {toml_value(config[key])}" for key in CARRIED if key in config]
    return "\n".join(lines) + ("\n" if lines else "")


class CodexReflector(CliPresetReflector):
    name = "codex"
    program = "codex"
    preset_args = (*PRESET_ARGS, "-")  # the prompt on stdin

    def call_env(self, scratch: Path) -> dict[str, str]:
        """An empty config home with only the login and the model settings."""
        user = codex_home()
        home = scratch / "codex-home"
        home.mkdir()
        auth = user / "auth.json"
        if auth.is_file():
            shutil.copy2(auth, home / "auth.json")
        (home / "config.toml").write_text(carried_config(user), encoding="utf-8")
        return {"CODEX_HOME": str(home)}

    def answer_of(self, stdout: str) -> str:
        return answer_of(stdout)


def answer_of(stdout: str) -> str:
    """The last agent message of ``codex exec --json`` (or why there is none)."""
    message: str | None = None
    failed: str | None = None
    for event in json_lines(stdout):
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
        raise ReflectorUnavailable(f"codex: {first_error_line(failed) or 'turn failed'}")
    if message is None:
        raise ReflectorUnavailable(f"codex printed no agent_message {NO_ANSWER}")
    return message
