"""Where things live.  One place resolves the memory root and every path hangs off it.

Precedence for the root: ``--root`` flag > ``$EVOLVING_AGENT_ROOT`` > ``./memory``.

Layout of a root::

    canon/        identity (YAML + Markdown) and the authority policy override
    live/         the Live Bus (keyed entries)
    today/        bias, carry-forward, hypothesis register cache
    evidence/     append-only JSON lines, one file per day (YYYY-MM-DD.jsonl)
    reviews/      proposals/ (weekly), pending/ (monthly), decisions/ (human)
    schedule.yaml cron lines for the jobs (tracked in git like Canon; the human's)
    crons/        the jobs' prompts (tracked in git like Canon; the human's)
    .ea/          private state: locks, scheduler job store
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

ROOT_ENV = "EVOLVING_AGENT_ROOT"
DEFAULT_ROOT = "memory"

# Boot's fast path imports this module: typing and dataclasses (a few ms of a session
# start) are imported only by whoever asks for the Literal types (``__getattr__`` below).
# mypy reads TYPE_CHECKING as typing's.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Layer = Literal["canon", "live", "today", "evidence"]
    # Review areas live beside the layers and are guarded by the same writer.
    ReviewArea = Literal["proposals", "pending", "decisions"]
    Area = Layer | ReviewArea  # what the writer writes to (authority's policy names these)

LAYERS: tuple[Layer, ...] = ("canon", "live", "today", "evidence")
REVIEW_AREAS: tuple[ReviewArea, ...] = ("proposals", "pending", "decisions")
AREAS: tuple[Area, ...] = LAYERS + REVIEW_AREAS


def __getattr__(name: str) -> object:
    """``Layer``, ``ReviewArea`` and ``Area`` at run time, built on first use from the tuples."""
    kinds = {"Layer": LAYERS, "ReviewArea": REVIEW_AREAS, "Area": AREAS}
    if name not in kinds:  # before typing: the import system asks for __path__ and the like
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Literal

    value = Literal[kinds[name]]  # type: ignore[valid-type]
    globals()[name] = value
    return value


def area_parts(area: str) -> tuple[str, ...]:
    """Path components of a layer or review area below the root."""
    if area in LAYERS:
        return (area,)
    if area in REVIEW_AREAS:
        return ("reviews", area)
    raise ValueError(f"unknown area {area!r}")


def resolve_root(flag: str | os.PathLike[str] | None = None) -> Path:
    """Return the memory root path by precedence flag > environment > ./memory."""
    if flag:
        return Path(flag).expanduser().absolute()
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env).expanduser().absolute()
    return (Path.cwd() / DEFAULT_ROOT).absolute()


class MemoryRoot:
    """A memory root on disk.  Cheap to build; nothing is read until asked.

    Layer paths are cached: every Evidence append asks for them, and building a
    pathlib path costs more than the rest of the bookkeeping around an fsync.

    Immutable, equal by ``path`` and hashable, as the frozen dataclass it was (written
    out: ``dataclasses`` pulls ``inspect`` into every boot).
    """

    path: Path

    def __init__(self, path: Path) -> None:
        object.__setattr__(self, "path", path)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not MemoryRoot:
            return NotImplemented
        return bool(self.path == other.path)

    def __hash__(self) -> int:
        return hash((self.path,))

    def __repr__(self) -> str:
        return f"MemoryRoot(path={self.path!r})"

    @classmethod
    def resolve(cls, flag: str | os.PathLike[str] | None = None) -> MemoryRoot:
        return cls(resolve_root(flag))

    @cached_property
    def real(self) -> Path:
        """The root with every symlink above it resolved, once.

        The root itself may live behind a symlink (``~/memory -> /data/memory``);
        nothing *inside* it may.  Confinement checks walk down from this path.
        """
        return self.path.resolve()

    def area_dir(self, area: str) -> Path:
        """Directory of a layer (``canon`` …) or review area (``proposals`` …)."""
        return self.path.joinpath(*area_parts(area))

    @cached_property
    def canon(self) -> Path:
        return self.path / "canon"

    @cached_property
    def policy_file(self) -> Path:
        """The Canon file that overrides the authority table."""
        return self.path / "canon" / "policy.yaml"

    @cached_property
    def live(self) -> Path:
        return self.path / "live"

    @cached_property
    def today(self) -> Path:
        return self.path / "today"

    @cached_property
    def evidence(self) -> Path:
        return self.path / "evidence"

    @cached_property
    def reviews(self) -> Path:
        return self.path / "reviews"

    @cached_property
    def state(self) -> Path:
        """Private state (locks, scheduler job store); never a layer."""
        return self.path / ".ea"

    @cached_property
    def schedule_file(self) -> Path:
        return self.path / "schedule.yaml"

    @cached_property
    def lock_dir(self) -> Path:
        return self.state / "locks"

    @cached_property
    def crons(self) -> Path:
        """The root's job prompts (tracked and verified like Canon; the human's)."""
        return self.path / "crons"

    def exists(self) -> bool:
        return (self.path / "canon").is_dir() and (self.path / "evidence").is_dir()


def root_problem(root: MemoryRoot) -> str | None:
    """Why ``root`` is not a memory root, in one line, or None if it is one.

    Standard library only, so the MCP server's fast start can say it before loading
    anything; ``memory.root.require_root`` raises the same words.
    """
    if root.path.is_file():
        return (
            f"no memory root at {root.path}: it is a file, not a directory "
            "(pass --root or set $EVOLVING_AGENT_ROOT to a directory)"
        )
    if not root.exists():
        return (
            f"no memory root at {root.path} (run 'evolving-agent init {root.path}' "
            "or pass --root / set $EVOLVING_AGENT_ROOT)"
        )
    return None
