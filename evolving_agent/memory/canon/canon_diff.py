"""Canon diffs: one change to one list of ``canon/identity.yaml``, and applying it.

A diff is proposed by the weekly job, queued by the monthly job and approved by the
human (see :mod:`evolving_agent.review`), and re-applied by ``verify`` to check that a
monthly commit holds exactly the approved change; so the model and its application live
here, below both.

Applying keeps the file the human's.
The file is loaded as a ruamel.yaml round-trip tree, the one list is changed in place
and the tree is dumped with the indentation guessed from the file, so comments, key
order, quoting and layout survive.  ruamel keeps the comment lines that follow a list
item (typically the comment heading the *next* section) on that item, so appending
after it or removing it would move or drop that comment; :func:`_move_tail` hands
such comment lines over to the new last item.  The result is parsed back and checked
against the expected lists before anyone writes it.
"""

from __future__ import annotations

import difflib
import io
from collections import Counter
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.yamlio import parse_yaml, validate
from evolving_agent.memory.canon.canon import Identity
from evolving_agent.records import record

if TYPE_CHECKING:
    # ruamel is imported when a diff is applied: listing or showing reviews, and every
    # command that only carries a CanonDiff, never needs it (yamlio says why).
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedSeq
    from ruamel.yaml.tokens import CommentToken

CANON_FILE = "canon/identity.yaml"
SCHEMA_VERSION = 1

Section = Literal["values", "self_understanding", "habits"]
Op = Literal["add", "remove", "replace"]


class CanonDiff(BaseModel):
    """One change to one list entry of Canon's identity."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = Field(SCHEMA_VERSION, le=SCHEMA_VERSION)
    section: Section
    op: Op
    text: str = ""  # the new entry (add / replace)
    old_text: str | None = None  # the entry removed or replaced

    @model_validator(mode="after")
    def _complete(self) -> CanonDiff:
        if self.op in ("add", "replace") and not self.text.strip():
            raise ValueError(f"a '{self.op}' diff needs text")
        if self.op in ("remove", "replace") and not (self.old_text or "").strip():
            raise ValueError(f"a '{self.op}' diff needs old_text")
        return self


@record(frozen=True)
class AppliedDiff:
    """The identity text before and after one diff, and how much it removes."""

    before: str
    after: str
    entries_before: int
    removed: int  # entries of the old identity no longer present (a replace removes one)

    @property
    def removed_fraction(self) -> float:
        return self.removed / self.entries_before if self.entries_before else 0.0


def _yaml_for(text: str) -> YAML:
    """A round-trip dumper that writes lists the way this file already does."""
    from ruamel.yaml import YAML
    from ruamel.yaml.util import load_yaml_guess_indent

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    indent, offset = 4, 2
    try:
        _data, guessed, guessed_offset = load_yaml_guess_indent(text)
        if guessed is not None and guessed_offset is not None and guessed >= guessed_offset + 2:
            indent, offset = guessed, guessed_offset
    except Exception:  # noqa: BLE001 - guessing is best effort; parse_yaml reports real errors
        pass
    yaml.indent(mapping=2, sequence=indent, offset=offset)
    return yaml


def _comment(value: str, column: int) -> CommentToken:
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    return CommentToken(value, CommentMark(column))


def _split(value: str) -> tuple[str, str]:
    """Split an item's trailing comment into its end-of-line part and the lines after it."""
    eol, nl, rest = value.partition("\n")
    return eol, nl + rest


def _tail_of(seq: CommentedSeq, idx: int) -> str:
    """Remove and return the comment lines after item ``idx`` (keeping its EOL comment)."""
    entry = seq.ca.items.get(idx)
    if not entry or entry[0] is None:
        return ""
    eol, rest = _split(entry[0].value)
    if eol.strip():
        entry[0] = _comment(eol + "\n", entry[0].column or 0)
    else:
        del seq.ca.items[idx]
    return rest if rest.strip() else ""


def _give_tail(seq: CommentedSeq, idx: int, tail: str) -> None:
    """Attach comment lines ``tail`` (starting with the line end) after item ``idx``."""
    if not tail:
        return
    entry = seq.ca.items.get(idx)
    if entry and entry[0] is not None:
        eol, rest = _split(entry[0].value)
        entry[0] = _comment(eol + rest + tail[1:], entry[0].column or 0)
    else:
        seq.ca.items.setdefault(idx, [None, None, None, None])[0] = _comment(tail, 0)


def _keep_on_empty(seq: CommentedSeq, tail: str) -> None:
    """An emptied list is written ``[]``; the comment lines after it stay after it."""
    seq.fa.set_flow_style()
    if tail:
        seq.ca.comment = [_comment(tail, 0), None]


def _shift_eol(seq: CommentedSeq, idx: int, old: str, new: str) -> None:
    """Keep an end-of-line comment the same distance from a replaced entry."""
    entry = seq.ca.items.get(idx)
    if entry and entry[0] is not None and entry[0].value.lstrip(" ").startswith("#"):
        column = max(0, (entry[0].column or 0) + len(new) - len(old))
        entry[0] = _comment(entry[0].value, column)


def _find(seq: list[Any], text: str, section: str) -> int:
    for i, item in enumerate(seq):
        if str(item) == text:
            return i
    raise InvalidInput(
        f"{section}: the entry {text!r} is not in Canon (it changed since the review was "
        "proposed); edit the review with 'evolving-agent review edit' or reject it",
        file=CANON_FILE,
    )


def _expected(identity: Identity, diff: CanonDiff) -> list[str]:
    items = list(getattr(identity, diff.section))
    if diff.op == "add":
        if diff.text in items:
            raise InvalidInput(
                f"{diff.section}: {diff.text!r} is already in Canon", file=CANON_FILE
            )
        return [*items, diff.text]
    idx = _find(items, diff.old_text or "", diff.section)
    if diff.op == "remove":
        return items[:idx] + items[idx + 1 :]
    return items[:idx] + [diff.text] + items[idx + 1 :]


def _entries(identity: Identity) -> Counter[str]:
    return Counter(identity.values + identity.self_understanding + identity.habits)


def apply_diff(text: str, diff: CanonDiff) -> AppliedDiff:
    """The identity text with ``diff`` applied.  Raises InvalidInput if it cannot apply."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    data = parse_yaml(text, file=CANON_FILE)
    before = validate(Identity, data, file=CANON_FILE)
    expected = _expected(before, diff)
    if not isinstance(data, CommentedMap):
        raise InvalidInput("the top level must be a mapping", file=CANON_FILE)
    seq = data.get(diff.section)
    if not isinstance(seq, CommentedSeq):
        seq = CommentedSeq()
        data[diff.section] = seq
    if diff.op == "add":
        last = len(seq) - 1
        seq.append(diff.text)
        if last >= 0:
            _give_tail(seq, last + 1, _tail_of(seq, last))
        else:  # an empty ``[]`` list becomes a block list again, keeping what followed it
            seq.fa.set_block_style()
            after = seq.ca.comment[0] if seq.ca.comment else None
            seq.ca.comment = None
            if after is not None:
                _give_tail(seq, 0, after.value)
    else:
        idx = _find(seq, diff.old_text or "", diff.section)
        if diff.op == "replace":
            _shift_eol(seq, idx, str(seq[idx]), diff.text)
            seq[idx] = diff.text
        else:
            last = len(seq) - 1
            tail = _tail_of(seq, idx)
            del seq[idx]
            if seq and idx > 0:
                _give_tail(seq, idx - 1, tail)  # comment lines between items stay in place
            elif not seq:
                _keep_on_empty(seq, tail)
    buf = io.StringIO()
    _yaml_for(text).dump(data, buf)
    after_text = buf.getvalue()
    after = validate(Identity, parse_yaml(after_text, file=CANON_FILE), file=CANON_FILE)
    if getattr(after, diff.section) != expected:  # never write what we did not mean
        raise InvalidInput(f"{diff.section}: applying the diff gave an unexpected result")
    removed = sum((_entries(before) - _entries(after)).values())
    return AppliedDiff(text, after_text, before.entries(), removed)


def unified(before: str, after: str, path: str = CANON_FILE) -> str:
    """A unified diff of two versions of a Canon file, as ``git diff`` would label it."""
    lines = difflib.unified_diff(
        before.splitlines(True), after.splitlines(True), f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def describe(diff: CanonDiff) -> str:
    """One line saying what a diff does."""
    if diff.op == "add":
        return f"add to {diff.section}: {diff.text!r}"
    if diff.op == "remove":
        return f"remove from {diff.section}: {diff.old_text!r}"
    return f"replace in {diff.section}: {diff.old_text!r} -> {diff.text!r}"
