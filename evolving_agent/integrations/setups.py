"""The tested set-ups for Claude Code and Codex, with the memory root filled in.

``evolving-agent integrations show claude|codex`` prints these; docs/integrations.md
shows the same text for an example root, and the integration tests run each one, as
printed, against the real CLI (tests/integrations/test_real_clients.py).  So a set-up
changes here, once, and the docs and tests follow.

What the real clients taught us, and each set-up encodes:

* **The root goes in the arguments** (``evolving-agent --root R mcp``).  Codex starts MCP
  servers with a fixed environment, so ``EVOLVING_AGENT_ROOT`` never reaches them; and
  ``claude mcp add -e`` takes a list that swallows the server name after it.
* **Codex**: ``required = true`` makes a server that cannot start fail ``codex exec``
  loudly instead of running a session without memory; ``default_tools_approval_mode =
  "approve"`` lets ``codex exec`` (approval policy "never") call the tools.
* **The program is an absolute path** (:func:`program_argv`): a client starts the hook
  and the server from its own shell, whose PATH may lack the venv (``claude mcp list``
  said "Failed to connect — ENOENT" for a bare ``evolving-agent``).
* **Settings files are merged into, never replaced**: the user's own hooks, servers and
  permissions live there too (:func:`render` says so for every settings file).
* **Claude Code**: in ``claude -p`` an MCP call is denied unless ``mcp__evolving-agent``
  is allowed (``permissions.allow`` or ``--allowedTools``); a project's ``.mcp.json``
  server is used only once enabled (``enabledMcpjsonServers``).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from evolving_agent.errors import UsageError
from evolving_agent.process import own_command
from evolving_agent.tomltext import toml_string

CLIENTS = ("claude", "codex", "gemini", "opencode")
SERVER = "evolving-agent"
# The Claude Code permission rule that allows every tool of our server.
CLAUDE_ALLOW = f"mcp__{SERVER}"
HOOK_MATCHER = "startup|resume|clear|compact"

Lang = Literal["bash", "json", "toml", "markdown"]
# What a client is told to start: one path, or a command and its first arguments.
Program = str | Sequence[str] | None

# Every client here has a shell tool, and the MCP tools acting as `session` do not bind
# what it runs in that shell (issue 31): the set-up says so, and what closes the gap.
SHELL_ACCESS = (
    "A session with a shell tool can still run evolving-agent itself as any actor, "
    "e.g. `write --as human` or `review approve --yes`, and pass for you: "
    '"human" is a claim in a root shared with your OS user.',
    "What stops it: `evolving-agent signing enable --key` with a key the session cannot "
    "use (ssh-agent with confirmation, a hardware key), so its human writes are refused "
    "or `verify` exits 5; or the OS-user deployment (`deploy os-users`), where the "
    "assistant's user cannot write Canon at all (docs/authority.md).",
)


@dataclass(frozen=True)
class Setup:
    """One thing to paste: where it goes, why, and the text itself."""

    key: str  # stable id, e.g. "claude-settings" (tests and docs refer to it)
    title: str
    where: str  # the file it goes in, or "shell"
    lang: Lang
    text: str
    note: str = ""


def _q(text: str) -> str:
    return shlex.quote(text)


def _json(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def mcp_args(root: str) -> list[str]:
    return ["--root", root, "mcp"]


def program_argv(program: Program = None) -> list[str]:
    """The command a client should start: ``program`` as given (one path, or a command
    and its arguments), or by default the absolute path of this very installation
    (:func:`evolving_agent.process.own_command`), so the set-up works from any shell."""
    if program is None:
        return own_command()
    return [program] if isinstance(program, str) else list(program)


def claude_setups(root: str, program: Program = None) -> list[Setup]:
    """Claude Code: the SessionStart hook and permission, the MCP server two ways."""
    argv = program_argv(program)
    hook_cmd = f"{shlex.join(argv)} --root {_q(root)} boot --format claude-hook"
    settings = {
        "permissions": {"allow": [CLAUDE_ALLOW]},
        "hooks": {
            "SessionStart": [
                {
                    "matcher": HOOK_MATCHER,
                    "hooks": [{"type": "command", "command": hook_cmd, "timeout": 10}],
                }
            ]
        },
    }
    add = " ".join(["claude mcp add --scope user", SERVER, "--", shlex.join(argv + mcp_args(root))])
    server = {"type": "stdio", "command": argv[0], "args": argv[1:] + mcp_args(root)}
    project_mcp = {"mcpServers": {SERVER: server}}
    project_settings = {"enabledMcpjsonServers": [SERVER], "permissions": {"allow": [CLAUDE_ALLOW]}}
    return [
        Setup(
            "claude-settings",
            "Boot context at every session start, and the memory tools allowed",
            "~/.claude/settings.json",
            "json",
            _json(settings),
            "The hook's additionalContext reaches the model's first request. Without the "
            f"allow rule, `claude -p` denies every call to the server's tools "
            f"(or pass --allowedTools {CLAUDE_ALLOW}).",
        ),
        Setup(
            "claude-mcp-user",
            "The MCP server, for every project",
            "shell",
            "bash",
            add,
            "The root is in the server's arguments: `-e KEY=VALUE` takes a list and would "
            "swallow the server name after it.",
        ),
        Setup(
            "claude-mcp-project",
            "Or the MCP server for one project, checked in",
            ".mcp.json",
            "json",
            _json(project_mcp),
        ),
        Setup(
            "claude-project-settings",
            "...and enabled and allowed for that project",
            ".claude/settings.json",
            "json",
            _json(project_settings),
            "Claude Code reads a project's permissions only once the folder is trusted "
            "(start `claude` there once and accept).",
        ),
    ]


# What a client without a boot hook is told, in its AGENTS.md / GEMINI.md.
MEMORY_INSTRUCTIONS = "\n".join(
    [
        "## Memory (evolving-agent)",
        "",
        "At the start of every session, call the evolving-agent `boot` tool and follow",
        "today's bias in it. When something really felt off (you caught yourself doing",
        "what the bias warns against, or the user corrected you), record it once, in one",
        "sentence, with the `friction` tool. There is no quota: a session with no",
        "friction is fine. Note where work stopped with `live_set`.",
    ]
)


def codex_setups(root: str, program: Program = None) -> list[Setup]:
    """Codex: the MCP server in config.toml (or by ``codex mcp add``), and AGENTS.md."""
    argv = program_argv(program)
    args = ", ".join(toml_string(a) for a in argv[1:] + mcp_args(root))
    toml = "\n".join(
        [
            f"[mcp_servers.{SERVER}]",
            f"command = {toml_string(argv[0])}",
            f"args = [{args}]",
            "# Fail `codex exec` loudly if the server cannot start (say, a wrong root)",
            "# instead of a session without memory.",
            "required = true",
            "startup_timeout_sec = 20",
            "# `codex exec` never asks; let it call the memory tools.",
            'default_tools_approval_mode = "approve"',
        ]
    )
    add = " ".join(["codex mcp add", SERVER, "--", shlex.join(argv + mcp_args(root))])
    return [
        Setup(
            "codex-config",
            "The MCP server",
            "~/.codex/config.toml",
            "toml",
            toml,
            "The root is in the arguments: Codex starts MCP servers with a fixed "
            "environment, so $EVOLVING_AGENT_ROOT would not reach the server.",
        ),
        Setup(
            "codex-mcp-add",
            "Or register it from the shell",
            "shell",
            "bash",
            add,
            "This writes the table above without its last three settings; add them to "
            "~/.codex/config.toml by hand.",
        ),
        Setup(
            "codex-agents",
            "Tell the model to use it (the project's AGENTS.md, or ~/.codex/AGENTS.md)",
            "AGENTS.md",
            "markdown",
            MEMORY_INSTRUCTIONS,
        ),
    ]


def gemini_setups(root: str, program: Program = None) -> list[Setup]:
    """Gemini CLI: the SessionStart hook and the trusted MCP server in settings.json."""
    argv = program_argv(program)
    hook_cmd = " ".join([*map(_q, argv), "--root", _q(root), "boot", "--format", "claude-hook"])
    settings = {
        "mcpServers": {
            SERVER: {"command": argv[0], "args": [*argv[1:], *mcp_args(root)], "trust": True}
        },
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "*",
                    "hooks": [
                        {
                            "name": "evolving-agent-boot",
                            "type": "command",
                            "command": hook_cmd,
                            "timeout": 10000,
                        }
                    ],
                }
            ]
        },
    }
    add = " ".join(
        ["gemini mcp add --scope user --trust", SERVER, *map(_q, argv), *map(_q, mcp_args(root))]
    )
    return [
        Setup(
            "gemini-settings",
            "Boot context at every session start, and the memory tools allowed",
            "~/.gemini/settings.json",
            "json",
            _json(settings),
            "Merge these two keys into your settings.json. The hook's additionalContext "
            "is prepended to the first prompt (`gemini -p` too). `trust: true` is the allow "
            "rule: without it, headless Gemini CLI refuses every call to the server's "
            "tools (a policy rule with mcpName = \"evolving-agent\" and decision = "
            '"allow" does the same).',
        ),
        Setup(
            "gemini-mcp-add",
            "Or register the server from the shell (then add the hook above by hand)",
            "shell",
            "bash",
            add,
        ),
    ]


def opencode_setups(root: str, program: Program = None) -> list[Setup]:
    """OpenCode: the MCP server and its allow rule in opencode.json, and AGENTS.md."""
    argv = program_argv(program)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "mcp": {SERVER: {"type": "local", "command": [*argv, *mcp_args(root)], "enabled": True}},
        "permission": {f"{SERVER}_*": "allow"},
    }
    return [
        Setup(
            "opencode-config",
            "The MCP server, its tools allowed",
            "~/.config/opencode/opencode.json",
            "json",
            _json(config),
            "Merge these keys into your opencode.json. OpenCode names the tools "
            f"{SERVER}_boot, {SERVER}_friction, ...; the permission rule lets `opencode run` "
            "call them without asking.",
        ),
        Setup(
            "opencode-agents",
            "Boot context at session start: tell the model to call `boot` "
            "(~/.config/opencode/AGENTS.md, or the project's AGENTS.md)",
            "AGENTS.md",
            "markdown",
            MEMORY_INSTRUCTIONS,
            "OpenCode has no session-start hook that adds context; its AGENTS.md is in "
            "every session's system prompt.",
        ),
    ]


def setups_for(client: str, root: str, program: Program = None) -> list[Setup]:
    """The set-ups of ``client`` (one of :data:`CLIENTS`) for the memory root ``root``."""
    if client == "claude":
        return claude_setups(root, program)
    if client == "codex":
        return codex_setups(root, program)
    if client == "gemini":
        return gemini_setups(root, program)
    if client == "opencode":
        return opencode_setups(root, program)
    raise UsageError(f"unknown client {client!r}; choose one of: {', '.join(CLIENTS)}")


def merge_note(setup: Setup) -> str:
    """What to do with a settings file that already exists (empty for shell lines and
    instruction files): merge, because it holds the user's other settings too."""
    if setup.where == "shell" or setup.lang not in ("json", "toml"):
        return ""
    return (
        f"if {setup.where} exists, add these keys to it and keep its other settings "
        "(append to its lists); do not replace the file."
    )


def render(setups: list[Setup], *, shell_access: Sequence[str] = SHELL_ACCESS) -> str:
    """The set-ups as the command prints them: a rule naming the place, then the text
    exactly as it is pasted, then how to merge it and the note; last, what a session
    with a shell can still do in this deployment and what stops it."""
    parts = []
    for i, s in enumerate(setups, 1):
        place = "run in a shell" if s.where == "shell" else s.where
        block = [f"--- {i}. {s.title} ({place}) ---", s.text]
        block += [f"Merge: {m}" for m in [merge_note(s)] if m]
        if s.note:
            block.append(f"Note: {s.note}")
        parts.append("\n".join(block))
    if shell_access:
        heading = "--- What a session with shell access can still do ---"
        parts.append("\n".join([heading, *shell_access]))
    return "\n\n".join(parts) + "\n"
