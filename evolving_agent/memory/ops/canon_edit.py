"""The human's own Canon edit (``canon edit``): validated, written and committed.

The edit goes through the writer as ``human``, so it is validated by the one Canon
validator (:func:`evolving_agent.memory.canon.canon.check_canon_text`) and committed with
provenance like any other Canon write.  An edit the writer refuses is not lost: its
text is kept in ``.ea/rejected-<name>`` and the error says where, so every front end
(not only the CLI) keeps the person's work.
"""

from __future__ import annotations

from pathlib import Path

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.authority import Writer, confine
from evolving_agent.memory.base.atomic import atomic_write, mkdirs_private
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.canon import check_canon_text
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot


class EditRefused(InvalidInput):
    """An invalid Canon edit: nothing was written, and the edited text is in ``kept``.

    The message names ``kept`` and the line in it: the line is in the edited text, not in
    the Canon file, which the refusal left untouched.
    """

    def __init__(self, cause: InvalidInput, kept: Path) -> None:
        message = str(cause)
        if cause.file is not None:
            where = cause.file + (f":{cause.line}" if cause.line is not None else "") + ": "
            message = message.removeprefix(where)
        super().__init__(message, file=kept, line=cause.line)
        self.kept = kept


def rescue_file(root: MemoryRoot, relpath: str) -> Path:
    """Where a refused edit of ``canon/<relpath>`` is kept."""
    return root.state / f"rejected-{Path(relpath).name}"


def edit_start(root: MemoryRoot, relpath: str) -> tuple[str, Path | None]:
    """What ``canon edit`` opens: a refused edit still kept (and where), else the file."""
    kept = rescue_file(require_root(root), relpath)
    if kept.is_file():
        return kept.read_text(encoding="utf-8"), kept
    return canon_text(root, relpath), None


def canon_text(root: MemoryRoot, relpath: str) -> str:
    """What an edit of ``canon/<relpath>`` starts from: the file on disk, hand edits included."""
    path = confine(require_root(root), "canon", relpath)
    return path.read_text(encoding="utf-8") if path.exists() else ""


def save_canon(root: MemoryRoot, relpath: str, text: str, *, message: str = "") -> bool:
    """The human's own Canon change: validated, written and committed through the writer.

    Returns False (and writes nothing) when the text equals the last committed version
    and the file on disk is that version too.  Raises :class:`EditRefused` (nothing
    written, the text kept in :func:`rescue_file`) when the edit is invalid.
    """
    require_root(root)
    try:
        target = confine(root, "canon", relpath)
        check_canon_text(root, relpath, text)
        data = text.encode("utf-8")
        on_disk = target.read_bytes() if target.exists() else None
        committed = gitrepo.committed_blob(root, f"canon/{relpath}")
        if on_disk == data and committed == gitrepo.blob_sha(data):
            rescue_file(root, relpath).unlink(missing_ok=True)  # nothing left to rescue
            return False
        Writer(root, "human").write(
            "canon", relpath, text, message=message or f"human edited canon/{relpath}"
        )
        rescue_file(root, relpath).unlink(missing_ok=True)  # the kept edit made it in
    except InvalidInput as exc:
        kept = rescue_file(root, relpath)
        mkdirs_private(kept.parent)
        atomic_write(kept, text.encode("utf-8"), base=kept.parent)
        raise EditRefused(exc, kept) from exc
    return True
