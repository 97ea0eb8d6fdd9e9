"""Issue 11, hole 8: the command reflector runs contained.

Real ``python -m evolving_agent run nightly`` processes with a hostile fake model
(``tests/helpers/hostile_reflector.py``): one that edits Canon (the job fails with exit 5,
Canon is put back byte for byte, Evidence records the failure, boot never serves the
edit), one that rewrites ``schedule.yaml``, and one that hangs with a ``setsid``
grandchild (the timeout kills both; the job falls back to rules and says why).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from tests.helpers import HELPERS, run_cli, run_proc
from tests.helpers.roots import fresh_root

HOSTILE = str(HELPERS / "hostile_reflector.py")
DAY = "2026-11-02"


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    r = fresh_root(tmp_path / "memory")
    with freeze_time(f"{DAY} 09:00:00"):
        hid = run_cli("hypothesis", "add", "give one answer, not a menu").output.split()[0]
    with freeze_time(f"{DAY} 10:00:00"):
        assert run_cli("friction", "listed options again", "--supports", hid).exit_code == 0
    return r


def protected(root: MemoryRoot) -> dict[str, bytes]:
    files = sorted(p for p in root.canon.rglob("*") if p.is_file())
    out = {str(p.relative_to(root.path)): p.read_bytes() for p in files}
    out["schedule.yaml"] = root.schedule_file.read_bytes()
    return out


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_reflector_that_edits_canon_fails_the_job_and_canon_is_restored(
    root: MemoryRoot, tmp_path: Path
) -> None:
    before = protected(root)
    log = tmp_path / "cwd.log"
    proc = run_proc(
        "run",
        "nightly",
        "--date",
        DAY,
        "--reflector-cmd",
        f"{sys.executable} {HOSTILE}",
        env={"EA_HOSTILE": "canon", "EA_HOSTILE_LOG": str(log)},
    )
    assert proc.returncode == 5, proc.stderr.decode()
    err = proc.stderr.decode()
    assert err.startswith("error: the command reflector changed canon/identity.yaml, ")
    assert "canon/planted.md" in err and err.count("\n") == 1
    # Canon is back byte for byte: the appended line and the planted note are gone.
    assert protected(root) == before
    assert not (root.canon / "planted.md").exists()
    # Nothing was planned or written: no bias, no carry, no finished run.
    assert not (root.today / "bias.md").exists()
    assert not (root.state / "runs" / f"nightly-{DAY}.json").exists()
    # The failure is in Evidence, naming what was touched.
    [failed] = [r for r in EvidenceLog(root).iter_all() if r.kind == "job"]
    assert failed.actor == "nightly"
    assert failed.data["status"] == "failed"
    assert failed.data["tampered"] == ["canon/identity.yaml", "canon/planted.md"]
    # The reflector ran in a scratch directory outside the root, removed afterwards.
    [cwd] = log.read_text().splitlines()
    assert not Path(cwd).is_relative_to(root.path) and not Path(cwd).exists()
    # Boot never serves the edit, and verify finds Canon clean.
    boot = run_proc("boot")
    assert boot.returncode == 0 and b"whoever the reflector says" not in boot.stdout
    assert run_proc("verify").returncode == 0


def test_a_reflector_that_rewrites_its_own_schedule_is_caught(root: MemoryRoot) -> None:
    before = root.schedule_file.read_bytes()
    proc = run_proc(
        "run",
        "nightly",
        "--date",
        DAY,
        "--reflector-cmd",
        f"{sys.executable} {HOSTILE}",
        env={"EA_HOSTILE": "schedule"},
    )
    assert proc.returncode == 5
    assert "changed schedule.yaml" in proc.stderr.decode()
    assert root.schedule_file.read_bytes() == before


def test_a_hanging_reflector_and_its_setsid_grandchild_are_killed_on_timeout(
    root: MemoryRoot, tmp_path: Path
) -> None:
    text = root.schedule_file.read_text()
    cmd = f"{sys.executable} {HOSTILE}"
    root.schedule_file.write_text(
        text.replace(
            "reflector: rules",
            f"reflector:\n  name: command\n  command: {json.dumps(cmd)}\n  timeout: 1\n",
        )
    )
    pid_file = tmp_path / "grandchild.pid"
    proc = run_proc(
        "run",
        "nightly",
        "--date",
        DAY,
        env={"EA_HOSTILE": "hang", "EA_HOSTILE_PID": str(pid_file)},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    first = proc.stdout.decode().splitlines()[0]
    assert first == (
        f"nightly {DAY}: done (reflector: rules; command reflector failed "
        f"({sys.executable}: timed out after 1s); fell back to rules)"
    )
    grandchild = int(pid_file.read_text())
    assert not alive(grandchild), "the setsid grandchild outlived the reflector's timeout"
    # The fallback is on record too.
    [fallback] = [r for r in EvidenceLog(root).iter_all() if r.kind == "reflector-fallback"]
    assert "timed out after 1s" in fallback.text


def test_a_well_behaved_command_reflector_still_works_contained(root: MemoryRoot) -> None:
    proc = run_proc(
        "run",
        "nightly",
        "--date",
        DAY,
        "--strict",
        "--reflector-cmd",
        f"{sys.executable} {HOSTILE}",
        env={"EA_HOSTILE": ""},
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().splitlines()[0] == f"nightly {DAY}: done (reflector: command)"
    assert "Model carry:" in (root.today / "carry.json").read_text()
    assert os.environ.get("EA_HOSTILE") is None  # the test process itself is untouched
