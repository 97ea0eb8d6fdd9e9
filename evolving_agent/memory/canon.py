"""Canon: the assistant's identity, written by the human (or an approved review).

``canon/identity.yaml`` is the structured part (validated, comments preserved);
``canon/*.md`` are free Markdown notes the human keeps; ``canon/policy.yaml`` is the
authority override (see :mod:`policy`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.memory.yamlio import parse_yaml, validate
from evolving_agent.paths import MemoryRoot

IDENTITY_FILE = "identity.yaml"

IDENTITY_TEMPLATE = """\
# Canon: who this assistant is.  Only you (the human) edit this file, or a monthly
# review you approved.  Keep entries short; each list item is one entry.
schema_version: 1

# What the assistant is called.
name: Assistant

# One or two sentences the assistant should never lose.
description: A careful, direct assistant that grows into its user's habits slowly.

# Values, most important first.
values:
  - Say what I know and what I don't.
  - Answer the question that was asked.

# How the assistant understands itself (stable, slow to change).
self_understanding:
  - I tend to offer options the user did not ask for.

# Habits the user wants kept.  Approved weekly proposals usually land here.
habits:
  - Lead with the answer, then the reasoning.
"""

POLICY_TEMPLATE = """\
# Authority policy override.  Only the human can change this file (it is in Canon).
# The defaults live in code (evolving_agent/memory/policy.py); list a layer here to
# replace who may write it.  Canon is always human, or monthly with an approved review.
schema_version: 1
# write:
#   live: [human, session, nightly, weekly, monthly]
#   today: [human, nightly]
review:
  # At most this many identity diffs reach Canon per calendar month.
  monthly_limit: 3
  # A diff removing more than this share of Canon's entries needs an extra confirmation.
  removal_confirm_fraction: 0.25
"""


class Identity(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(1, le=1)
    name: str = "Assistant"
    description: str = ""
    values: list[str] = Field(default_factory=list)
    self_understanding: list[str] = Field(default_factory=list)
    habits: list[str] = Field(default_factory=list)

    def entries(self) -> int:
        return len(self.values) + len(self.self_understanding) + len(self.habits)


def check_canon_text(root: MemoryRoot, relpath: str, text: str) -> None:
    """Validate a Canon file's new text before it is written (file and line on error)."""
    from evolving_agent.memory.policy import POLICY_FILE, PolicyFile

    path = root.canon / relpath
    if relpath == IDENTITY_FILE:
        validate(Identity, parse_yaml(text, file=path), file=path)
    elif relpath == POLICY_FILE:
        validate(PolicyFile, parse_yaml(text, file=path), file=path)
    elif relpath.endswith((".yaml", ".yml")):
        parse_yaml(text, file=path)


def save_canon(root: MemoryRoot, relpath: str, text: str, *, message: str = "") -> bool:
    """The human's own Canon change: validated, written and committed through the writer.

    Returns False (and writes nothing) when the text equals the last committed version
    and the file on disk is that version too.
    """
    from evolving_agent.memory import gitrepo
    from evolving_agent.memory.authority import Writer, confine

    target = confine(root, "canon", relpath)
    check_canon_text(root, relpath, text)
    data = text.encode("utf-8")
    on_disk = target.read_bytes() if target.exists() else None
    committed = gitrepo.committed_blob(root, f"canon/{relpath}")
    if on_disk == data and committed == gitrepo.blob_sha(data):
        return False
    Writer(root, "human").write(
        "canon", relpath, text, message=message or f"human edited canon/{relpath}"
    )
    return True
