"""Nothing but protocol on the MCP server's stdout, byte for byte.

The SDK client would tolerate (or silently drop) a stray line, so this test speaks raw
JSON-RPC over a plain subprocess and requires every stdout line to be a JSON-RPC
message — through a successful write, a failing tool call and shutdown.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

from evolving_agent.memory.evidence.evidence import EvidenceLog
from tests.helpers.roots import fresh_root

# A protocol revision real clients (Claude Code among them) send in the handshake.
PROTOCOL = "2025-06-18"
# Guards against a hang if the server never answers; not a speed assertion.
HANG_GUARD_S = 60.0


def send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def read_message(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], HANG_GUARD_S)
    assert ready, "the server did not answer"
    line = proc.stdout.readline()
    message = json.loads(line)  # a non-JSON line on stdout fails here
    assert message["jsonrpc"] == "2.0"
    return message


def test_stdout_carries_only_json_rpc(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "--root", str(root.path), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            },
        )
        init = read_message(proc)
        assert init["id"] == 1
        assert init["result"]["serverInfo"]["name"] == "evolving-agent"
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "friction", "arguments": {"text": "raw protocol friction"}},
            },
        )
        ok = read_message(proc)
        assert ok["id"] == 2
        assert ok["result"]["isError"] is False

        send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "live_set", "arguments": {"key": "bad key", "text": "x"}},
            },
        )
        failed = read_message(proc)
        assert failed["id"] == 3
        assert failed["result"]["isError"] is True
    finally:
        # Closing stdin (communicate does) is how a client hangs up: the server exits.
        rest_out, err = proc.communicate(timeout=HANG_GUARD_S)

    assert proc.returncode == 0
    for line in rest_out.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert b"Traceback" not in err
    (rec,) = list(EvidenceLog(root).iter_all())
    assert (rec.kind, rec.actor, rec.text) == ("friction", "session", "raw protocol friction")
