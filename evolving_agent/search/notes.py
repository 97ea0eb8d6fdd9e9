"""The keep-notes arm's shared notes file: what forgetting throws away, kept.

Under ``--policy keep-notes`` every agent of the team reads and writes one notes file
for the whole run (CORAL's shared notes): ``$EA_NOTES`` names it, every prompt says
where it is, and under bwrap its folder is bound read-write into every agent's
sandbox.  The folder lives beside the private workspaces (``$EA_WORKSPACES``, default
``$TMPDIR``), as ``ea-notes-KEY`` -- never inside the run directory, so an agent still
does not learn where the run's records are -- and a round boundary leaves it alone
(the workspaces go; the notes stay).  A copy is saved as ``notes.md`` in the run
directory at every round's end and at the run's end, when the folder is removed; a
resume whose folder is gone (a reboot cleared ``/tmp``) restores it from that copy.

The forgetting policies never get a notes file: nothing here runs for them.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

from evolving_agent.fsio import write_atomic
from evolving_agent.search.agents.base import TurnRequest
from evolving_agent.search.private import WORKSPACES_VAR, run_key
from evolving_agent.search.sandbox import Sandbox

NOTES_VAR = "EA_NOTES"
NOTES_FILE = "NOTES.md"
SAVED = "notes.md"  # the copy in the run directory
HEADER = "# Team notes (shared by every agent, kept across rounds)\n"


def notes_folder(run_dir: Path) -> Path:
    """Where the run's notes live while it runs (the same path on resume)."""
    base = Path(os.environ.get(WORKSPACES_VAR) or tempfile.gettempdir())
    return base / f"ea-notes-{run_key(run_dir)}"


def open_notes(run_dir: Path) -> Path:
    """The notes file, made (0700 folder) or restored from the run's saved copy."""
    folder = notes_folder(run_dir)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    path = folder / NOTES_FILE
    if not path.is_file():
        saved = Path(run_dir) / SAVED
        path.write_bytes(saved.read_bytes() if saved.is_file() else HEADER.encode())
    return path


def save_notes(run_dir: Path) -> None:
    """Copy the notes into the run directory (``notes.md``)."""
    path = notes_folder(run_dir) / NOTES_FILE
    if path.is_file() and not path.is_symlink():
        write_atomic(Path(run_dir) / SAVED, path.read_bytes())


def close_notes(run_dir: Path) -> None:
    """Save the notes and remove their folder: nothing of the run stays outside it."""
    save_notes(run_dir)
    shutil.rmtree(notes_folder(run_dir), ignore_errors=True)


def notes_sandbox(sandbox: Sandbox, notes: Path) -> Sandbox:
    """The agents' sandbox with the notes folder bound read-write."""
    return dataclasses.replace(sandbox, rw=(*sandbox.rw, str(notes.parent)))


def with_notes(request: TurnRequest, notes: Path) -> TurnRequest:
    """A turn's request that names the notes file (prompt and ``$EA_NOTES``)."""
    hint = (
        f"\nShared team notes, kept across rounds (every agent reads and writes them): "
        f"{notes} (also ${NOTES_VAR}). Read them first; append what you tried and "
        "learned.\n"
    )
    return dataclasses.replace(
        request, prompt=request.prompt + hint, env={**request.env, NOTES_VAR: str(notes)}
    )
