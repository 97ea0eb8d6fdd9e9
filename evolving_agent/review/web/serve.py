"""Serving the page: one socket on a loopback address, one printed address, until Ctrl-C.

The address is drawn at random from 127.0.0.0/8 for each run (Linux routes all of it to
the loopback interface): cookies are isolated by host but not by port, so the page's
session cookie, set by ``127.A.B.C``, never goes to a development server on
``127.0.0.1`` or on any other address.  Where the system refuses such an address (some
BSDs and macOS route only 127.0.0.1), it falls back to 127.0.0.1 and says so.  The
socket is bound before anything is printed, so the address is the one being served
(``--port 0``, the default, lets the system choose a free port).

``--open`` never puts the token on a command line (``ps`` shows every process's
arguments to every local user): the browser is given a private file (0600, in a 0700
directory) that redirects once to the address; the file is removed when the token is
exchanged, or when the server stops.
"""

from __future__ import annotations

import errno
import os
import secrets
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from evolving_agent.paths import MemoryRoot
from evolving_agent.review.web.app import Settings, create_app

HOST = "127.0.0.1"  # the fallback; never another interface: the page decides identity


def random_loopback() -> str:
    """A loopback address of 127.0.0.0/8 other than 127.0.0.1, drawn afresh each run."""
    while True:
        a, b, c = secrets.randbelow(256), secrets.randbelow(256), 1 + secrets.randbelow(254)
        if (a, b, c) != (0, 0, 1):
            return f"127.{a}.{b}.{c}"


def bind(port: int, host: str = HOST) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def bind_own_address(port: int) -> tuple[socket.socket, str | None]:
    """A socket on a random loopback address (and None), or on 127.0.0.1 with the note
    saying why the page's cookie is then shared with other servers there."""
    host = random_loopback()
    try:
        return bind(port, host), None
    except OSError as exc:
        if exc.errno not in (errno.EADDRNOTAVAIL, errno.EINVAL):
            raise
    return bind(port, HOST), (
        f"note: this system serves no loopback address but 127.0.0.1 ({host} refused), so "
        "the page's cookie also reaches other servers on 127.0.0.1 while it runs"
    )


def open_file(url: str) -> Path:
    """A private file (0600 in a 0700 directory) that sends a browser to ``url`` once."""
    folder = Path(tempfile.mkdtemp(prefix="ea-review-"))  # 0700, owned by this user
    path = folder / "open.html"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(
            '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
            f'<meta http-equiv="refresh" content="0;url={url}"><title>review</title>'
        )
    return path


def remove_open_file(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
        path.parent.rmdir()
    except OSError:
        pass


def serve(
    root: MemoryRoot,
    *,
    port: int,
    approver: str,
    announce: Callable[[str], None],
    open_browser: Callable[[str], bool] | None = None,
    note: Callable[[str], None] = lambda _line: None,
) -> None:
    """Serve the review page for ``root`` until interrupted; ``announce`` gets the URL.

    ``open_browser`` (for ``--open``) is given a ``file://`` URL of a private file, never
    the token; it returns whether a browser was started, and ``note`` says so if not."""
    import uvicorn

    sock, fallback = bind_own_address(port)
    host, bound = sock.getsockname()[:2]
    settings = Settings(root=root, port=bound, approver=approver, host=host)
    if fallback:
        note(fallback)
    config = uvicorn.Config(
        create_app(settings),
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        date_header=False,
    )
    server = uvicorn.Server(config)
    announce(settings.url)
    opened: Path | None = None
    if open_browser is not None:
        opened = open_file(settings.url)
        settings.on_exchange = lambda: remove_open_file(opened) if opened else None
        file_url, given = opened.as_uri(), opened

        def start() -> None:
            # In a thread: a $BROWSER command may run until the browser is closed, and
            # the page must be served meanwhile (it is what the browser asks for).
            if not open_browser(file_url):
                remove_open_file(given)
                note(
                    "no browser could be started (set $BROWSER, or open the address "
                    "above yourself); the token was put on no command line"
                )

        threading.Thread(target=start, name="open-browser", daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # uvicorn re-raises the Ctrl-C it handled once it has shut down; stopping the
        # page is the normal way to end it, not a failure.
        pass
    finally:
        sock.close()
        if opened is not None:
            remove_open_file(opened)
