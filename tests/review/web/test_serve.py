"""A page token that stays on the page (issue 31): the session cookie never reaches a
second local server, the printed token is dead after its one exchange, and ``--open``
puts the token on no command line and in no file another user can read.

Real parts: ``review serve`` processes, the system Chromium (one browser for the
module), a second HTTP server this test starts on 127.0.0.1, and /proc/*/cmdline read
as ``ps`` reads it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fixtures import isolated_env
from tests.helpers.roots import fresh_root
from tests.helpers.web import Server, browser, owner_page, serve

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as b:
        yield b


class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def do_GET(self) -> None:  # noqa: N802  (http.server's name)
        _Recorder.seen.append(dict(self.headers.items()))
        body = b"<!doctype html><title>dev server</title><p>hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def dev_server() -> Iterator[str]:
    """A plain development server on 127.0.0.1 (another port), recording what it gets."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.seen = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_session_cookie_never_reaches_another_local_server(
    tmp_path: Path, chromium: Any, dev_server: str
) -> None:
    env = isolated_env(tmp_path)
    root = fresh_root(tmp_path / "memory")
    with serve(root.path, env) as s:
        page = owner_page(chromium, s)  # the owner's browser holds the session cookie
        assert "No reviews queued" in page.content()
        name, value = s.session()
        assert value != s.token  # the cookie holds the session's secret, not the token
        # The owner, in the same browser, opens a development server on 127.0.0.1 —
        # cookies are not isolated by port, and SameSite counts all its ports as one site.
        other = page.context.new_page()
        other.goto(f"{dev_server}/index.html")
        assert "hello" in other.content()
        assert _Recorder.seen  # the page, and whatever else the browser asked it for
        for headers in _Recorder.seen:
            assert name not in headers.get("Cookie", "") and value not in str(headers)
        # The page itself is on an address of its own, not 127.0.0.1.
        assert s.host.startswith("127.") and s.host != "127.0.0.1"
        assert [c["domain"] for c in page.context.cookies()] == [s.host]


def test_the_printed_token_is_dead_after_its_first_use(tmp_path: Path, chromium: Any) -> None:
    env = isolated_env(tmp_path)
    root = fresh_root(tmp_path / "memory")
    with serve(root.path, env) as s:
        first = chromium.new_context().new_page()
        first.goto(s.url)  # the owner opens the printed address: exchanged, cleaned
        assert "token=" not in first.url and "No reviews queued" in first.content()
        again = chromium.new_context().new_page()  # someone who read it off the screen
        resp = again.goto(s.url)
        assert resp is not None and resp.status == 403
        assert "already used" in again.content()
        # The owner's page keeps working on its session cookie.
        first.reload()
        assert "No reviews queued" in first.content()


def _cmdlines() -> list[str]:
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                out.append(
                    (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                )
            except OSError:
                continue  # ended meanwhile, or not ours to read
    return out


def _serve_open(root: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "--root", str(root), "review", "serve",
         "--open"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def test_open_gives_the_browser_a_private_file_never_the_token(tmp_path: Path) -> None:
    """--open: the token is on no process's command line (as ps shows them to every
    local user), the file the browser gets is 0600 in a 0700 folder, and it is gone
    once the browser has exchanged the token.  The browser is a small program that
    does what a browser does with the file (reads it, follows its one redirect)."""
    env = {**os.environ, **isolated_env(tmp_path), "EVOLVING_AGENT_RAISE": ""}
    env.pop("DISPLAY", None)
    report = tmp_path / "browser.json"
    fake = tmp_path / "browser.py"
    fake.write_text(
        "import http.client, json, os, re, stat, sys, time, urllib.parse\n"
        "path = sys.argv[1].removeprefix('file://')\n"
        "st, dst = os.stat(path), os.stat(os.path.dirname(path))\n"
        "html = open(path, encoding='utf-8').read()\n"
        "url = urllib.parse.urlsplit(re.search(r'url=([^\"]+)\"', html).group(1))\n"
        "conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)\n"
        "conn.request('GET', url.path + '?' + url.query)\n"
        "status = conn.getresponse().status\n"
        "json.dump({'argv': sys.argv, 'mode': oct(stat.S_IMODE(st.st_mode)),\n"
        "           'dir': oct(stat.S_IMODE(dst.st_mode)), 'status': status,\n"
        "           'had_token': 'token=' in html}, open(sys.argv[2], 'w'))\n"
        "time.sleep(600)  # a browser stays open: its command line stays in ps\n"
    )
    env["BROWSER"] = f"{sys.executable} {fake} %s {report}"
    root = fresh_root(tmp_path / "memory")
    proc = _serve_open(root.path, env)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        token = url.split("token=", 1)[1]
        deadline = time.monotonic() + 120
        while not report.exists() or not report.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, "no browser started"
            time.sleep(0.05)
        seen = json.loads(report.read_text())
        given = seen["argv"][1]
        assert given.startswith("file:///") and token not in given
        assert seen["had_token"] and (seen["mode"], seen["dir"]) == ("0o600", "0o700")
        assert seen["status"] == 303  # the one exchange (then a redirect to the page)
        opened = Path(given.removeprefix("file://"))
        assert not opened.exists() and not opened.parent.exists()  # removed at the exchange
        assert not [c for c in _cmdlines() if token in c]  # ps: nowhere on a command line
        browsers = [c for c in _cmdlines() if str(fake) in c]
        assert browsers and all(given in c for c in browsers)  # the browser runs, file only
        assert Server(url, proc).request("GET", f"/?token={token}")[0] == 403  # spent
    finally:
        # The browser this test started first (it holds the server's output pipes).
        for pid in Path("/proc").iterdir():
            if pid.name.isdigit():
                try:
                    if str(fake) in (pid / "cmdline").read_text(errors="replace"):
                        os.kill(int(pid.name), signal.SIGTERM)
                except OSError:
                    continue
        _stop(proc)


def test_open_says_plainly_when_no_browser_could_be_started(tmp_path: Path) -> None:
    env = {**os.environ, **isolated_env(tmp_path), "EVOLVING_AGENT_RAISE": ""}
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    env["BROWSER"] = str(tmp_path / "no-such-browser") + " %s"
    env["PATH"] = str(tmp_path / "empty")  # no console browser to fall back on either
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    root = fresh_root(tmp_path / "memory")
    proc = _serve_open(root.path, env)
    assert proc.stdout is not None and proc.stderr is not None
    url = proc.stdout.readline().strip()
    line = proc.stderr.readline().strip()
    out, err = _stop(proc)
    assert url.startswith("http://127.") and "token=" in url
    assert line.startswith("no browser could be started"), line + err
    assert "the token was put on no command line" in line
    assert not list((tmp_path / "tmp").glob("ea-review-*"))  # the file is gone at once
