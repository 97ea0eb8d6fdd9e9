"""Named errors and exit codes, in one place.

Every subsystem raises one of the exceptions below; each builds its own message
from the facts it was given (actor, layer, path, file, line).  The CLI maps them
to exit codes in exactly one place (``evolving_agent.cli.main``) and prints the
message on one line.  Set ``EVOLVING_AGENT_RAISE=1`` to see the traceback instead.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False  # boot's fast path imports this module, not typing (mypy: typing's)
if TYPE_CHECKING:
    from pydantic import ValidationError

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_DENIED = 3
EXIT_INVALID = 4
EXIT_TAMPERED = 5
EXIT_INTERRUPTED = 130  # 128 + SIGINT: what shells report for a command ended by Ctrl-C


class EvolvingAgentError(Exception):
    """Base class: a failure the user should read about, not a bug."""

    exit_code = EXIT_FAILURE


class UsageError(EvolvingAgentError):
    """The command was called wrongly (bad option value, missing argument)."""

    exit_code = EXIT_USAGE


class WriteDenied(EvolvingAgentError):
    """The authority policy refuses this actor a write to this layer."""

    exit_code = EXIT_DENIED

    def __init__(self, actor: str, layer: str, relpath: str, reason: str = "") -> None:
        self.actor = actor
        self.layer = layer
        self.relpath = relpath
        self.reason = reason
        why = f": {reason}" if reason else ""
        super().__init__(f"write denied: actor '{actor}' may not write {layer}/{relpath}{why}")


class ReadOutOfScope(EvolvingAgentError):
    """A job tried to read outside its read scope (the slow clock)."""

    exit_code = EXIT_DENIED

    def __init__(self, actor: str, layer: str, detail: str = "") -> None:
        self.actor = actor
        self.layer = layer
        extra = f" ({detail})" if detail else ""
        super().__init__(f"read denied: actor '{actor}' may not read layer '{layer}'{extra}")


class InvalidInput(EvolvingAgentError):
    """Malformed file, failed validation, bad id or bad path.  Names where it is."""

    exit_code = EXIT_INVALID

    def __init__(self, message: str, *, file: Path | str | None = None, line: int | None = None):
        self.file = str(file) if file is not None else None
        self.line = line
        where = ""
        if self.file is not None:
            where = self.file + (f":{line}" if line is not None else "") + ": "
        super().__init__(where + message)


class InvalidPath(InvalidInput):
    """A relative path that would leave its layer (``..``, absolute, escaping symlink)."""

    def __init__(self, layer: str, relpath: str, reason: str) -> None:
        self.layer = layer
        self.relpath = relpath
        super().__init__(f"invalid path {relpath!r} for layer '{layer}': {reason}")


class NotFound(InvalidInput):
    """An id or name that does not exist (unknown review, hypothesis, run)."""


class MissingExtra(EvolvingAgentError):
    """A feature needs an optional dependency that is not installed (see ``extras.py``).

    Exit 4 like other input the user can fix: the fix is one ``pip install``.
    """

    exit_code = EXIT_INVALID

    def __init__(self, feature: str, extra: str, library: str) -> None:
        self.feature = feature
        self.extra = extra
        self.library = library
        super().__init__(
            f"{feature} needs {library}, which is not installed: "
            f"pip install 'evolving-agent[{extra}]'"
        )


class TamperingFound(EvolvingAgentError):
    """``verify`` found evidence of edits made behind the writer's back."""

    exit_code = EXIT_TAMPERED

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"verify found {len(problems)} problem(s):\n" + "\n".join(problems))


def first_error(exc: ValidationError, *, whole: str = "", bare: bool = False) -> str:
    """The first error of a pydantic validation as one line: ``field.path: message``.

    The one formatter for validation errors shown to a person.  ``whole`` names the
    thing when the error concerns all of it (an empty location), e.g. ``(record)``;
    ``bare`` drops pydantic's ``Value error, `` prefix from a validator's own message.
    """
    first = exc.errors()[0]
    msg = str(first["msg"])
    if bare:
        msg = msg.removeprefix("Value error, ")
    field = ".".join(str(part) for part in first["loc"]) or whole
    return f"{field}: {msg}" if field else msg
