"""One HTTP request straight into an ASGI app, in process (no server, no httpx).

For tests of what an app answers (the review page's guard): the real app, the real
middleware, only the socket left out.  ``tests/helpers/web.py`` serves the page for real.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]  # lower-case names; a repeated header keeps its last value
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def request(
    app: Any,
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> Reply:
    """``method url`` (a path with its query) with ``headers``; the app's whole reply."""
    parts = urlsplit(url)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": parts.path,
        "raw_path": parts.path.encode(),
        "query_string": parts.query.encode(),
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    sent: list[dict[str, Any]] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        await app(scope, receive, send)

    anyio.run(run)
    start = next(m for m in sent if m["type"] == "http.response.start")
    head = {k.decode().lower(): v.decode() for k, v in start.get("headers", [])}
    data = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return Reply(start["status"], head, data)
