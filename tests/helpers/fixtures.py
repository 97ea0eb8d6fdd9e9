"""The shapes of the shared session fixtures in ``tests/conftest.py``, importable by tests.

``conftest.py`` builds them once per session (one MCP server, one lived month, one kept
demo); tests name their types from here, never by importing ``conftest``.
"""

from __future__ import annotations

import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from mcp import ClientSession

    from evolving_agent.jobs.simulate import SimulationResult
    from evolving_agent.paths import MemoryRoot

T = TypeVar("T")


@dataclass
class McpServer:
    """A real ``evolving-agent --root ROOT mcp`` process and an SDK client session to it.

    Tests share the server and its root, so each one checks what its own calls changed
    (new records, its own keys and texts), never the root's totals.
    """

    root: MemoryRoot
    stderr_log: Path
    _portal: Any
    _session: ClientSession

    def call(self, body: Callable[[ClientSession], Awaitable[T]]) -> T:
        """Run ``body(session)`` on the server's event loop; returns its result."""
        result: T = self._portal.call(body, self._session)
        return result


@dataclass(frozen=True)
class LivedMonth:
    """A root that lived October 2026 through the simulator (read-only: copy to change)."""

    path: Path
    result: SimulationResult
    progress: list[str]  # what the simulator reported, day by day


@dataclass(frozen=True)
class KeptDemo:
    """``evolving-agent demo --keep DIR`` run once, as a real process (read-only: copy it)."""

    directory: Path
    stdout: str


def copy_tree(source: Path, target: Path) -> Path:
    """A private copy of a shared root or demo (git history and all) to change freely."""
    shutil.copytree(source, target, symlinks=True)
    return target
