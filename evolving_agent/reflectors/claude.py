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
import shlex
from collections.abc import Callable
from typing import Any

from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.base import Reflector, ReflectorUnavailable
from evolving_agent.reflectors.command import CommandReflector
from evolving_agent.reflectors.settings import ReflectorSettings

PRESET_ARGS = (
    "-p",
    "--output-format",
    "json",
    "--tools",
    "",
    "--strict-mcp-config",
    "--no-session-persistence",
)


class ClaudeReflector(CommandReflector):
    name = "claude"

    @classmethod
    def from_settings(
        cls, settings: ReflectorSettings, *, command: str | None, prompts: Callable[[str], str]
    ) -> Reflector:
        """``--reflector-cmd`` / ``reflector.command`` name the program and extra flags."""
        return cls(command or settings.command, prompts=prompts, timeout=settings.timeout)

    def __init__(
        self,
        command: str | None = None,
        *,
        prompts: Callable[[str], str],
        timeout: float = 120,
        root: MemoryRoot | None = None,
    ) -> None:
        program = command or "claude"
        super().__init__(program, prompts=prompts, timeout=timeout, root=root)
        self.argv = [*shlex.split(program), *PRESET_ARGS]

    def complete(self, prompt: str) -> str:
        return answer_of(super().complete(prompt))


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
