"""The stdio MCP server: the session's tools, for any MCP-speaking assistant.

MCP over stdio is newline-delimited JSON-RPC 2.0, and a tool server needs only four
methods of it (``initialize``, ``ping``, ``tools/list``, ``tools/call``), so the server
speaks them itself with the standard library.  That is what makes it start fast:
clients give a server a short window (Codex waits about a second for an optional one
before the first model request goes out without its tools), and importing the ``mcp``
SDK alone costs more than that on a small machine.  ``initialize`` and ``tools/list``
are answered from :mod:`.mcp_tools`' table without importing pydantic or the memory
package; those load in a background thread right after ``initialize``, ready for the
first ``tools/call``.  The official SDK's client drives this server in the tests,
beside the real Claude Code and Codex.

Every tool acts as ``session`` (see :mod:`.session_tools`).  Our own errors (an invalid
Live Bus key, empty friction text, a denied write) become tool results with
``isError`` and the same one-line message the CLI prints; the server keeps running.
Only protocol goes to stdout: fd 1 is pointed at stderr while serving, so a stray
print (ours or a library's) cannot corrupt the stream.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import IO, TYPE_CHECKING, Any

from evolving_agent import __version__
from evolving_agent.integrations.mcp_tools import (
    BY_NAME,
    INSTRUCTIONS,
    TOOLS,
    ToolInputError,
    error_result,
    result_of,
)
from evolving_agent.paths import MemoryRoot, root_problem

if TYPE_CHECKING:
    from evolving_agent.integrations.session_tools import SessionTools

SERVER_NAME = "evolving-agent"
# Newest first; a client asking for another version is offered the newest (the spec's rule).
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


class Server:
    """One client's conversation with the server (state: the tools, once loaded)."""

    def __init__(self, root: MemoryRoot) -> None:
        self.root = root
        self._tools: SessionTools | None = None
        self._loading = threading.Lock()

    def tools(self) -> SessionTools:
        with self._loading:
            if self._tools is None:
                from evolving_agent.integrations.session_tools import SessionTools

                self._tools = SessionTools(self.root)
            return self._tools

    def preload(self) -> None:
        """Import the tools' code in the background, ready for the first call."""

        def load() -> None:
            try:
                self.tools()
            except Exception:  # noqa: BLE001 - the first call reports it properly
                pass

        threading.Thread(target=load, name="mcp-preload", daemon=True).start()

    # -- JSON-RPC ---------------------------------------------------------------------------

    def handle(self, message: object) -> dict[str, Any] | None:
        """The response to one message (None for a notification or a response)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        msg_id = message.get("id")
        if not isinstance(method, str):
            return (
                None
                if "id" in message and ("result" in message or "error" in message)
                else (_error(msg_id, INVALID_REQUEST, "no method"))
            )
        if "id" not in message:
            return None  # notifications (initialized, cancelled, ...) need no answer
        params = message.get("params") or {}
        if not isinstance(params, dict):
            return _error(msg_id, INVALID_PARAMS, "params must be an object")
        if method == "initialize":
            result = self.initialize(params)
            self.preload()
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [t.listing() for t in TOOLS]}
        elif method == "tools/call":
            name = params.get("name")
            if not isinstance(name, str) or name not in BY_NAME:
                return _error(msg_id, INVALID_PARAMS, f"unknown tool {name!r}")
            result = self.call(name, params.get("arguments"))
        elif method in ("resources/list", "prompts/list"):
            result = {method.split("/")[0]: []}
        else:
            return _error(msg_id, METHOD_NOT_FOUND, f"method not found: {method}")
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {
                "name": SERVER_NAME,
                "title": "evolving-agent memory",
                "version": __version__,
            },
            "instructions": INSTRUCTIONS,
        }

    def call(self, name: str, arguments: object) -> dict[str, Any]:
        from evolving_agent.errors import EvolvingAgentError

        tool = BY_NAME[name]
        try:
            args = tool.arguments(arguments)
            return result_of(tool.run(self.tools(), args))
        except ToolInputError as exc:
            return error_result(str(exc))
        except EvolvingAgentError as exc:
            return error_result(str(exc))


def _error(msg_id: object, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def serve(server: Server, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer each line of ``stdin`` on ``stdout`` until the client hangs up."""
    for raw in stdin:
        if not raw.strip():
            continue
        try:
            message = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            replies: list[dict[str, Any]] = [_error(None, PARSE_ERROR, "parse error")]
        else:
            batch = message if isinstance(message, list) else [message]
            replies = [r for r in (server.handle(m) for m in batch) if r is not None]
        for reply in replies:
            stdout.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        if replies:
            stdout.flush()


def serve_stdio(root: MemoryRoot) -> None:
    """Serve the session's tools over stdin/stdout until the client hangs up."""
    protocol = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # anything else written to fd 1 lands on stderr, not in the protocol
    sys.stdout = sys.stderr
    try:
        serve(Server(root), sys.stdin.buffer, protocol)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        try:
            protocol.close()
        except OSError:
            pass


# -- the fast start -------------------------------------------------------------------------


def parse_argv(argv: list[str]) -> str | None | bool:
    """The ``--root`` of ``[--root R] mcp [--root R]`` (None: not given), or False when
    ``argv`` is anything else (``--help``, other options): the full CLI handles that."""
    root: str | None = None
    seen_mcp = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "mcp" and not seen_mcp:
            seen_mcp = True
        elif arg == "--root" and i + 1 < len(argv):
            root = argv[i + 1]
            i += 1
        elif arg.startswith("--root="):
            root = arg.split("=", 1)[1]
        else:
            return False
        i += 1
    return root if seen_mcp else False


def try_serve(argv: list[str]) -> int | None:
    """Serve ``evolving-agent [--root R] mcp`` without loading the CLI; None to decline.

    A root that is missing or not a memory root is one line on stderr and exit 4, before
    any protocol: a client that shows server stderr (``claude --debug``, Codex's log)
    then says why, instead of a server that starts and fails every call.
    """
    flag = parse_argv(argv)
    if flag is False:
        return None
    root = MemoryRoot.resolve(flag if isinstance(flag, str) else None)
    problem = root_problem(root)
    if problem is not None:
        sys.stderr.write(f"error: {problem}\n")
        return 4
    serve_stdio(root)
    return 0
