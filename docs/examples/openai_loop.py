"""A minimal chat loop for any OpenAI-compatible endpoint, with evolving-agent memory.

    python docs/examples/openai_loop.py --model gpt-4o-mini
    python docs/examples/openai_loop.py --base-url http://localhost:11434/v1 --model llama3.1

It boots from the memory root (Canon, today's bias and carry, the Live Bus) as the
system prompt, then chats over stdin/stdout.  The model gets two tools —
``record_friction`` and ``live_set`` — which append to Evidence and set Live Bus
entries through the library, always as ``session``.  Only the standard library is
used for HTTP (``urllib``), so it works with OpenAI, Ollama, vLLM or a llama.cpp server.

Environment: ``EVOLVING_AGENT_ROOT`` (or ``--root``), ``OPENAI_API_KEY`` (omit for
local servers), ``OPENAI_BASE_URL`` (default https://api.openai.com/v1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from evolving_agent.errors import EvolvingAgentError
from evolving_agent.integrations.session_tools import SessionTools
from evolving_agent.paths import MemoryRoot

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "record_friction",
            "description": (
                "Record, once, something that really felt off just now (e.g. you started "
                "offering options the user had not asked for). No quota: most turns have none."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "description": "What felt off, concretely."},
                    "supports": {"type": "string", "description": "Hypothesis id, optional."},
                    "contradicts": {"type": "string", "description": "Hypothesis id, optional."},
                },
                "required": ["text"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "live_set",
            "description": "Note what is going on now on the Live Bus (replaces the key).",
            "parameters": {
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "e.g. 'thread'"},
                    "text": {"type": "string"},
                },
                "required": ["key", "text"],
            },
        },
    },
]


def chat(base_url: str, api_key: str | None, body: dict[str, Any], timeout: float) -> Any:
    """POST /chat/completions and return the first choice's message."""
    request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers={
            "Content-Type": "application/json",
            **({"Authorization": f"Bearer {api_key}"} if api_key else {}),
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)["choices"][0]["message"]


def run_tool(tools: SessionTools, name: str, arguments: str) -> str:
    """Execute one tool call; errors go back to the model as text, never crash the loop."""
    try:
        args = json.loads(arguments or "{}")
        if name == "record_friction":
            rec = tools.friction(
                args["text"], supports=args.get("supports"), contradicts=args.get("contradicts")
            )
            return f"recorded friction {rec.id}"
        if name == "live_set":
            entry = tools.live_set(args["key"], args["text"])
            return f"Live Bus {entry.key} set"
        return f"unknown tool {name!r}"
    except (EvolvingAgentError, KeyError, ValueError) as exc:
        return f"error: {exc}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help="memory root (default: $EVOLVING_AGENT_ROOT)")
    parser.add_argument(
        "--base-url", default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    )
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)

    try:
        tools = SessionTools(MemoryRoot.resolve(args.root))
        system_prompt = tools.boot()
    except EvolvingAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 4
    api_key = os.environ.get("OPENAI_API_KEY")
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]

    for line in sys.stdin:
        if not line.strip():
            continue
        messages.append({"role": "user", "content": line.rstrip("\n")})
        while True:  # until the model answers without calling a tool
            body = {"model": args.model, "messages": messages, "tools": TOOLS}
            try:
                message = chat(args.base_url, api_key, body, args.timeout)
            except (urllib.error.URLError, TimeoutError) as exc:
                print(f"error: {args.base_url}: {exc}", file=sys.stderr)
                return 1
            messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                print(message.get("content") or "", flush=True)
                break
            for call in calls:
                result = run_tool(tools, call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
