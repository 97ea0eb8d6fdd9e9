"""Canon: the assistant's identity, written by the human (or an approved review).

``canon/identity.yaml`` is the structured part (validated, comments preserved);
``canon/*.md`` are free Markdown notes the human keeps; ``canon/policy.yaml`` is the
authority override (see :mod:`policy`); ``canon/probes.yaml`` holds the situations that
check a model still reads the entries as meant (see :mod:`probe_file`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.yamlio import parse_yaml, validate
from evolving_agent.memory.canon.policy import POLICY_FILE, PolicyFile
from evolving_agent.memory.canon.probe_file import PROBES_FILE, check_probes_text
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
# The defaults live in code (evolving_agent/memory/canon/policy.py); list a layer here to
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
    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(1, le=1)
    name: str = "Assistant"
    description: str = ""
    values: list[str] = Field(default_factory=list)
    self_understanding: list[str] = Field(default_factory=list)
    habits: list[str] = Field(default_factory=list)

    def entries(self) -> int:
        return len(self.values) + len(self.self_understanding) + len(self.habits)


def check_canon_text(root: MemoryRoot, relpath: str, text: str | bytes) -> None:
    """Validate a Canon file's new content before it is written (file and line on error).

    The one Canon validator: the writer runs it on every Canon write, whoever the
    actor.  A broken ``identity.yaml`` would make every boot fail and a broken
    ``policy.yaml`` every write (the writer loads it first), so only a hand edit could
    repair either; other YAML files must at least parse.
    """
    path = root.canon / relpath
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput("not UTF-8 text", file=path) from None
    if relpath == IDENTITY_FILE:
        validate(Identity, parse_yaml(text, file=path), file=path)
    elif relpath == POLICY_FILE:
        validate(PolicyFile, parse_yaml(text, file=path), file=path)
    elif relpath == PROBES_FILE:
        check_probes_text(parse_yaml(text, file=path), _identity_on_disk(root), file=path)
    elif relpath.endswith((".yaml", ".yml")):
        parse_yaml(text, file=path)


def _identity_on_disk(root: MemoryRoot) -> dict[str, object] | None:
    """identity.yaml as the human sees it, for checking the probes' entry references
    (None when it is missing or invalid: its own check reports that)."""
    try:
        text = (root.canon / IDENTITY_FILE).read_text(encoding="utf-8")
        return validate(
            Identity, parse_yaml(text, file=IDENTITY_FILE), file=IDENTITY_FILE
        ).model_dump()
    except (OSError, UnicodeDecodeError, InvalidInput):
        return None
