"""The MCP tool table and the protocol loop, without a client (the SDK client and the
real CLIs drive the server in test_mcp_server.py and test_real_clients.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.integrations.mcp_server import PROTOCOL_VERSIONS, Server, parse_argv, serve
from evolving_agent.integrations.mcp_tools import BY_NAME, TOOLS
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root


def listing() -> dict[str, dict[str, Any]]:
    return {t.name: t.listing() for t in TOOLS}


def test_annotations_say_what_each_tool_does() -> None:
    # Regression: unannotated tools made `codex exec` reject every call ("approval policy
    # is never").
    notes = {name: tool["annotations"] for name, tool in listing().items()}
    assert {n for n, a in notes.items() if a.get("readOnlyHint")} == {"boot", "hypotheses"}
    for name in ("friction", "live_set", "hypothesis_add", "hypothesis_propose"):
        assert notes[name]["readOnlyHint"] is False
        assert notes[name]["destructiveHint"] is False
    assert {n for n, a in notes.items() if a.get("idempotentHint")} == {
        "boot",
        "hypotheses",
        "live_set",
    }
    assert all(a["openWorldHint"] is False for a in notes.values())


def test_every_argument_is_described_and_stakes_is_an_enum() -> None:
    for name, tool in listing().items():
        for arg, schema in tool["inputSchema"]["properties"].items():
            assert schema["description"].strip(), f"{name}.{arg} has no description"
    stakes = listing()["hypothesis_add"]["inputSchema"]["properties"]["stakes"]
    assert stakes["enum"] == ["low", "high"]
    assert listing()["friction"]["inputSchema"]["required"] == ["text"]


def test_descriptions_are_dedented() -> None:
    # Regression: docstrings kept their 8-space indentation in what the model read.
    for tool in listing().values():
        for line in tool["description"].splitlines():
            assert line == line.lstrip(), repr(line)


def call(server: Server, method: str, params: dict[str, Any] | None = None) -> Any:
    reply = server.handle({"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}})
    assert reply is not None
    return reply


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_bad_arguments_are_tool_errors_and_change_nothing(root: MemoryRoot) -> None:
    server = Server(root)
    before = list(EvidenceLog(root).iter_all())
    bad_stakes = call(
        server,
        "tools/call",
        {"name": "hypothesis_add", "arguments": {"text": "x", "stakes": "mid"}},
    )["result"]
    no_text = call(server, "tools/call", {"name": "friction", "arguments": {}})["result"]
    not_str = call(server, "tools/call", {"name": "friction", "arguments": {"text": 3}})["result"]

    assert bad_stakes["isError"] is True
    assert bad_stakes["content"][0]["text"] == "hypothesis_add: 'stakes' must be one of: low, high"
    assert no_text["content"][0]["text"] == "friction: missing required argument 'text'"
    assert not_str["isError"] is True
    assert list(EvidenceLog(root).iter_all()) == before


def test_a_call_answers_text_and_structured_data(root: MemoryRoot) -> None:
    server = Server(root)
    result = call(
        server,
        "tools/call",
        {"name": "friction", "arguments": {"text": "felt off", "supports": None}},
    )["result"]

    assert result["isError"] is False
    assert result["structuredContent"]["actor"] == "session"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_protocol_version_and_unknowns(root: MemoryRoot) -> None:
    server = Server(root)
    asked = call(server, "initialize", {"protocolVersion": "2025-03-26"})["result"]
    future = call(server, "initialize", {"protocolVersion": "2099-01-01"})["result"]

    assert asked["protocolVersion"] == "2025-03-26"
    assert future["protocolVersion"] == PROTOCOL_VERSIONS[0]
    assert asked["capabilities"] == {"tools": {"listChanged": False}}
    assert call(server, "sampling/createMessage")["error"]["code"] == -32601
    assert call(server, "tools/call", {"name": "rm"})["error"]["code"] == -32602
    assert server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None


def test_serve_answers_each_line_and_survives_garbage(root: MemoryRoot) -> None:
    lines = [
        b"not json\n",
        b"\n",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode() + b"\n",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode() + b"\n",
    ]
    out = io.BytesIO()

    serve(Server(root), io.BytesIO(b"".join(lines)), out)

    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r.get("id") for r in replies] == [None, 1, 2]
    assert replies[0]["error"]["code"] == -32700
    assert {t["name"] for t in replies[2]["result"]["tools"]} == set(BY_NAME)


def test_listing_tools_loads_neither_pydantic_nor_the_sdk(root: MemoryRoot) -> None:
    # The fast start: initialize/tools/list must not pay for pydantic or the mcp SDK.
    code = (
        "import sys\n"
        "from evolving_agent.integrations.mcp_server import Server\n"
        "from evolving_agent.paths import MemoryRoot\n"
        f"s = Server(MemoryRoot.resolve({str(root.path)!r}))\n"
        "r = s.handle({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'})\n"
        "assert 'tools' in r['result']\n"
        "print(sorted(m for m in ('pydantic', 'mcp', 'click') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["mcp"], None),
        (["--root", "/r", "mcp"], "/r"),
        (["mcp", "--root=/r"], "/r"),
        (["mcp", "--help"], False),
        (["boot"], False),
    ],
)
def test_fast_start_takes_only_plain_mcp_lines(argv: list[str], expected: object) -> None:
    assert parse_argv(argv) == expected


def test_a_root_that_is_a_file_is_one_line_and_exit_4(tmp_path: Path) -> None:
    bad = tmp_path / "file"
    bad.write_text("x")
    proc = subprocess.run(
        [sys.executable, "-m", "evolving_agent", "mcp", "--root", str(bad)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == (
        f"error: no memory root at {bad}: it is a file, not a directory "
        "(pass --root or set $EVOLVING_AGENT_ROOT to a directory)\n"
    )
