"""Where the suite's temporary files go (``tests/helpers/ramdisk.py``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.helpers import ramdisk


@pytest.fixture
def shm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for /dev/shm that counts as a tmpfs with room; TMPDIR unset."""
    monkeypatch.setattr(ramdisk, "SHM", tmp_path)
    monkeypatch.setattr(ramdisk, "_is_tmpfs", lambda path: path == tmp_path)
    monkeypatch.setattr(ramdisk, "ROOM", 1)
    # Set, then removed: monkeypatch records a variable only if it touches one that exists,
    # and teardown must put back (or remove) what the code under test sets directly.
    for name in ("TMPDIR", "EA_TESTS_DISK_TEMP"):
        monkeypatch.setenv(name, "recorded")
        monkeypatch.delenv(name)
    monkeypatch.setattr(tempfile, "tempdir", None)
    return tmp_path


def test_a_private_folder_becomes_every_childs_tmpdir(shm: Path) -> None:
    base = ramdisk.use_ram_for_temp_files()
    assert base == shm / f"evolving-agent-tests-{os.getuid()}"
    assert os.environ["TMPDIR"] == str(base) and tempfile.gettempdir() == str(base)
    assert base.stat().st_mode & 0o777 == 0o700
    assert os.environ["EA_TESTS_DISK_TEMP"] == str(ramdisk.DISK_TEMP)


def test_a_folder_others_can_enter_is_not_used(shm: Path) -> None:
    planted = shm / f"evolving-agent-tests-{os.getuid()}"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    assert ramdisk.use_ram_for_temp_files() is None
    assert "TMPDIR" not in os.environ


def test_a_link_in_its_place_is_not_followed(
    shm: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    elsewhere.chmod(0o700)
    (shm / f"evolving-agent-tests-{os.getuid()}").symlink_to(elsewhere)
    assert ramdisk.use_ram_for_temp_files() is None


def test_a_tmpdir_the_developer_chose_is_kept(shm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(shm))
    assert ramdisk.use_ram_for_temp_files() is None
    assert os.environ["TMPDIR"] == str(shm)


def test_a_tmpfs_that_may_not_run_programs_is_not_used(
    shm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Docker mounts /dev/shm noexec; the tests run scripts they write (fake agents, editors)
    noexec = os.statvfs_result((4096, 4096, 1 << 30, 1 << 30, 1 << 30, 0, 0, 0, os.ST_NOEXEC, 255))
    monkeypatch.setattr(os, "statvfs", lambda path: noexec)
    assert ramdisk.use_ram_for_temp_files() is None
    assert "TMPDIR" not in os.environ
