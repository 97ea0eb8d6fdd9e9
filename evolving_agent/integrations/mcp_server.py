"""The stdio MCP server: the session's tools, for any MCP-speaking assistant.

Built on the official ``mcp`` SDK, 2.x line only (``MCPServer``, the class that
replaced 1.x's ``FastMCP``); pyproject pins ``mcp>=2.3,<3`` because this is the API we
test against and a 1.x fallback would be a second, untested code path.

Six tools — ``friction``, ``live_set``, ``boot``, ``hypotheses``, ``hypothesis_add``,
``hypothesis_propose`` —
each a thin wrapper
over :class:`SessionTools`, so each acts as ``session`` and no tool has a parameter
that chooses the actor or the layer.  Our own errors (an invalid Live Bus key, empty
friction text, a denied write) become MCP tool errors with the same one-line message
the CLI prints; the server keeps running.  Only protocol goes to stdout: the SDK's
stdio transport points fd 1 at stderr while it serves, and logging goes to stderr.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from evolving_agent import __version__
from evolving_agent.errors import EvolvingAgentError
from evolving_agent.integrations.session_tools import (
    FrictionRecorded,
    HypothesesResult,
    HypothesisView,
    ProposalRecorded,
    SessionTools,
)
from evolving_agent.memory.live import LiveEntry
from evolving_agent.paths import MemoryRoot

SERVER_NAME = "evolving-agent"

INSTRUCTIONS = """\
Your long-term memory (evolving-agent).  Call `boot` at the start of a session if the
boot context is not already in your prompt.  Call `friction` only when something really
felt off — no quota; a day with none is fine.  Use `live_set` to note where work stopped.
You act as 'session': you cannot change your identity (Canon) or today's bias yourself.
A hypothesis or counter-move you write is a proposal: it reaches the bias only after
friction supports it on 2 distinct days, or when the human adopts it.
"""

T = TypeVar("T")


def _as_tool_error(fn: Callable[[], T]) -> T:
    """Run ``fn``; turn our named errors into MCP tool errors (is_error, message kept)."""
    try:
        return fn()
    except EvolvingAgentError as exc:
        raise ToolError(str(exc)) from None


def build_server(root: MemoryRoot) -> MCPServer:
    """An MCP server whose tools act as ``session`` on ``root`` (which must exist)."""
    tools = SessionTools(root)
    server: MCPServer = MCPServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=__version__,
        # INFO would log every tool failure twice (tool result + stderr); keep stderr quiet.
        log_level="WARNING",
    )

    @server.tool()
    def friction(
        text: str,
        supports: str | None = None,
        contradicts: str | None = None,
        session: str | None = None,
    ) -> FrictionRecorded:
        """Append a friction event to Evidence: something that really felt off just now.

        Example text: "started writing 'or you could also…' but the user had not asked
        for options, so I stopped".  There is no quota; do not invent friction.
        `supports` / `contradicts` name a hypothesis id this event bears on; `session`
        is your session id, if you know it.  `warnings` in the answer names any cited id
        that is not in the register (the event is kept; no job counts it).
        """
        return _as_tool_error(
            lambda: tools.friction(
                text, supports=supports, contradicts=contradicts, session=session
            )
        )

    @server.tool()
    def live_set(key: str, text: str) -> LiveEntry:
        """Set a Live Bus entry (what is going on now), replacing any earlier value.

        `key`: letters, digits, '.', '_' or '-' (max 64), e.g. "thread".
        `text`: e.g. "refactoring the parser; stopped at the failing tests".
        """
        return _as_tool_error(lambda: tools.live_set(key, text))

    @server.tool()
    def boot() -> str:
        """Today's boot context as Markdown: identity (Canon), today's bias and
        carry-forward, and the Live Bus.  Follow the bias."""
        return _as_tool_error(tools.boot)

    @server.tool()
    def hypothesis_add(
        text: str, when: str | None = None, do: str | None = None, stakes: str = "low"
    ) -> HypothesisView:
        """Raise a hypothesis you noticed about how you work with this user (state
        emerging). `when` is the moment it matters, `do` what to do then, `stakes` low or
        high (high = hard to undo or seen by others). Recorded as session; the next
        nightly run adds it to the register. Only for a pattern, never a quota."""
        return _as_tool_error(lambda: tools.hypothesis_add(text, when=when, do=do, stakes=stakes))

    @server.tool()
    def hypothesis_propose(
        hypothesis: str, when: str | None = None, do: str | None = None
    ) -> ProposalRecorded:
        """Propose a trigger (`when`) and/or counter-move (`do`) for a hypothesis, by
        id — typically one the nightly job raised, which has none.  Recorded as your
        proposal; it reaches the bias only once friction supports the hypothesis on 2
        distinct days, or when the human adopts it."""
        return _as_tool_error(lambda: tools.hypothesis_propose(hypothesis, when=when, do=do))

    @server.tool()
    def hypotheses() -> HypothesesResult:
        """The hypothesis register: each hypothesis's id, text and state
        (emerging, live, weakening, split, retired).  Use an id with `friction`'s
        `supports` / `contradicts`."""
        return _as_tool_error(tools.hypotheses)

    return server


def serve_stdio(root: MemoryRoot) -> None:
    """Serve the session's tools over stdin/stdout until the client hangs up."""
    build_server(root).run("stdio")
