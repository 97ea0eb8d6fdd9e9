"""The one atomic file writer (``evolving_agent/fsio.py``), used by memory and search."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from evolving_agent import fsio
from evolving_agent.fsio import write_atomic
from evolving_agent.search.state import write_json_atomic


def test_it_replaces_a_file_whole_creating_missing_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "run.json"
    write_atomic(target, b"old\n")
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["run.json"]  # no temp left


def test_the_mode_argument_sets_the_new_files_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "private", b"x", mode=0o600)
        write_atomic(tmp_path / "shared", b"x", mode=0o644)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o644


def test_a_failed_rename_keeps_the_old_entry_and_leaves_no_temp_file(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "inside").write_text("keep")
    with pytest.raises(OSError):
        write_atomic(tmp_path / "busy", b"new")  # a non-empty directory cannot be replaced
    assert (tmp_path / "busy" / "inside").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy"]


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (tmp_path / "link").symlink_to(victim)
    write_atomic(tmp_path / "link", b"new")
    assert victim.read_text() == "untouched"
    assert not (tmp_path / "link").is_symlink()
    assert (tmp_path / "link").read_bytes() == b"new"


def test_search_json_goes_through_it(tmp_path: Path) -> None:
    write_json_atomic(tmp_path / "run" / "seed.json", {"score": 1.5, "path": tmp_path})
    assert (tmp_path / "run" / "seed.json").read_text(encoding="utf-8") == (
        f'{{\n  "score": 1.5,\n  "path": "{tmp_path}"\n}}\n'
    )


def test_a_setgid_directory_passes_its_group_bits_on_whatever_the_umask(tmp_path: Path) -> None:
    # The OS-user deployment (memory/deploy.py): a file the assistant's user makes in a
    # shared directory must stay readable and writable by the human's group.
    shared, private = tmp_path / "shared", tmp_path / "private"
    shared.mkdir()
    private.mkdir()
    shared.chmod(0o2770)
    private.chmod(0o700)
    old = os.umask(0o077)
    try:
        write_atomic(shared / "a.json", b"{}")
        write_atomic(private / "a.json", b"{}")
    finally:
        os.umask(old)
    assert (shared / "a.json").stat().st_mode & 0o777 == 0o660
    assert (private / "a.json").stat().st_mode & 0o777 == 0o600
    assert fsio.shared_mode(0o2750, 0o600) == 0o640  # a read-only group reads only
    assert fsio.shared_mode(0o0770, 0o600) == 0o600  # no setgid bit: not a shared directory
    assert fsio.shared_dir_mode(0o3770, 0o700) == 0o3770
