"""In-process agents for the turn and executor tests: no CLI, no model, real files.

:class:`Scripted` fails with each of its errors in turn (after scribbling on
``value.txt``), then writes its value and, when the turn has a state directory, a note
there; it records what every attempt saw.  :func:`git_workspace` is a repository with
one commit of ``value.txt``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from evolving_agent.search.agents.base import Agent, TurnRequest, TurnResult


def git_in(repo: Path, *args: str) -> str:
    """``git -C repo ARGS``, with a throwaway identity; its stdout, stripped."""
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def git_workspace(path: Path, text: str = "1\n") -> str:
    """A repository at ``path`` whose one commit holds ``value.txt``; the commit id."""
    path.mkdir(parents=True)
    git_in(path, "init", "-q", "-b", "main")
    (path / "value.txt").write_text(text)
    git_in(path, "add", "value.txt")
    git_in(path, "commit", "-qm", "seed")
    return git_in(path, "rev-parse", "HEAD")


class Scripted(Agent):
    """Fails with each of ``errors`` in turn, then writes ``value`` into ``value.txt``."""

    name = "scripted"

    def __init__(self, errors: list[str], value: str = "2\n") -> None:
        self.errors = list(errors)
        self.value = value
        self.seen: list[tuple[str, str]] = []  # (session id, value.txt) per attempt

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        self.seen.append((request.session_id, (request.workspace / "value.txt").read_text()))
        if self.errors:
            (request.workspace / "value.txt").write_text("half-done\n")
            return TurnResult(session_id=request.session_id, error=self.errors.pop(0))
        (request.workspace / "value.txt").write_text(self.value)
        if request.state_dir is not None:
            note = request.state_dir / "scripted" / f"{request.session_id}.txt"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"wrote {self.value}")
        return TurnResult(session_id=request.session_id, message="done")
