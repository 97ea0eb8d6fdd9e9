"""Prompt files: editable by the user, under the memory root's ``crons/`` folder.

The defaults ship inside the package (``evolving_agent/data/crons/``, mirrored in the
repository's top-level ``crons/``).  On first use a job copies any missing default into
``<root>/crons/``; from then on the user's copy is the prompt, edits and all.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.atomic import atomic_write, read_plain
from evolving_agent.paths import MemoryRoot

PROMPT_JOBS = ("nightly", "weekly")


def default_prompt(job: str) -> str:
    return (resources.files("evolving_agent") / "data" / "crons" / f"{job}.md").read_text(
        encoding="utf-8"
    )


def prompts_dir(root: MemoryRoot) -> Path:
    return root.real / "crons"


def ensure_prompts(root: MemoryRoot) -> Path:
    """Copy missing default prompts into ``<root>/crons/``; never overwrite an edit.

    A symlinked ``crons/`` (say ``crons -> canon``) is refused, never written through.
    """
    folder = prompts_dir(root)
    for job in PROMPT_JOBS:
        if read_plain(root.real, ("crons", f"{job}.md")) is None:
            atomic_write(folder / f"{job}.md", default_prompt(job).encode("utf-8"), base=root.real)
    return folder


def prompt_loader(root: MemoryRoot) -> Callable[[str], str]:
    """A function job -> prompt template text, reading the root's editable copy."""

    def load(job: str) -> str:
        path = ensure_prompts(root) / f"{job}.md"
        try:
            return (read_plain(root.real, ("crons", f"{job}.md")) or b"").decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput("prompt file is not UTF-8 text", file=path) from None

    return load
