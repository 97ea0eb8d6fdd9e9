"""The ``claude`` reflector: the user's own Claude Code, in print mode, with no tools.

For users who have Claude Code and no API key for anything else.  The prompt goes on
stdin to::

    claude -p --output-format json --tools "" --strict-mcp-config --no-session-persistence

``--tools ""`` leaves the model no built-in tool at all (no Edit, Write, Bash), and
``--strict-mcp-config`` with no ``--mcp-config`` no MCP server either — in particular
not this root's own memory server, through which a reflector could append as
``session`` while the job holds write authority.  The answer is the result object's
``result`` text; ``is_error`` (an API error, a 429 after Claude's own retries) means the
backend never answered: :class:`ReflectorUnavailable`, the job falls back to rules at
once and says why.

It runs with the command reflector's containment (own process group, scratch
directory, Canon/schedule/prompt snapshot restored and the job failed if anything
changed) and the same meaning checks, retry and ``rules`` fallback.  ``--reflector-cmd``
(or ``reflector.command``) names the program and any extra flags, e.g.
``"claude --model sonnet"``; the preset's flags follow them.
"""

from __future__ import annotations

import json
from typing import Any

from evolving_agent.reflectors.base import ReflectorUnavailable
from evolving_agent.reflectors.command import CliPresetReflector

PRESET_ARGS = (
    "-p",
    "--output-format",
    "json",
    "--tools",
    "",
    "--strict-mcp-config",
    "--no-session-persistence",
)


class ClaudeReflector(CliPresetReflector):
    name = "claude"
    program = "claude"

    def preset_argv(self) -> list[str]:
        return [*self.base_argv, *PRESET_ARGS]

    def answer_of(self, stdout: str) -> str:
        return answer_of(stdout)


def answer_of(stdout: str) -> str:
    """The model's text from Claude's JSON result object (or why there is none)."""
    data: Any = None
    for chunk in [stdout.strip(), *reversed(stdout.strip().splitlines())]:
        try:
            data = json.loads(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            break
    if not isinstance(data, dict):
        raise ReflectorUnavailable("claude printed no JSON result")
    if data.get("is_error"):
        status = data.get("api_error_status")
        shown = f" (HTTP {status})" if status else ""
        raise ReflectorUnavailable(f"claude reported an error{shown}: {data.get('result')}")
    return str(data.get("result") or "")
