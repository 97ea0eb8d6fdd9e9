"""Devices: the id each root gets, the shared register, and who writes Today."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.jobs.dispatch import run_job
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.devices import (
    NotTodayWriter,
    TodayWriter,
    device_path,
    device_status,
    known_devices,
    local_device,
    set_today_writer,
    take_today,
    today_writer,
)
from evolving_agent.memory.evidence.evidence import EvidenceLog, now
from evolving_agent.memory.root import init_root


def test_init_gives_the_root_a_stable_private_device_id(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    here = local_device(root)
    assert here.id.startswith("d-") and len(here.id) == 14
    assert local_device(root) == here  # stable: read back, never remade
    assert device_path(root).stat().st_mode & 0o077 == 0
    assert [d.id for d in known_devices(root)] == [here.id]
    # A lone root writes Today without any record saying so.
    assert today_writer(root) is None


def test_a_root_from_before_devices_gets_an_id_and_keeps_its_files(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    Writer(root, "session").append("friction", "recorded before devices existed")
    device_path(root).unlink()
    (root.state / "sync").rename(tmp_path / "gone")
    before = {p.name: p.read_bytes() for p in root.evidence.iterdir() if p.is_file()}
    here = local_device(root)
    assert here.id.startswith("d-")
    assert {p.name: p.read_bytes() for p in root.evidence.iterdir() if p.is_file()} == before
    assert [d.id for d in known_devices(root)] == [here.id]


def test_a_malformed_device_file_is_one_clear_error(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    device_path(root).write_text(
        json.dumps({"id": "laptop", "name": "x", "created": "2026-12-01T00:00:00+00:00"})
    )
    with pytest.raises(InvalidInput, match="d-<12 hex digits>"):
        local_device(root)


def test_jobs_refuse_on_a_device_that_does_not_write_today(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    set_today_writer(root, TodayWriter(device="d-000000000000", since=now()))
    with pytest.raises(NotTodayWriter) as denied:
        run_job(root, "nightly")
    assert denied.value.exit_code == 3
    assert "d-000000000000" in str(denied.value)
    assert not (root.today / "bias.md").exists()
    writer = take_today(root)
    assert writer.device == local_device(root).id
    moved = [r for r in EvidenceLog(root).iter_all() if r.kind == "sync"]
    assert moved[-1].data == {"today_writer": writer.device, "before": "d-000000000000"}
    status = device_status(root)
    assert status.today_writer is not None and status.today_writer.device == writer.device


def test_a_symlinked_devices_directory_is_never_followed(tmp_path: Path) -> None:
    # Guards the attack: evidence/devices -> elsewhere, to feed readers another "device".
    from evolving_agent.memory.verify import verify_root

    root = init_root(tmp_path / "memory")
    elsewhere = tmp_path / "elsewhere" / "d-0123456789ab"
    elsewhere.mkdir(parents=True)
    (elsewhere / "2026-12-01.jsonl").write_text("{}\n")
    (root.evidence / "devices").symlink_to(tmp_path / "elsewhere")
    assert EvidenceLog(root).device_logs() == []
    assert any("devices: is a symlink" in p for p in verify_root(root).problems)
