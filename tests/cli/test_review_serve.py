"""review serve as a process: one printed line, 127.0.0.1 only, Ctrl-C ends it cleanly,
and a missing extra or a taken port is a one-line error."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.helpers.roots import fresh_root


def _serve(root: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "--root", str(root), "review", "serve", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )


@pytest.mark.slow
def test_serve_prints_one_line_serves_loopback_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    proc = _serve(root.path)
    assert proc.stdout is not None and proc.stderr is not None
    url = proc.stdout.readline().strip()
    parts = urlsplit(url)
    host = str(parts.hostname)
    # A loopback address of its own for this run (never 127.0.0.1, whose cookies every
    # other local server on it would receive), and only the path and the token.
    assert parts.scheme == "http" and host.startswith("127.") and host != "127.0.0.1"
    assert parts.path == "/"
    token = parts.query.removeprefix("token=")
    assert len(token) >= 32
    conn = http.client.HTTPConnection(host, parts.port, timeout=30)
    conn.request("GET", f"/?{parts.query}")
    resp = conn.getresponse()
    set_cookie = resp.getheader("set-cookie") or ""
    # The token is exchanged for another secret; the cookie names no Domain (host-only).
    assert resp.status == 303 and token not in set_cookie and "domain" not in set_cookie.lower()
    resp.read()
    conn.request("GET", f"/?{parts.query}")  # the printed token is dead now
    resp = conn.getresponse()
    assert resp.status == 403 and "already used" in resp.read().decode()
    # A root that has lived no month yet still renders, and a bad month is one message.
    cookie = {"Cookie": set_cookie.split(";", 1)[0]}
    conn.request("GET", "/", headers=cookie)
    resp = conn.getresponse()
    page = resp.read().decode()
    assert resp.status == 200 and "No reviews queued" in page and "Nothing to flag" in page
    conn.request("GET", "/?month=2026-13", headers=cookie)
    resp = conn.getresponse()
    assert resp.status == 400 and "expected YYYY-MM" in resp.read().decode()
    conn.close()
    # Bound to the loopback address only (not 0.0.0.0): what the kernel says it listens on.
    listening = [
        line.split()[1]
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
        if line.split()[3] == "0A"  # LISTEN
    ]
    ip = "".join(f"{int(x):02X}" for x in reversed(host.split(".")))  # /proc/net/tcp order
    assert f"{ip}:{parts.port:04X}" in listening
    assert f"00000000:{parts.port:04X}" not in listening
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert out == ""  # exactly one line was ever printed
    assert "Traceback" not in err
    assert proc.returncode == 0


@pytest.mark.slow
def test_a_taken_port_is_a_one_line_error(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))  # every address: the one drawn for the page too
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = _serve(root.path, "--port", str(port))
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == ""
    assert err.startswith(f"error: cannot serve on loopback port {port}")
    assert err.count("\n") == 1


def test_without_the_review_extra_it_names_the_extra(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    code = (
        "import sys; sys.modules['jinja2'] = None; "  # as if the extra were not installed
        "from evolving_agent.launch import main; "
        f"sys.argv = ['evolving-agent', '--root', {str(root.path)!r}, 'review', 'serve']; main()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 4  # invalid environment the user fixes, not a usage error
    assert proc.stderr.strip() == (
        "error: 'review serve' needs jinja2, which is not installed: "
        "pip install 'evolving-agent[review]'"
    )
