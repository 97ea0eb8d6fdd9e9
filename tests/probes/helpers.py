"""Shared pieces of the probe tests: the fake models as commands, a tree hash."""

from __future__ import annotations

import hashlib
import shlex
import sys
from pathlib import Path

FAKES = Path(__file__).with_name("_fake_models.py")


def fake(mode: str) -> str:
    """The ``--reflector-cmd`` of a fake model."""
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKES))} {mode}"


def tree_hash(top: Path) -> str:
    """sha256 over every path, mode and content under ``top`` (links not followed)."""
    h = hashlib.sha256()
    for path in sorted(top.rglob("*")):
        h.update(str(path.relative_to(top)).encode() + b"\0")
        h.update(str(path.lstat().st_mode).encode() + b"\0")
        if path.is_file() and not path.is_symlink():
            h.update(path.read_bytes())
    return h.hexdigest()
