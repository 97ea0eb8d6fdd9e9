"""Devices: one self on several machines, each appending Evidence to its own chain.

A *device* is one root of the self on one machine.  Its id (``d-`` + 12 hex digits)
is made once, at ``init`` or ``clone`` (or, for a root made before devices existed,
the first time anything asks), and kept in ``.ea/device`` (private, never synced).

Layout on disk, the same on every device:

- ``evidence/DAY.jsonl``: *this* device's chain, exactly as before devices existed.
  An existing single-device root therefore migrates without moving or rewriting a
  line: its files are its own device's chain from the start.
- ``evidence/devices/<id>/DAY.jsonl``: the chains ``sync`` received from the other
  devices, byte for byte as their writers wrote them (anchors under
  ``.ea/evidence/devices/<id>/``).  Readers see the union (``EvidenceLog.read_day``).
- ``.ea/sync/devices/<id>.json``: the device register (id, name, when it joined), shared.
- ``.ea/sync/today-writer.json``: which device writes Today (runs the nightly, weekly and
  monthly jobs).  Shared through sync; moved with ``evolving-agent device take-today``.
  (Both travel as ``sync/...`` in the synced tree; on disk they sit below ``.ea/``,
  which git already ignores, so ``git status`` stays clean.)

A device that is not the today writer refuses to run the jobs (:class:`NotTodayWriter`):
two devices writing Today would make two different tomorrows.
"""

from __future__ import annotations

import secrets
import socket
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from evolving_agent.errors import EXIT_DENIED, EvolvingAgentError, InvalidInput
from evolving_agent.gitcmd import git
from evolving_agent.memory.base.atomic import atomic_write, mkdirs_private
from evolving_agent.memory.evidence.evidence import DEVICE_RE, EvidenceDraft, EvidenceLog, now
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

SCHEMA_VERSION = 1
DEVICE_FILE = ("device",)  # below .ea/
SHARED_DIR = "sync"  # in the synced tree; on disk below .ea/ (see shared_path)
TODAY_WRITER_FILE = f"{SHARED_DIR}/today-writer.json"


class DeviceInfo(BaseModel):
    """One device, as ``.ea/device`` and ``.ea/sync/devices/<id>.json`` hold it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = SCHEMA_VERSION
    id: str
    name: str
    created: datetime


class TodayWriter(BaseModel):
    """``.ea/sync/today-writer.json``: the device that writes Today, and since when."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = SCHEMA_VERSION
    device: str
    since: datetime


class NotTodayWriter(EvolvingAgentError):
    """A job was asked to write Today on a device that is not the today writer."""

    exit_code = EXIT_DENIED

    def __init__(self, job: str, here: DeviceInfo, writer: TodayWriter) -> None:
        self.job = job
        super().__init__(
            f"{job} not run: Today is written by device {writer.device} (since "
            f"{writer.since:%Y-%m-%d}, .ea/sync/today-writer.json), not by this one "
            f"({here.name}, {here.id}); run the jobs there, or move Today here with "
            "'evolving-agent device take-today' and sync"
        )


def new_device_id() -> str:
    return "d-" + secrets.token_hex(6)


def device_path(root: MemoryRoot) -> Path:
    return root.state.joinpath(*DEVICE_FILE)


def shared_path(root: MemoryRoot, tree_rel: str) -> Path:
    """Where a shared ``sync/...`` file of the synced tree lives on disk (below .ea/)."""
    return root.real / ".ea" / tree_rel


def shared_device_path(root: MemoryRoot, device_id: str) -> Path:
    return shared_path(root, f"{SHARED_DIR}/devices/{device_id}.json")


def _parse(model: type[BaseModel], data: bytes, where: Path) -> BaseModel:
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(file)"
        raise InvalidInput(f"{field}: {first['msg']}", file=where) from None


def create_device(root: MemoryRoot, name: str | None = None) -> DeviceInfo:
    """Give ``root`` a new device id (``init`` and ``clone``); refuses to replace one."""
    path = device_path(root)
    if path.exists():
        raise InvalidInput(f"{path}: this root already has a device id")
    info = DeviceInfo(
        id=new_device_id(), name=(name or socket.gethostname() or "device")[:64], created=now()
    )
    mkdirs_private(root.state)
    atomic_write(path, info.model_dump_json(indent=2).encode() + b"\n")
    register(root, info)
    return info


def local_device(root: MemoryRoot) -> DeviceInfo:
    """This root's device; a root made before devices existed gets its id now (its
    Evidence files stay where they are and become this device's chain)."""
    path = device_path(root)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if _has_synced(root):
            # A new id would re-send this device's chain as another device's: every
            # event twice on every device.  The id must come back, not be replaced.
            raise InvalidInput(
                f"{path} is missing, but this root has synced as a device before; restore "
                "the file from a backup (its id is in .ea/sync/devices/ and on the other "
                "devices' 'device show')"
            ) from None
        return create_device(root)
    info = _parse(DeviceInfo, data, path)
    assert isinstance(info, DeviceInfo)
    if not DEVICE_RE.fullmatch(info.id):
        raise InvalidInput(f"device id {info.id!r} is not of the form d-<12 hex digits>", file=path)
    if not shared_device_path(root, info.id).exists():
        register(root, info)
    return info


def _has_synced(root: MemoryRoot) -> bool:
    if not (root.path / ".git").is_dir():
        return False
    res = git(root.path, "rev-parse", "-q", "--verify", "refs/heads/ea-data", check=False)
    return res.ok and bool(res.text)


def register(root: MemoryRoot, info: DeviceInfo) -> None:
    """Write ``.ea/sync/devices/<id>.json`` (what the other devices learn about this one)."""
    target = shared_device_path(root, info.id)
    mkdirs_private(target.parent)
    atomic_write(target, info.model_dump_json(indent=2).encode() + b"\n", base=root.real)


def known_devices(root: MemoryRoot) -> list[DeviceInfo]:
    """Every device in the shared register, oldest first."""
    base = shared_path(root, f"{SHARED_DIR}/devices")
    out: list[DeviceInfo] = []
    for p in sorted(base.glob("*.json")) if base.is_dir() else []:
        try:
            info = _parse(DeviceInfo, p.read_bytes(), p)
        except InvalidInput:
            continue
        assert isinstance(info, DeviceInfo)
        out.append(info)
    return sorted(out, key=lambda d: d.created)


def today_writer(root: MemoryRoot) -> TodayWriter | None:
    """The recorded today writer, or None for a root that never synced (it writes Today)."""
    path = shared_path(root, TODAY_WRITER_FILE)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    info = _parse(TodayWriter, data, path)
    assert isinstance(info, TodayWriter)
    return info


def is_today_writer(root: MemoryRoot) -> bool:
    writer = today_writer(root)
    return writer is None or writer.device == local_device(root).id


def check_today_writer(root: MemoryRoot, job: str) -> None:
    """Refuse ``job`` (nightly / weekly / monthly) on a device that does not write Today."""
    writer = today_writer(root)
    if writer is None:
        return
    here = local_device(root)
    if writer.device != here.id:
        raise NotTodayWriter(job, here, writer)


def take_today(root: MemoryRoot, actor: str = "human") -> TodayWriter:
    """Make this device the today writer from now on (shared at the next sync).

    When two devices take Today between syncs, the later ``since`` wins on both.
    """
    here = local_device(root)
    before = today_writer(root)
    writer = TodayWriter(device=here.id, since=now())
    set_today_writer(root, writer)
    EvidenceLog(root).append(
        EvidenceDraft(
            ts=writer.since,
            kind="sync",
            actor=actor,
            text=f"Today is written by device {here.id} ({here.name}) from now on",
            data={"today_writer": here.id, "before": before.device if before else None},
        )
    )
    return writer


def set_today_writer(root: MemoryRoot, writer: TodayWriter) -> None:
    target = shared_path(root, TODAY_WRITER_FILE)
    mkdirs_private(target.parent)
    atomic_write(target, writer.model_dump_json(indent=2).encode() + b"\n", base=root.real)


@record(frozen=True)
class DeviceStatus:
    """What ``device show`` prints."""

    here: DeviceInfo
    today_writer: TodayWriter | None
    devices: list[DeviceInfo]
    chains: dict[str, int]  # device id -> number of day files held


def device_status(root: MemoryRoot) -> DeviceStatus:
    here = local_device(root)
    log = EvidenceLog(root)
    chains = {here.id: len(log.days())}
    for other in log.device_logs():
        assert other.device is not None
        chains[other.device] = len(other.days())
    return DeviceStatus(here, today_writer(root), known_devices(root), chains)


def chain_dir(root: MemoryRoot, device_id: str, here: str) -> Path:
    """Where ``device_id``'s chain lives on this device (``here``)."""
    return root.evidence if device_id == here else root.evidence / "devices" / device_id
