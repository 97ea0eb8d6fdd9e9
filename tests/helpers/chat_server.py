"""A chat-completions server on 127.0.0.1 for the ``openai`` reflector and probe tests.

One server shape, three scripts: each request is answered by ``answer(body, n)`` (``n``
counts requests from 0), which returns the status, headers and body to send.  Every
request's JSON body, lower-cased headers and arrival time are kept for the test.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, str], bytes]
PATH = "/v1/chat/completions"


def completion(model: str, content: str) -> Reply:
    """A 200 chat completion whose one choice says ``content``."""
    payload = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    return 200, {"Content-Type": "application/json"}, json.dumps(payload).encode()


def error(status: int, message: str, **headers: str) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "test"}}).encode()
    return status, {"Content-Type": "application/json", **headers}, body


class ChatServer:
    """POST /v1/chat/completions answered by ``answer``; any other path is a 404."""

    def __init__(self, answer: Callable[[dict[str, Any], int], Reply]) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.times.append(time.monotonic())
                outer.requests.append(body)
                # Header names are case-insensitive (the openai client sends them lower-case).
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path != PATH:
                    status, headers, payload = 404, {}, b""
                else:
                    status, headers, payload = answer(body, len(outer.requests) - 1)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
