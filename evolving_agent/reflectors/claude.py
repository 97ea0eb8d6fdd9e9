"""The ``claude`` reflector: the user's own Claude Code, in print mode, with no tools.

For users who have Claude Code and no API key for anything else.  The prompt goes on
stdin to::

    claude -p --output-format json --tools "" --strict-mcp-config --no-session-persistence
              --setting-sources ""

``--tools ""`` leaves the model no built-in tool at all (no Edit, Write, Bash), and
``--strict-mcp-config`` with no ``--mcp-config`` no MCP server either — in particular
not this root's own memory server, through which a reflector could append as
``session`` while the job holds write authority.  ``--setting-sources ""`` loads none
of the user's, project's or local settings: no hooks (the SessionStart hook that
``integrations show claude`` installs would put the boot context, Live Bus and all,
into the prompt outside its untrusted fence), no permissions, no settings ``env``; the
login is not a setting and still works.  It runs in an empty scratch folder, so no
project's CLAUDE.md is found.

The answer is the result object's ``result`` text; ``is_error`` (an API error, a 429
after Claude's own retries, "Not logged in") means the backend never answered:
:class:`ReflectorUnavailable` named as Claude names it (``claude: Not logged in ·
Please run /login``), and the job falls back to rules at once.  Claude's own retries
are capped at 2 (``CLAUDE_CODE_MAX_RETRIES``, unless the environment sets it), so a
persistent 429 is named as a 429 within seconds, not as a timeout after ten growing
waits.

It runs with the command reflector's containment (own process group, scratch
directory, Canon/schedule/prompt snapshot restored and the job failed if anything
changed) and the same meaning checks, retry and ``rules`` fallback.  ``--reflector-cmd``
(or ``reflector.command``) names the program and any extra flags, e.g.
``"claude --model sonnet"``; the preset's flags follow them.
"""

from __future__ import annotations

import os
from pathlib import Path

from evolving_agent.errortext import first_error_line
from evolving_agent.jsonout import json_object
from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.command import NO_ANSWER, CliPresetReflector

PRESET_ARGS = (
    "-p",
    "--output-format",
    "json",
    "--tools",
    "",
    "--strict-mcp-config",
    "--no-session-persistence",
    "--setting-sources",
    "",
)
MAX_RETRIES_ENV = "CLAUDE_CODE_MAX_RETRIES"
DEFAULT_MAX_RETRIES = "2"


class ClaudeReflector(CliPresetReflector):
    name = "claude"
    program = "claude"
    preset_args = PRESET_ARGS

    def answer_of(self, stdout: str) -> str:
        return answer_of(stdout)

    def call_env(self, scratch: Path) -> dict[str, str]:
        if MAX_RETRIES_ENV in os.environ:
            return {}
        return {MAX_RETRIES_ENV: DEFAULT_MAX_RETRIES}


def answer_of(stdout: str) -> str:
    """The model's text from Claude's JSON result object (or why there is none)."""
    data = json_object(stdout)
    if data is None:
        raise ReflectorUnavailable(f"claude printed no JSON result {NO_ANSWER}")
    if data.get("is_error"):
        status = data.get("api_error_status")
        text = first_error_line(str(data.get("result") or data.get("subtype") or "is_error"))
        shown = f" (HTTP {status})" if status and str(status) not in text else ""
        raise ReflectorUnavailable(f"claude: {text}{shown}")
    return str(data.get("result") or "")
