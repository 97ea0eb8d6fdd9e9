"""Everything the CLI prints goes through here: neutralised, and paged when long.

:func:`echo` is ``click.echo`` with :func:`evolving_agent.textsafe.neutralise` applied,
so no command can print a control sequence that came from the root (a friction text,
a commit message, a Live Bus note), on a terminal or not.  The command modules use it
instead of ``click.echo``; a test checks that none calls ``click.echo`` itself.

:func:`paged` sends a long view through a pager the way git does: only when stdout
is a terminal, ``$PAGER`` (default ``less``) with ``LESS=FRX`` unless the user set
``LESS`` (quit if it fits one screen, raw colour codes only — there are none left
after neutralising, keep the screen), and never with ``--no-pager`` or
``PAGER=cat``, nor when input is already waiting in the terminal (lines pasted after
the command): a pager would read them as its keystrokes and the shell would never run
them.  :func:`typed_ahead` is that check, shared with the prompts.
"""

from __future__ import annotations

import functools
import io
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from evolving_agent.textsafe import neutralise

_buffer: list[str] | None = None


def echo(message: object = None, *, nl: bool = True, err: bool = False) -> None:
    """Print ``message`` (stdout, or stderr with ``err``) with unsafe characters shown."""
    text = "" if message is None else str(message)
    text = neutralise(text)
    if _buffer is not None and not err:
        _buffer.append(text + ("\n" if nl else ""))
        return
    click.echo(text, nl=nl, err=err)


F = TypeVar("F", bound=Callable[..., Any])


def typed_ahead() -> int:
    """Bytes already typed (or pasted) into the terminal and not yet read; 0 when stdin is
    no terminal.  Counted without reading them: a read would take them from the shell."""
    import fcntl
    import struct
    import termios

    try:
        if not os.isatty(sys.stdin.fileno()):
            return 0
        raw = fcntl.ioctl(sys.stdin.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return 0  # not a real file (tests, embedding programs): nothing is waiting
    waiting: int = struct.unpack("i", raw)[0]
    return waiting


def _no_pager() -> bool:
    ctx = click.get_current_context(silent=True)
    top = ctx.find_root() if ctx is not None else None
    return bool(top is not None and (top.obj or {}).get("no_pager"))


def _pager_command() -> list[str] | None:
    raw = os.environ.get("EVOLVING_AGENT_PAGER", os.environ.get("PAGER", "less"))
    try:
        cmd = shlex.split(raw)
    except ValueError:
        return None
    if not cmd or cmd[0] == "cat" or shutil.which(cmd[0]) is None:
        return None
    return cmd


def _show(text: str) -> None:
    cmd = _pager_command()
    rows = shutil.get_terminal_size((80, 24)).lines
    if cmd is None or text.count("\n") < rows - 1:
        click.echo(text, nl=False)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")  # as git: quit on one screen, raw colours, keep screen
    env.setdefault("LV", "-c")
    from evolving_agent.process import feed_interactive  # only a paged view pays for it

    if not feed_interactive(cmd, text, env=env):
        click.echo(text, nl=False)


def paged(fn: F) -> F:
    """Decorate a command whose output may be long: it is shown through a pager on a
    terminal (see the module docstring), printed as it is otherwise."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _buffer
        if _buffer is not None or _no_pager() or not sys.stdout.isatty() or typed_ahead():
            return fn(*args, **kwargs)
        _buffer = []
        try:
            return fn(*args, **kwargs)
        finally:
            text, _buffer = "".join(_buffer), None
            _show(text)

    return wrapper  # type: ignore[return-value]
