"""The ``opencode`` reflector: the user's own OpenCode, ``opencode run``, with no tools.

For users who have OpenCode and a provider set up there.  The prompt goes on stdin to::

    opencode run --format json --pure --dir SCRATCH

with an empty config home made for the call: ``XDG_CONFIG_HOME`` points at an empty
folder (no global ``opencode.json``, ``AGENTS.md``, agents, commands or plugins), and
``OPENCODE_CONFIG`` at a file that keeps only which model to ask — ``provider``,
``model``, ``small_model``, ``enabled_providers``, ``disabled_providers`` from the
user's own config — plus ``"permission": {"*": "deny"}`` (OpenCode then offers no tool
at all), no MCP servers, no instructions, the ``title`` agent disabled (one model call a
reflection, not a second one to name the session) and no snapshots.  ``--pure`` loads no
external plugin, ``OPENCODE_DISABLE_CLAUDE_CODE`` no ``~/.claude/CLAUDE.md``; the call
runs in an empty scratch folder, so no project config is found.  The login (``opencode
auth``) lives in the data folder, which is left as it is.

The answer is the text of its ``text`` events; an ``error`` event (an API error after
OpenCode's retries) means the backend never answered: :class:`ReflectorUnavailable`
named as OpenCode names it, and the job falls back to rules at once.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from evolving_agent.errortext import first_error_line
from evolving_agent.jsonout import json_lines
from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.command import NO_ANSWER, CliPresetReflector

PRESET_ARGS = ("run", "--format", "json", "--pure")
CARRIED = ("provider", "model", "small_model", "enabled_providers", "disabled_providers")
CONFIG_NAMES = ("opencode.json", "opencode.jsonc", "config.json")


def _jsonc(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        stripped = re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)
        return json.loads(re.sub(r",(\s*[}\]])", r"\1", stripped))


def user_configs(environ: dict[str, str] | None = None) -> list[Path]:
    """The user's own config files, lowest precedence first."""
    env = os.environ if environ is None else environ
    base = Path(env.get("XDG_CONFIG_HOME") or Path(env.get("HOME", "~")).expanduser() / ".config")
    found = [base / "opencode" / name for name in CONFIG_NAMES]
    if env.get("OPENCODE_CONFIG"):
        found.append(Path(env["OPENCODE_CONFIG"]))
    return found


def carried_config(environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Which model to ask, from the user's configs; no tool, MCP server or instruction."""
    out: dict[str, Any] = {}
    for path in user_configs(environ):
        try:
            data = _jsonc(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if isinstance(data, dict):
            out.update({k: data[k] for k in CARRIED if k in data})
    return {
        "$schema": "https://opencode.ai/config.json",
        **out,
        "permission": {"*": "deny"},
        "mcp": {},
        "instructions": [],
        "plugin": [],
        # One model call a reflection: no side call that names the session, no git
        # snapshot of the scratch folder (nothing there to undo).
        "agent": {"title": {"disable": True}},
        "snapshot": False,
        "share": "disabled",
        "autoupdate": False,
    }


class OpenCodeReflector(CliPresetReflector):
    name = "opencode"
    program = "opencode"
    preset_args = PRESET_ARGS

    def call_env(self, scratch: Path) -> dict[str, str]:
        config_home = scratch / "config-home"
        config_home.mkdir()
        config = scratch / "opencode.json"
        config.write_text(json.dumps(carried_config()), encoding="utf-8")
        # OpenCode takes its folder from $PWD: without these it would read the project
        # (opencode.json, AGENTS.md) of the folder the job was started from.
        self.argv = [*self.preset_argv(), "--dir", str(scratch)]
        return {
            "PWD": str(scratch),
            "XDG_CONFIG_HOME": str(config_home),
            "OPENCODE_CONFIG": str(config),
            "OPENCODE_CONFIG_DIR": "",
            "OPENCODE_CONFIG_CONTENT": "",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
        }

    def answer_of(self, stdout: str) -> str:
        return answer_of(stdout)


def answer_of(stdout: str) -> str:
    """The answer from ``opencode run --format json`` events (or why there is none)."""
    texts: list[str] = []
    for event in json_lines(stdout):
        if event.get("type") == "error":
            raise ReflectorUnavailable(f"opencode: {error_text(event)}")
        part = event.get("part")
        if event.get("type") == "text" and isinstance(part, dict):
            texts.append(str(part.get("text") or ""))
    if not texts:
        raise ReflectorUnavailable(f"opencode printed no text {NO_ANSWER}")
    return texts[-1]


def error_text(event: dict[str, Any]) -> str:
    """``APIError (HTTP 429): quota exceeded`` from an ``error`` event."""
    error = obj(event.get("error"))
    data = obj(error.get("data"))
    status = data.get("statusCode")
    shown = f" (HTTP {status})" if isinstance(status, int) else ""
    message = first_error_line(str(data.get("message") or error.get("message") or "no message"))
    return f"{error.get('name') or 'error'}{shown}: {message}"


def obj(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
