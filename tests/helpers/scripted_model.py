"""A scripted model server for driving the real ``codex`` and ``claude`` CLIs in tests.

Stdlib only (``http.server``), bound to 127.0.0.1 on a random port.  It speaks just
enough of two wire protocols:

* the OpenAI **Responses API** (``POST /v1/responses``, streamed as SSE) — what Codex
  uses through a custom model provider (:func:`codex_home` writes the ``config.toml``);
* the Anthropic **Messages API** (``POST /v1/messages``, streamed or not, plus
  ``/v1/messages/count_tokens``) — what Claude Code uses with ``ANTHROPIC_BASE_URL``
  and a dummy ``ANTHROPIC_API_KEY`` (:func:`claude_env`), and OpenCode through its
  bundled ``@ai-sdk/anthropic`` provider (:func:`opencode_config`);
* the **Gemini API** (``POST /v1beta/models/M:streamGenerateContent?alt=sse``,
  ``:generateContent``, ``:countTokens``) — what Gemini CLI uses with
  ``GOOGLE_GEMINI_BASE_URL`` and a dummy ``GEMINI_API_KEY`` (:func:`gemini_env`).

**Scripts.**  A test registers a script under a name (``server.script("edit", [...])``)
and puts the marker ``[[script:edit]]`` in the prompt it gives the CLI.  Each request
that offers tools is answered with the script's next *step*, chosen by how many tool
results the conversation holds after its last prompt: step 0 answers the prompt,
step 1 answers the first tool result, and so on; past the end, the last step
(normally :class:`Say`) repeats.  The script is the one the conversation named last,
so a resumed session's next prompt (which need not repeat the marker) plays the script
again, and concurrent clients (agents of one search round) never steal each other's
turns.  A request without tools (Claude Code's side calls, a reflector run with
``--tools ""``) gets the script's step only when it is text or a failure, else a short
text answer; every request is recorded.

Steps: :class:`Say` (final text), :class:`Shell` (run a command with the client's shell
tool), :class:`WriteFile`, :class:`CallTool` (any tool the client offered whose name
ends with the given one, e.g. an MCP tool ``friction``), :class:`Fail` (an HTTP error,
e.g. 429).  Every request is kept in :attr:`ScriptedModel.seen` for assertions.

Importable by other test modules (probes reuse it): ``from
tests.helpers.scripted_model import ScriptedModel, Say, Shell``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# ``[[script:NAME]]``; the brackets are optional because text that passes through the
# memory (a friction quoted in a reflector prompt) may lose them.
MARKER = re.compile(r"(?:\[\[)?\bscript:([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)(?:\]\])?")


# -- steps ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Say:
    """Answer with text and end the turn."""

    text: str


@dataclass(frozen=True)
class Answer:
    """Answer with the text ``reply(prompt)`` computes from the last user message."""

    reply: Callable[[str], str]


@dataclass(frozen=True)
class Shell:
    """Run one shell command with the client's own shell tool.

    ``escalate`` asks Codex to run it outside its sandbox (``sandbox_permissions:
    require_escalated``), as models do after a sandbox refusal; Claude has no such flag.
    """

    command: str
    escalate: bool = False


@dataclass(frozen=True)
class WriteFile:
    """Write a file: Claude's ``Write`` tool; Codex has none, so a shell ``printf``."""

    path: str
    content: str


@dataclass(frozen=True)
class CallTool:
    """Call the offered tool whose name ends with ``name`` (an MCP tool, say)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fail:
    """Answer with an HTTP error (``retry_after`` seconds in the header if given)."""

    status: int
    message: str = "scripted failure"
    retry_after: int | None = None


Step = Say | Answer | Shell | WriteFile | CallTool | Fail


@dataclass
class Seen:
    """One request the server received."""

    api: str  # "responses" | "messages" | "gemini" | "count_tokens" | "other"
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    script: str | None
    step: int | None

    def tool_names(self) -> list[str]:
        return tool_names(self.api, self.body)

    def text(self) -> str:
        """Every string in the request body (system, instructions, messages), joined."""
        return "\n".join(_strings(self.body))


# -- the server ----------------------------------------------------------------------------


class ScriptedModel:
    """The server.  Use as a context manager; ``url`` is ``http://127.0.0.1:PORT``."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Step]] = {}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def script(self, name: str, steps: list[Step]) -> str:
        """Register ``steps`` as script ``name``; returns the marker to put in a prompt."""
        if not steps:
            raise ValueError("a script needs at least one step")
        with self._lock:
            self.scripts[name] = list(steps)
        return f"[[script:{name}]]"

    def requests(self, script: str | None = None, api: str | None = None) -> list[Seen]:
        """The requests seen (for one script, one API), oldest first."""
        with self._lock:
            return [
                s
                for s in self.seen
                if (script is None or s.script == script) and (api is None or s.api == api)
            ]

    def next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids):06d}"

    # -- deciding a reply -----------------------------------------------------------------

    def decide(self, api: str, body: dict[str, Any]) -> tuple[str | None, int | None, Step]:
        """Which script and step answer this request (and record nothing)."""
        script, done = _script_and_progress(api, body)
        offers_tools = bool(tool_names(api, body))
        with self._lock:
            steps = self.scripts.get(script) if script else None
        if steps is None:
            return script, None, Say("ok")
        index = min(done, len(steps) - 1)
        step = steps[index]
        if isinstance(step, Answer):
            step = Say(step.reply(last_prompt(api, body)))
        if not offers_tools and not isinstance(step, Say | Fail):
            return script, None, Say("ok")  # a side call (a title): no tool to call
        return script, index, step

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            return  # quiet: the test output is for assertions

        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            path = self.path.split("?")[0]
            model.record(Seen("other", path, dict(self.headers), {}, None, None))
            if path.endswith("/models"):
                self._json(200, {"models": [], "data": [], "object": "list"})
            else:
                self._json(404, {"error": {"message": f"no {path}"}})

        def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            body = body if isinstance(body, dict) else {}
            if path.endswith("/messages/count_tokens"):
                model.record(Seen("count_tokens", path, dict(self.headers), body, None, None))
                self._json(200, {"input_tokens": 100})
                return
            if path.endswith(":countTokens"):
                model.record(Seen("count_tokens", path, dict(self.headers), body, None, None))
                self._json(200, {"totalTokens": 100})
                return
            if path.endswith((":generateContent", ":streamGenerateContent")):
                api = "gemini"
            elif path.endswith("/responses"):
                api = "responses"
            elif path.endswith("/messages"):
                api = "messages"
            else:
                model.record(Seen("other", path, dict(self.headers), body, None, None))
                self._json(404, {"error": {"message": f"no {path}"}})
                return
            script, index, step = model.decide(api, body)
            model.record(Seen(api, path, dict(self.headers), body, script, index))
            if isinstance(step, Fail):
                self._fail(api, step)
            elif api == "gemini":
                chunk = _gemini_response(model, body, step)
                if path.endswith(":streamGenerateContent"):
                    self._sse(iter([("", chunk)]))
                else:
                    self._json(200, chunk)
            elif api == "responses":
                self._sse(_responses_events(model, body, step))
            elif body.get("stream"):
                self._sse(_messages_events(model, body, step))
            else:
                self._json(200, _message_object(model, body, step))

        def _json(
            self, status: int, data: dict[str, Any], extra: dict[str, str] | None = None
        ) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def _fail(self, api: str, step: Fail) -> None:
            extra = {"Retry-After": str(step.retry_after)} if step.retry_after is not None else {}
            if api == "gemini":
                reason = {
                    429: "RESOURCE_EXHAUSTED",
                    401: "UNAUTHENTICATED",
                    403: "PERMISSION_DENIED",
                }
                data = {
                    "error": {
                        "code": step.status,
                        "message": step.message,
                        "status": reason.get(step.status, "INTERNAL"),
                    }
                }
                self._json(step.status, data, extra)
                return
            if api == "messages":
                kind = {429: "rate_limit_error", 401: "authentication_error"}.get(
                    step.status, "api_error"
                )
                data: dict[str, Any] = {
                    "type": "error",
                    "error": {"type": kind, "message": step.message},
                }
            else:
                data = {"error": {"type": "rate_limit_exceeded", "message": step.message}}
            self._json(step.status, data, extra)

        def _sse(self, events: Iterator[tuple[str, dict[str, Any]]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for name, data in events:
                head = f"event: {name}\n" if name else ""
                self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler


# -- reading requests ------------------------------------------------------------------------


def tool_names(api: str, body: dict[str, Any]) -> list[str]:
    """The names of the tools a request offers (Responses, Messages or Gemini shape)."""
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        for declared in tool.get("functionDeclarations") or []:  # the Gemini API
            if isinstance(declared, dict) and declared.get("name"):
                names.append(str(declared["name"]))
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        if name:
            names.append(str(name))
        # Responses API namespaces (MCP servers grouped under one entry) list their tools.
        for inner in tool.get("tools") or []:
            if isinstance(inner, dict) and inner.get("name"):
                names.append(f"{tool.get('name', '')}{inner['name']}")
    return names


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def last_prompt(api: str, body: dict[str, Any]) -> str:
    """The text of the conversation's last user message (a prompt, not a tool result)."""
    if api == "gemini":
        for content in reversed(body.get("contents") or []):
            texts = _gemini_texts(content)
            if texts:
                return "\n".join(texts)
        return ""
    items: Any = body.get("input") if api == "responses" else body.get("messages")
    if isinstance(items, str):
        return items
    for item in reversed(items if isinstance(items, list) else []):
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        blocks = content if isinstance(content, list) else []
        texts = [
            str(b.get("text") or "")
            for b in blocks
            if isinstance(b, dict) and b.get("type") in ("text", "input_text")
        ]
        if texts:
            return "\n".join(texts)
    return ""


def _script_and_progress(api: str, body: dict[str, Any]) -> tuple[str | None, int]:
    """The script named in the conversation's last user text, and the tool results since."""
    if api == "gemini":
        return _gemini_progress(body)
    items: list[Any] = body.get("input") if api == "responses" else body.get("messages")  # type: ignore[assignment]
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = items if isinstance(items, list) else []
    script: str | None = None
    results = 0
    searches: set[object] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        if api == "responses":
            kind = item.get("type", "message")
            if kind.endswith("_call_output"):
                results += 1
            elif kind == "message" and item.get("role") == "user":
                # A new prompt (a resumed session's next turn) starts the script again;
                # the script stays the one named last.
                results = 0
                found = MARKER.findall("\n".join(_strings(item.get("content"))))
                if found:
                    script = found[-1]
        else:
            content = item.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            if item.get("role") == "assistant":
                # Loading a deferred tool's schema is not a step of the script.
                searches |= {
                    b.get("id")
                    for b in blocks
                    if isinstance(b, dict)
                    and b.get("type") == "tool_use"
                    and b.get("name") == TOOL_SEARCH
                }
            if item.get("role") != "user":
                continue
            texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
            if not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                results = 0  # a new prompt, not a tool's answer: the script starts again
            results += sum(
                1
                for b in blocks
                if isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("tool_use_id") not in searches
            )
            found = MARKER.findall("\n".join(_strings(texts)))
            if found:
                script = found[-1]
    return script, results


# -- the Responses API (Codex) ----------------------------------------------------------------

_SHELL_TOOLS = ("shell_command", "shell", "exec_command", "local_shell")


def _responses_call(body: dict[str, Any], step: Step) -> tuple[str, dict[str, Any]] | None:
    """(tool name, arguments) for a tool-calling step, in Codex's shapes."""
    names = tool_names("responses", body)
    if isinstance(step, WriteFile):
        step = Shell(f"printf %s {_sh_quote(step.content)} > {_sh_quote(step.path)}")
    if isinstance(step, Shell):
        name = next((n for n in _SHELL_TOOLS if n in names), "shell")
        escalate: dict[str, Any] = (
            {"sandbox_permissions": "require_escalated", "justification": "run it unsandboxed?"}
            if step.escalate
            else {}
        )
        if name == "shell":
            return name, {"command": ["bash", "-lc", step.command], **escalate}
        if name == "exec_command":
            return name, {"cmd": step.command, **escalate}
        return name, {"command": step.command, **escalate}
    if isinstance(step, CallTool):
        name = next((n for n in names if n.endswith(step.name)), step.name)
        return name, dict(step.arguments)
    return None


def _responses_events(
    model: ScriptedModel, body: dict[str, Any], step: Step
) -> Iterator[tuple[str, dict[str, Any]]]:
    rid = model.next_id("resp")
    yield "response.created", {"type": "response.created", "response": {"id": rid}}
    call = _responses_call(body, step)
    if call is None:
        text = step.text if isinstance(step, Say) else "ok"
        item: dict[str, Any] = {
            "type": "message",
            "role": "assistant",
            "id": model.next_id("msg"),
            "content": [{"type": "output_text", "text": text}],
        }
    else:
        name, arguments = call
        item = {
            "type": "function_call",
            "id": model.next_id("fc"),
            "call_id": model.next_id("call"),
            "name": name,
            "arguments": json.dumps(arguments),
        }
        # An MCP tool inside a namespace is called by its short name plus the namespace.
        ns = _namespace_of(body, name)
        if ns is not None:
            item["namespace"], item["name"] = ns
    yield "response.output_item.done", {"type": "response.output_item.done", "item": item}
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    yield (
        "response.completed",
        {
            "type": "response.completed",
            "response": {"id": rid, "usage": usage},
        },
    )


def _namespace_of(body: dict[str, Any], full: str) -> tuple[str, str] | None:
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict) or not tool.get("tools"):
            continue
        for inner in tool["tools"]:
            if isinstance(inner, dict) and f"{tool.get('name', '')}{inner.get('name')}" == full:
                return str(tool.get("name")), str(inner.get("name"))
    return None


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


# -- the Gemini API (Gemini CLI) ---------------------------------------------------------------

_GEMINI_SHELL = "run_shell_command"


def _gemini_parts(content: object) -> list[dict[str, Any]]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts or [] if isinstance(p, dict)]


def _gemini_texts(content: object) -> list[str]:
    """A user turn's prompt text (none for a turn of tool answers)."""
    if not isinstance(content, dict) or content.get("role") != "user":
        return []
    parts = _gemini_parts(content)
    if any("functionResponse" in p for p in parts):
        return []
    return [str(p["text"]) for p in parts if isinstance(p.get("text"), str)]


def _gemini_progress(body: dict[str, Any]) -> tuple[str | None, int]:
    script: str | None = None
    results = 0
    for content in body.get("contents") or []:
        texts = _gemini_texts(content)
        if texts:
            results = 0
            found = MARKER.findall("\n".join(texts))
            if found:
                script = found[-1]
        results += sum(1 for p in _gemini_parts(content) if "functionResponse" in p)
    return script, results


def _gemini_response(model: ScriptedModel, body: dict[str, Any], step: Step) -> dict[str, Any]:
    names = tool_names("gemini", body)
    part: dict[str, Any]
    if isinstance(step, WriteFile) and "write_file" in names:
        call = {"name": "write_file", "args": {"file_path": step.path, "content": step.content}}
        part = {"functionCall": call}
    elif isinstance(step, Shell | WriteFile):
        command = (
            step.command
            if isinstance(step, Shell)
            else (f"printf %s {_sh_quote(step.content)} > {_sh_quote(step.path)}")
        )
        part = {"functionCall": {"name": _GEMINI_SHELL, "args": {"command": command}}}
    elif isinstance(step, CallTool):
        name = next((n for n in names if n.endswith(step.name)), step.name)
        part = {"functionCall": {"name": name, "args": dict(step.arguments)}}
    else:
        part = {"text": step.text if isinstance(step, Say) else "ok"}
    if "functionCall" in part:
        part["functionCall"]["id"] = model.next_id("call")
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": 100,
            "candidatesTokenCount": 10,
            "totalTokenCount": 110,
        },
        "modelVersion": body.get("model", "scripted"),
    }


# -- the Messages API (Claude Code) -----------------------------------------------------------

TOOL_SEARCH = "ToolSearch"
_DEFERRED = re.compile(r"^(mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+)$", re.MULTILINE)


def deferred_tools(body: dict[str, Any]) -> list[str]:
    """MCP tools Claude Code listed by name only (loaded on demand with ToolSearch)."""
    return sorted(
        set(
            _DEFERRED.findall(
                "\n".join(_strings(body.get("system")))
                + "\n"
                + "\n".join(_strings(body.get("messages")))
            )
        )
    )


def _messages_block(model: ScriptedModel, body: dict[str, Any], step: Step) -> dict[str, Any]:
    names = tool_names("messages", body)
    if isinstance(step, Shell):
        # Claude Code's shell tool is "Bash", OpenCode's "bash".
        shell = next((n for n in names if n.lower() == "bash"), "Bash")
        return _tool_use(model, shell, {"command": step.command, "description": "run"})
    if isinstance(step, WriteFile):
        path = step.path
        return _tool_use(model, "Write", {"file_path": path, "content": step.content})
    if isinstance(step, CallTool):
        name = next((n for n in names if n.endswith(step.name)), None)
        if name is not None:
            return _tool_use(model, name, dict(step.arguments))
        # Claude Code defers MCP tools: only their names are listed, in the system
        # text; a model loads one with ToolSearch before it can call it.
        deferred = deferred_tools(body)
        full = next((n for n in deferred if n.endswith("__" + step.name)), None)
        if full is not None and TOOL_SEARCH in names:
            return _tool_use(model, TOOL_SEARCH, {"query": f"select:{full}", "max_results": 5})
        # On a busy machine Claude Code's first request may go out before the MCP server
        # has connected (no name listed yet): search again, as a model looking for its
        # memory tool would, until the server's tools are listed (a search is not a step).
        if TOOL_SEARCH in names and _searches(body) < MAX_SEARCHES:
            return _tool_use(model, TOOL_SEARCH, {"query": step.name, "max_results": 5})
        return _tool_use(model, step.name, dict(step.arguments))
    text = step.text if isinstance(step, Say) else "ok"
    return {"type": "text", "text": text}


MAX_SEARCHES = 60  # then the call goes to the bare name and the test sees it fail


def _searches(body: dict[str, Any]) -> int:
    """How many ToolSearch calls the conversation already holds."""
    return sum(
        1
        for m in body.get("messages") or []
        if isinstance(m, dict)
        and m.get("role") == "assistant"
        and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == TOOL_SEARCH
    )


def _tool_use(model: ScriptedModel, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": model.next_id("toolu"), "name": name, "input": arguments}


def _message_object(model: ScriptedModel, body: dict[str, Any], step: Step) -> dict[str, Any]:
    block = _messages_block(model, body, step)
    return {
        "id": model.next_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": [block],
        "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }


def _messages_events(
    model: ScriptedModel, body: dict[str, Any], step: Step
) -> Iterator[tuple[str, dict[str, Any]]]:
    message = _message_object(model, body, step)
    block = message["content"][0]
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": 100, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    if block["type"] == "text":
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {**block, "input": {}},
            },
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield "message_stop", {"type": "message_stop"}


# -- client set-up ---------------------------------------------------------------------------

CODEX_MODEL = "scripted-model"


def codex_home(path: Path, url: str, extra_toml: str = "") -> Path:
    """A ``CODEX_HOME`` whose ``config.toml`` sends Codex to the scripted server."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        f'model = "{CODEX_MODEL}"\n'
        'model_provider = "scripted"\n'
        # No network beyond the scripted server: no update checks, no telemetry.
        "check_for_update_on_startup = false\n"
        "\n"
        "[model_providers.scripted]\n"
        'name = "scripted"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "\n" + extra_toml
    )
    return path


def codex_env(home: Path, codex_home_dir: Path) -> dict[str, str]:
    """Environment for a ``codex`` child: its own HOME and CODEX_HOME, no real keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    env.update({"HOME": str(home), "CODEX_HOME": str(codex_home_dir), "NO_COLOR": "1"})
    return env


def claude_env(home: Path, url: str) -> dict[str, str]:
    """Environment for a ``claude`` child pointed at the scripted server."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE_", "CLAUDECODE"))
    }
    env.update(
        {
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "NO_COLOR": "1",
        }
    )
    home.mkdir(parents=True, exist_ok=True)
    return env


GEMINI_MODEL = "gemini-2.5-flash"  # a fixed model: "auto" would first ask a router model


def gemini_env(home: Path, url: str, settings: dict[str, Any] | None = None) -> dict[str, str]:
    """Environment for a ``gemini`` child: its own HOME, a dummy key, the scripted server.

    ``settings`` are merged into ``~/.gemini/settings.json`` after the login choice and
    model (the key alone would pick the gateway auth type, which headless mode refuses)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GEMINI_", "GOOGLE_", "CLAUDE", "ANTHROPIC_"))
    }
    config = home / ".gemini"
    config.mkdir(parents=True, exist_ok=True)
    base: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"name": GEMINI_MODEL},
        "privacy": {"usageStatisticsEnabled": False},
    }
    (config / "settings.json").write_text(json.dumps({**base, **(settings or {})}, indent=2))
    env.update(
        {
            "HOME": str(home),
            "GEMINI_API_KEY": "scripted-dummy-key",
            "GOOGLE_GEMINI_BASE_URL": url,
            # Gemini CLI loads its whole bundle only to start itself again as a child with
            # a larger heap (a third of each start's CPU): one process is enough here.
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_COLOR": "1",
        }
    )
    return env


OPENCODE_MODEL = "scripted/scripted-model"


def opencode_env(home: Path, url: str, extra: dict[str, Any] | None = None) -> dict[str, str]:
    """Environment for an ``opencode`` child: its own HOME and XDG folders, and a global
    ``opencode.json`` whose one provider is the scripted server (Messages API, through
    OpenCode's bundled ``@ai-sdk/anthropic``), priced so a turn's cost is known:
    $1 / $10 per million input / output tokens."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE_", "XDG_"))}
    config = home / ".config" / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "model": OPENCODE_MODEL,
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/anthropic",
                "name": "scripted",
                "options": {"baseURL": f"{url}/v1", "apiKey": "sk-ant-scripted-dummy"},
                "models": {
                    "scripted-model": {"name": "scripted", "cost": {"input": 1, "output": 10}}
                },
            }
        },
        "share": "disabled",
        "autoupdate": False,
    }
    for key, value in (extra or {}).items():
        data[key] = {**data[key], **value} if isinstance(data.get(key), dict) else value
    (config / "opencode.json").write_text(json.dumps(data, indent=2))
    # The models.dev catalog: none here (no network), and OpenCode's bundled copy of it,
    # every provider's models, is a quarter of each start's CPU.  Its one provider is
    # the scripted one, from the config above.
    catalog = home / "models.json"
    catalog.write_text("{}")
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_MODELS_PATH": str(catalog),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "NO_COLOR": "1",
        }
    )
    return env
