"""``mcp`` through the full CLI (``cli/mcp_cmd.py``), not the launcher's fast start: a
wrong root is one line and exit 4; a real root answers an MCP ``initialize`` on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.helpers.roots import fresh_root

# The CLI itself (evolving_agent.cli.main), as the launcher runs it when its fast path declines.
CLI = [sys.executable, "-c", "from evolving_agent.cli import main; main()"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


def test_a_missing_root_is_one_line_and_exit_4_before_serving(tmp_path: Path) -> None:
    result = run_cli("--root", str(tmp_path / "nowhere"), "mcp")
    assert result.exit_code == 4
    assert result.stderr.startswith(f"error: no memory root at {tmp_path / 'nowhere'}")
    assert result.stdout == ""


@pytest.mark.slow  # a real interpreter with the whole CLI and the MCP server
def test_a_real_root_answers_initialize_with_protocol_only_on_stdout(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    proc = subprocess.run(
        [*CLI, "--root", str(root.path), "mcp"],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=60,
    )
    [line] = proc.stdout.splitlines()  # nothing but protocol on stdout
    reply = json.loads(line)
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"]
    assert "tools" in reply["result"]["capabilities"]
