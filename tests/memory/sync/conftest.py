"""The sync tests' devices, built once per module by ``tests.helpers.sync``, copied per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.paths import MemoryRoot
from tests.helpers.sync import copy_two_devices, two_devices


@pytest.fixture(scope="module")
def _two_devices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return two_devices(tmp_path_factory.mktemp("two-devices"))


@pytest.fixture
def remote(tmp_path: Path, _two_devices: Path) -> Path:
    return copy_two_devices(_two_devices, tmp_path)


@pytest.fixture
def laptop(tmp_path: Path, remote: Path) -> MemoryRoot:
    return MemoryRoot(tmp_path / "laptop")


@pytest.fixture
def desktop(tmp_path: Path, remote: Path, laptop: MemoryRoot) -> MemoryRoot:
    return MemoryRoot(tmp_path / "desktop")
