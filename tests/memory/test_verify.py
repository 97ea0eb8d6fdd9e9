"""Crash safety of atomic writes (real SIGKILL) and verify's Canon provenance checks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import git
import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc

SIZE = 4 * 1024 * 1024

WRITER_LOOP = textwrap.dedent(
    f"""
    import sys
    from pathlib import Path
    from evolving_agent.memory.authority import Writer
    from evolving_agent.paths import MemoryRoot

    w = Writer(MemoryRoot(Path(sys.argv[1])), "human")
    i = 0
    while True:
        w.write("today", "big.txt", (b"AB"[i % 2 : i % 2 + 1]) * {SIZE})
        i += 1
        if i == 2:
            print("ready", flush=True)
    """
)


def test_sigkill_mid_write_leaves_old_or_new_file_never_a_mix(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    target = root.today / "big.txt"
    killed_mid_write = 0
    for attempt in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER_LOOP, str(root.path)], stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(0.013 * attempt)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        temps = list(root.today.glob(".big.txt.*.tmp"))
        killed_mid_write += bool(temps)
        data = target.read_bytes()
        assert len(data) == SIZE
        assert data in (b"A" * SIZE, b"B" * SIZE), "a half-written file is visible"
        for t in temps:  # a temp file is harmless debris; clear it for the next round
            t.unlink()
    # The test means something only if at least one kill landed inside a write.
    assert killed_mid_write >= 1


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return init_root(tmp_path / "memory")


def test_human_canon_write_through_writer_is_committed_and_verifies(root: MemoryRoot) -> None:
    text = (root.canon / "identity.yaml").read_text().replace("name: Assistant", "name: Ada")
    assert run_cli("write", "--as", "human", "canon", "identity.yaml", input=text).exit_code == 0
    head = git.Repo(root.path).head.commit
    assert "Actor: human" in head.message
    assert "Evidence-Id: ev-" in head.message
    result = run_cli("verify")
    assert result.exit_code == 0
    assert result.output == "ok: 1 evidence record(s) chained, 1 Canon change(s) with provenance\n"


def test_unreviewed_canon_commit_makes_verify_exit_5(root: MemoryRoot) -> None:
    identity = root.canon / "identity.yaml"
    identity.write_text(identity.read_text() + "  - I am whoever the nightly job says.\n")
    repo = git.Repo(root.path)
    repo.index.add(["canon/identity.yaml"])
    sha = repo.index.commit("sneaky identity change").hexsha

    proc = run_proc("verify")
    assert proc.returncode == 5
    assert (
        f"commit {sha[:10]} (sneaky identity change): changes canon/identity.yaml "
        "without going through the writer" in proc.stderr.decode()
    )


def test_forged_trailer_with_other_content_is_caught(root: MemoryRoot) -> None:
    """A commit that cites a real canon-write record but carries other bytes fails."""
    identity = root.canon / "identity.yaml"
    Writer(root, "human").write("canon", "identity.yaml", identity.read_text() + "# ok\n")
    good = git.Repo(root.path).head.commit.message
    identity.write_text(identity.read_text() + "  - injected\n")
    repo = git.Repo(root.path)
    repo.index.add(["canon/identity.yaml"])
    repo.index.commit("looks legit\n\n" + good.split("\n\n", 1)[1])
    result = run_cli("verify")
    assert result.exit_code == 5
    assert "canon/identity.yaml differs from what the writer recorded" in result.output


def test_canon_edited_on_disk_behind_the_writer_is_found(root: MemoryRoot) -> None:
    (root.canon / "notes.md").write_text("secret new identity\n")
    result = run_cli("verify")
    assert result.exit_code == 5
    assert f"{root.canon / 'notes.md'}:1: changed behind the writer's back" in result.output


def test_hand_edit_is_reported_at_its_first_changed_line(root: MemoryRoot) -> None:
    identity = root.canon / "identity.yaml"
    lines = identity.read_text().splitlines(keepends=True)
    number = next(i for i, ln in enumerate(lines, 1) if ln.startswith("name:"))
    lines[number - 1] = "name: Someone Else\n"
    identity.write_text("".join(lines))
    result = run_cli("verify")
    assert result.exit_code == 5
    assert f"{identity}:{number}: changed behind the writer's back" in result.output


def test_monthly_commit_smuggling_more_than_the_approved_diff_is_caught(root: MemoryRoot) -> None:
    from datetime import UTC, datetime

    from evolving_agent.memory.authority import Approval
    from evolving_agent.review.models import Decision
    from tests.helpers.review import add, queue

    diff = add("Ask before refactoring beyond the request.")
    queue(root, "rev-2026-11-1", diff)
    decision = Decision(
        review_id="rev-2026-11-1",
        status="approved",
        approver="ada",
        ts=datetime(2026, 11, 30, 10, 0, tzinfo=UTC),
        diff=diff,
    )
    Writer(root, "human").write("decisions", "rev-2026-11-1.json", decision.model_dump_json())
    identity = (root.canon / "identity.yaml").read_text()
    smuggled = identity.replace(
        "  - Lead with the answer, then the reasoning.\n",
        "  - Lead with the answer, then the reasoning.\n"
        "  - Ask before refactoring beyond the request.\n",
    ).replace("name: Assistant", "name: Someone Else")
    Writer(root, "monthly", approval=Approval("rev-2026-11-1", "ada")).write(
        "canon", "identity.yaml", smuggled
    )
    result = run_cli("verify")
    assert result.exit_code == 5
    assert "canon/identity.yaml holds more than the approved diff" in result.output
