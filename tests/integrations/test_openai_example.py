"""docs/examples/openai_loop.py against a local stand-in for an OpenAI-compatible server.

The stand-in is a real HTTP server on 127.0.0.1 that answers chat completions from a
script (a friction tool call, a bad Live Bus tool call, then a plain answer) and keeps
every request, so the test sees exactly what the example sent.  No network is used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.evidence.evidence import EvidenceLog
from tests.helpers.roots import fresh_root

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "openai_loop.py"


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


SCRIPT = [
    tool_call("c1", "record_friction", {"text": "gave three options; one was asked for"}),
    tool_call("c2", "live_set", {"key": "bad key", "text": "x"}),
    {"role": "assistant", "content": "Done."},
]


class FakeEndpoint:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, dict(self.headers), body))
                reply = SCRIPT[min(len(outer.requests), len(SCRIPT)) - 1]
                data = json.dumps({"choices": [{"index": 0, "message": reply}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    fake = FakeEndpoint()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def test_openai_loop_boots_chats_and_records_friction_as_session(
    tmp_path: Path, endpoint: FakeEndpoint
) -> None:
    root = fresh_root(tmp_path / "memory")
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(OPENAI_BASE_URL=endpoint.url, OPENAI_API_KEY="test-key", NO_PROXY="127.0.0.1")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--root", str(root.path), "--model", "test-model"],
        input="Which sorting algorithm should I use here?\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )

    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "Done.\n", "")
    assert len(endpoint.requests) == 3
    path, headers, first = endpoint.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer test-key"
    assert first["model"] == "test-model"
    assert first["messages"][0] == {"role": "system", "content": build_boot(root).markdown()}
    assert first["messages"][1] == {
        "role": "user",
        "content": "Which sorting algorithm should I use here?",
    }
    assert [t["function"]["name"] for t in first["tools"]] == ["record_friction", "live_set"]

    (rec,) = list(EvidenceLog(root).iter_all())
    assert (rec.kind, rec.actor, rec.text) == (
        "friction",
        "session",
        "gave three options; one was asked for",
    )
    last = endpoint.requests[2][2]["messages"]
    tool_results = [m for m in last if m["role"] == "tool"]
    assert tool_results == [
        {"role": "tool", "tool_call_id": "c1", "content": f"recorded friction {rec.id}"},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "error: invalid Live Bus key 'bad key': "
            "use letters, digits, '.', '_' or '-' (max 64)",
        },
    ]
    assert list(root.live.iterdir()) == []


def test_openai_loop_without_a_root_is_one_line_and_exit_4(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--root", str(missing)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 4
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: no memory root at {missing} ")
