"""Serving the page: one socket on 127.0.0.1, one printed address, until Ctrl-C.

The socket is bound before anything is printed, so the port in the address is the port
being served (``--port 0``, the default, lets the system choose a free one).
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from evolving_agent.paths import MemoryRoot
from evolving_agent.review.web.app import Settings, create_app

HOST = "127.0.0.1"  # never another interface: the page decides what becomes identity


def bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(
    root: MemoryRoot,
    *,
    port: int,
    approver: str,
    announce: Callable[[str], None],
) -> None:
    """Serve the review page for ``root`` until interrupted; ``announce`` gets the URL."""
    import uvicorn

    sock = bind(port)
    settings = Settings(root=root, port=sock.getsockname()[1], approver=approver)
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
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # uvicorn re-raises the Ctrl-C it handled once it has shut down; stopping the
        # page is the normal way to end it, not a failure.
        pass
    finally:
        sock.close()
