"""remote / sync / clone / device through the CLI, as a user on two machines would type them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from evolving_agent.jobs.scheduler import JobScheduler, load_state
from evolving_agent.jobs.settings import accept_edits
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


def ok(*args: str) -> str:
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_two_device_walk_through(tmp_path: Path, remote: Path) -> None:
    laptop, desktop = str(tmp_path / "laptop"), str(tmp_path / "desktop")
    ok("init", laptop)
    ok("--root", laptop, "friction", "offered three options when one was asked")
    assert ok("--root", laptop, "remote", "add", "origin", str(remote)) == (
        f"remote origin -> {remote} (default)\n"
    )
    assert ok("--root", laptop, "sync") == (
        "synced with 'origin': received 0 event(s) from other devices, sent 1\n"
    )
    out = ok("clone", str(remote), desktop, "--name", "desktop")
    assert re.fullmatch(
        rf"cloned into {re.escape(desktop)} as device d-[0-9a-f]{{12}}; synced with 'origin': "
        r"received 1 event\(s\) from other devices, sent 0; 1 verified Canon commit\(s\) applied\n",
        out,
    )
    ok("--root", desktop, "friction", "started 'or you could also' unasked")
    assert "sent 1" in ok("--root", desktop, "sync")
    assert "received 1 event(s)" in ok("--root", laptop, "sync")
    shown = ok("--root", laptop, "evidence", "show")
    assert "offered three options" in shown and "or you could also" in shown
    for root in (laptop, desktop):
        assert ok("--root", root, "verify").startswith("ok: 2 evidence record(s) chained")
    device = ok("--root", desktop, "device", "show")
    assert "(desktop)" in device and device.count(" day file(s) held here") == 2
    # The desktop does not write Today: its jobs say where Today is written (exit 3).
    denied = run_cli("--root", desktop, "run", "nightly")
    assert denied.exit_code == 3
    assert "device take-today" in denied.output
    assert ok("--root", laptop, "remote", "show").endswith("0 local event(s) not yet pushed\n")


def test_offline_sync_exits_0_and_says_what_waits(tmp_path: Path) -> None:
    root = str(tmp_path / "memory")
    ok("init", root)
    ok("friction", "one")
    ok("remote", "add", "origin", str(tmp_path / "nowhere.git"))
    out = ok("sync")
    assert out.startswith("offline: 1 local events not yet pushed (remote 'origin': ")


def test_bad_remote_input_is_one_line_exit_4(tmp_path: Path) -> None:
    ok("init", str(tmp_path / "memory"))
    bad = run_cli("remote", "add", "no good", "x")
    assert bad.exit_code == 4 and bad.output.startswith("error: invalid remote name")
    unknown = run_cli("sync", "--remote", "backup")
    assert unknown.exit_code == 4
    assert unknown.output == "error: unknown remote 'backup' (known: none)\n"


def test_clone_into_a_non_empty_directory_changes_nothing(tmp_path: Path, remote: Path) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    result = run_cli("clone", str(remote), str(target))
    assert result.exit_code == 4
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]


def test_clone_of_an_empty_remote_leaves_no_directory(tmp_path: Path, remote: Path) -> None:
    result = run_cli("clone", str(remote), str(tmp_path / "new"))
    assert result.exit_code == 4
    assert "holds no memory root yet" in result.output
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    "command", [["remote", "add"], ["remote", "show"], ["sync"], ["clone"], ["device", "show"],
                ["device", "take-today"]],
)  # fmt: skip
def test_every_sync_command_has_help_with_an_example(command: list[str]) -> None:
    out = ok(*command, "--help")
    assert "Example:" in out


@pytest.mark.slow
def test_sync_job_in_schedule_print_cron_and_scheduler(tmp_path: Path, remote: Path) -> None:
    path = tmp_path / "memory"
    ok("init", str(path))
    ok("remote", "add", "origin", str(remote))
    root = MemoryRoot(path)
    text = root.schedule_file.read_text()
    root.schedule_file.write_text(
        text.replace('  monthly: "0 4 1 * *"', '  monthly: "0 4 1 * *"\n  sync: "*/30 * * * *"', 1)
    )
    assert accept_edits(root, ["schedule.yaml"]) == ["schedule.yaml"]
    cron = ok("schedule", "print-cron")
    assert "*/30 * * * * " in cron
    assert re.search(rf"--root {re.escape(str(path))} sync >> ", cron)
    assert "OnCalendar=*-*-* *:00,30:00" in cron
    logged: list[str] = []
    JobScheduler([root], log=logged.append).fire(root, "sync")
    assert "sync done: synced with 'origin'" in logged[0]
    state = load_state(root)
    assert state is not None and "sync" in state.last_run and "sync" not in state.last_error


def test_a_command_url_never_runs(tmp_path: Path) -> None:
    # Guards the attack: a remote URL that makes git run a program (ext::), added by
    # hand to the remotes file a session can reach.
    ok("init", str(tmp_path / "memory"))
    refused = run_cli("remote", "add", "x", f"ext::sh -c touch% {tmp_path}/pwned")
    assert refused.exit_code == 4 and "invalid remote URL" in refused.output
    remotes = tmp_path / "memory" / ".ea" / "remotes.json"
    remotes.write_text(
        json.dumps({"remotes": {"x": f"ext::sh -c touch% {tmp_path}/pwned"}, "default": "x"})
    )
    out = ok("sync")
    assert out.startswith("offline: 0 local events not yet pushed")
    assert not (tmp_path / "pwned").exists()


def test_git_s_fatal_line_is_quoted_whole_by_sync_and_clone(tmp_path: Path) -> None:
    # A newcomer saw only git's last line, "…: and the repository exists.", not why.
    nowhere = tmp_path / "nowhere.git"
    ok("init", str(tmp_path / "memory"))
    ok("friction", "one")
    ok("remote", "add", "origin", str(nowhere))
    out = ok("sync")
    assert f"fatal: '{nowhere}' does not appear to be a git repository" in out
    assert "and the repository exists" not in out and out.count("\n") == 1
    cloned = run_cli("clone", str(nowhere), str(tmp_path / "new"))
    assert cloned.exit_code == 4
    assert cloned.output == (
        f"error: cannot fetch {nowhere}: fatal: '{nowhere}' does not appear to be a git "
        "repository; fatal: Could not read from remote repository.\n"
    )
