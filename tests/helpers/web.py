"""A real ``review serve`` process and a real headless Chromium, for the page's tests.

The server is ``python -m evolving_agent review serve`` as a user starts it; its one
printed line is read (blocking: the line exists once the socket is bound). The browser
is the system's Chromium (``/usr/bin/chromium``) driven through Playwright's Python
API, never a downloaded one.

The printed token is good once: :meth:`Server.session` exchanges it (the first time)
for the session cookie, and :func:`owner_page` opens a page in a fresh browser context
holding that cookie, as the owner's browser would after opening the printed address.
"""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass(frozen=True)
class Server:
    url: str  # as printed, with the token
    process: subprocess.Popen[str]
    _session: dict[str, str] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return str(urlsplit(self.url).hostname)

    def session(self) -> tuple[str, str]:
        """(cookie name, value): the printed token exchanged once, as a browser would."""
        if not self._session:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                conn.request("GET", f"/?token={self.token}", headers={"Host": self.netloc})
                resp = conn.getresponse()
                resp.read()
                assert resp.status == 303, resp.status
                cookie = SimpleCookie(resp.getheader("set-cookie") or "")
            finally:
                conn.close()
            ((name, morsel),) = cookie.items()
            self._session[name] = morsel.value
        ((name, value),) = self._session.items()
        return name, value

    @property
    def cookie(self) -> str:
        """The session's ``Cookie`` header."""
        name, value = self.session()
        return f"{name}={value}"

    @property
    def netloc(self) -> str:
        return urlsplit(self.url).netloc

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)

    def request(
        self, method: str, path: str, *, headers: dict[str, str] | None = None, body: str = ""
    ) -> tuple[int, str]:
        """A plain HTTP request (no browser): what a hostile page or script can send."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request(method, path, body=body.encode() or None, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read().decode("utf-8", "replace")
        finally:
            conn.close()


@contextmanager
def serve(root: Path, env: dict[str, str], approver: str = "owner") -> Iterator[Server]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evolving_agent",
            "--root",
            str(root),
            "review",
            "serve",
            "--approver",
            approver,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env, "EVOLVING_AGENT_RAISE": ""},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    try:
        assert line.startswith("http://127."), (line, proc.stderr and proc.stderr.read())
        yield Server(line, proc)
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C, as the human stops it
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield b
        finally:
            b.close()


def owner_page(b: Any, server: Server, path: str = "/", **context: Any) -> Any:
    """A page of a fresh browser context that holds the owner's session cookie."""
    name, value = server.session()
    ctx = b.new_context(**context)
    ctx.add_cookies([{"name": name, "value": value, "url": server.origin + "/",
                      "httpOnly": True, "sameSite": "Strict"}])  # fmt: skip
    page = ctx.new_page()
    page.goto(server.origin + path)
    return page
