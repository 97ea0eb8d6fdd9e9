"""Bounded inputs and the smaller holes of issue 19: sizes checked at write time, hard
links refused, long names exit 4, a killed writer's leftovers cleaned, a clock stepped
back refused."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops import live
from evolving_agent.memory.ops.events import MAX_TEXT_BYTES
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc
from tests.helpers.fixtures import McpServer
from tests.helpers.review import snapshot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _records(root: MemoryRoot) -> int:
    return sum(1 for _ in EvidenceLog(root).iter_all())


@pytest.mark.parametrize(
    "args",
    [
        ["friction", "x" * (MAX_TEXT_BYTES + 1)],
        ["friction", "é" * (MAX_TEXT_BYTES // 2 + 1)],  # bytes, not characters
        ["evidence", "append", "--kind", "journal", "x" * (MAX_TEXT_BYTES + 1)],
        ["friction", "ok", "--session", "s" * 201],
        ["live", "set", "k", "x" * 4001],
        ["hypothesis", "add", "x", "--when", "w" * 301],
    ],
    ids=["friction", "friction-bytes", "journal", "session-id", "live", "hypothesis-when"],
)
def test_an_input_over_its_limit_is_one_line_exit_4_and_nothing_is_written(
    root: MemoryRoot, args: list[str]
) -> None:
    before = snapshot(root.path)
    result = run_cli(*args)
    assert result.exit_code == 4
    assert result.output.startswith("error: ") and result.output.count("\n") == 1
    assert snapshot(root.path) == before


def test_an_import_line_over_its_limit_imports_nothing(root: MemoryRoot, tmp_path: Path) -> None:
    good = json.dumps({"ts": "2026-11-02T10:00:00+00:00", "kind": "raw", "text": "fine"})
    big = json.dumps({"ts": "2026-11-02T10:00:00+00:00", "kind": "raw", "text": "x" * 40_000})
    batch = tmp_path / "in.jsonl"
    batch.write_text(good + "\n" + big + "\n")
    before = _records(root)
    result = run_cli("evidence", "import", str(batch))
    assert result.exit_code == 4
    assert result.output == (
        f"error: {batch}:2: line longer than 32,768 bytes; nothing was imported\n"
    )
    assert _records(root) == before


def test_an_mcp_friction_over_the_limit_is_the_same_tool_error(mcp_server: McpServer) -> None:
    async def body(s):  # type: ignore[no-untyped-def]
        return await s.call_tool("friction", {"text": "x" * 5_000_000})

    before = _records(mcp_server.root)
    result = mcp_server.call(body)
    assert result.is_error is True
    text = result.content[0].text  # type: ignore[union-attr]
    assert "the friction text is 5,000,000 bytes; the limit is 16,384" in text
    assert _records(mcp_server.root) == before


def test_the_live_bus_refuses_a_key_past_its_limit_but_replaces_existing_ones(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "MAX_KEYS", 3)
    for i in range(3):
        live.set_entry(root, "session", f"k{i}", "x")
    with pytest.raises(live.LiveBusFull, match="holds 3 keys, its limit is 3"):
        live.set_entry(root, "session", "k9", "x")
    assert live.set_entry(root, "session", "k1", "replaced").text == "replaced"
    assert sorted(p.stem for p in root.live.glob("*.json")) == ["k0", "k1", "k2"]


def test_boot_over_the_key_limit_says_so_and_reads_only_the_newest(root: MemoryRoot) -> None:
    # Keys planted behind the writer's back, past the limit: boot stays bounded and says so.
    for i in range(live.MAX_KEYS + 5):
        entry = {"key": f"k{i}", "text": f"t{i}", "actor": "session", "updated": "2026"}
        (root.live / f"k{i}.json").write_text(json.dumps(entry))
    result = run_cli("boot", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert len(data["live"]) == 20
    assert any("more than 1,000 entries (the Live Bus limit)" in w for w in data["warnings"])


def test_a_hard_linked_day_file_is_refused_and_canon_is_untouched(root: MemoryRoot) -> None:
    # Guards: a hard link evidence/DAY.jsonl -> canon/identity.yaml made friction append
    # into Canon, and the torn-tail quarantine cut identity.yaml's last line.
    identity = root.canon / "identity.yaml"
    before = identity.read_bytes()
    day = datetime.now().astimezone().date()
    os.link(identity, root.evidence / f"{day.isoformat()}.jsonl")
    result = run_cli("friction", "something felt off")
    assert result.exit_code == 4
    assert "has 2 hard links; Evidence day files must be plain files" in result.output
    assert identity.read_bytes() == before
    assert not (root.evidence / "torn").exists()
    assert run_cli("verify").exit_code == 5


@pytest.mark.parametrize(
    "args",
    [
        ["write", "--as", "session", "live", "n" * 300 + ".json"],
        ["canon", "show", "x" * 300],
        ["review", "show", "r" * 300],
        ["evidence", "import", "/tmp/" + "f" * 300],
    ],
    ids=["write", "canon-show", "review-show", "import"],
)
def test_a_long_name_is_a_clean_exit_4(root: MemoryRoot, args: list[str]) -> None:
    result = run_cli(*args, input="{}")
    assert result.exit_code == 4, result.output
    assert result.output.startswith("error: ") and result.output.count("\n") == 1
    assert "unexpected" not in result.output


def test_stale_git_locks_and_temp_files_do_not_trip_the_next_write(root: MemoryRoot) -> None:
    # Guards: a SIGKILL during 'review approve' left a git lock and '.…tmp' files, and the
    # re-run failed with "git update-ref -m failed (exit 128)".
    git_dir = root.path / ".git"
    branch = subprocess.run(
        ["git", "symbolic-ref", "--short", "HEAD"], cwd=root.path, capture_output=True, text=True
    ).stdout.strip()
    (git_dir / "refs" / "heads" / f"{branch}.lock").write_text("")
    (git_dir / "HEAD.lock").write_text("")
    (root.canon / ".identity.yaml.0123456789ab.tmp").write_text("half")
    (root.today / ".bias.md.0123456789ab.tmp").write_text("half")
    text = (root.canon / "identity.yaml").read_text() + "# more\n"
    Writer(root, "human").write("canon", "identity.yaml", text, message="after a crash")
    Writer(root, "human").write("today", "bias.md", "Lead with the answer.\n")
    assert not (git_dir / "HEAD.lock").exists()
    assert not list(root.canon.glob(".*.tmp")) and not list(root.today.glob(".*.tmp"))
    assert run_cli("verify").exit_code == 0


def test_an_event_dated_before_the_last_reflected_day_is_refused(root: MemoryRoot) -> None:
    # Guards: a clock stepped back two days put an event into a finished day that was
    # never reflected while verify said 0.
    with freeze_time("2026-11-10 04:00:00"):
        assert run_cli("run", "nightly", "--date", "2026-11-09").exit_code == 0
    with freeze_time("2026-11-08 12:00:00"):  # the clock stepped back
        before = _records(root)
        result = run_cli("friction", "felt off")
        assert result.exit_code == 4
        assert "already reflected 2026-11-09: an event dated 2026-11-08 would never" in (
            result.output
        )
        assert _records(root) == before
    with freeze_time("2026-11-10 12:00:00"):
        assert run_cli("friction", "felt off").exit_code == 0


def test_an_event_dated_on_the_reflected_day_itself_is_refused_at_every_door(
    root: MemoryRoot, tmp_path: Path
) -> None:
    # Guards issue 31: the clock stepped back onto the day the nightly had just reflected
    # was accepted silently and never reflected (only days before it were refused).
    from evolving_agent.memory.ops.events import import_events
    from evolving_agent.memory.ops.hypotheses import add_hypothesis

    with freeze_time("2026-11-10 04:00:00"):
        assert run_cli("run", "nightly", "--date", "2026-11-09").exit_code == 0
    with freeze_time("2026-11-09 21:00:00"):  # stepped back onto the reflected day
        before = _records(root)
        result = run_cli("friction", "felt off")
        assert result.exit_code == 4
        assert "already reflected 2026-11-09: an event dated 2026-11-09 would never" in (
            result.output
        )
        assert run_cli("evidence", "append", "--kind", "raw", "x").exit_code == 4
        batch = tmp_path / "in.jsonl"
        batch.write_text(json.dumps({"ts": "2026-11-09T20:00:00", "kind": "raw", "text": "x"}))
        with pytest.raises(Exception, match="already reflected 2026-11-09"):
            import_events(root, "human", batch)
        with pytest.raises(Exception, match="already reflected 2026-11-09"):
            add_hypothesis(root, "a belief from the past", actor="session")
        assert _records(root) == before


@pytest.mark.slow
def test_the_fast_friction_path_refuses_the_reflected_day_like_the_cli(root: MemoryRoot) -> None:
    # The stdlib fast path, in a real process: today reflected (a nightly run for today).
    from datetime import date

    today = date.today().isoformat()
    with freeze_time(f"{today} 23:59:00"):
        assert run_cli("run", "nightly", "--date", today).exit_code == 0
    proc = run_proc("--root", str(root.path), "friction", "after the run")
    assert proc.returncode == 4, proc.stderr
    assert f"already reflected {today}: an event dated {today}" in proc.stderr.decode()
