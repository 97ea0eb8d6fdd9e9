"""The Live Bus: empty text, hand-edited entries and a symlinked state directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.paths import MemoryRoot
from tests.helpers import new_root, run_cli
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    monkeypatch.setenv("USER", "alice")
    return fresh_root(tmp_path / "memory")


# Regression: an attack an outside review of the memory layer got through.
def test_a_symlinked_state_directory_is_refused_for_live_writes(
    root: MemoryRoot, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (root.path / ".ea").rename(outside)
    (root.path / ".ea").symlink_to(outside)
    before = sorted(p.name for p in (outside / "locks").iterdir())
    result = run_cli("live", "set", "thread", "on it")
    assert result.exit_code == 4, result.output
    assert ".ea: is a symlink" in result.output
    assert sorted(p.name for p in (outside / "locks").iterdir()) == before
    assert not (root.live / "thread.json").exists()


# Bad input a new user typed during QA.
def test_live_set_refuses_empty_text_and_points_at_clear(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    result = run_cli("--root", str(root), "live", "set", "thread", " ")
    assert result.exit_code == 4
    assert result.output == (
        "error: Live Bus text for 'thread' is empty (to remove the entry: "
        "evolving-agent live clear thread)\n"
    )
    assert run_cli("--root", str(root), "live", "show").output == "(the Live Bus is empty)\n"


# Bad input a new user typed during QA.
def test_a_hand_edited_live_bus_entry_is_skipped_with_a_one_line_warning(
    tmp_path: Path,
) -> None:
    root = new_root(tmp_path)
    (root / "live" / "thread.json").write_text('{"key": "thread"}\n')
    result = run_cli("--root", str(root), "live", "show")
    assert result.exit_code == 0
    assert result.stderr == (
        f"warning: {root / 'live' / 'thread.json'}: malformed Live Bus entry: text: "
        "Field required; skipped\n"
    )
    assert result.stdout == "(the Live Bus is empty)\n"
    (root / "live" / "thread.json").write_text("{not json\n")
    result = run_cli("--root", str(root), "boot")
    assert result.exit_code == 0
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"warning: {root / 'live' / 'thread.json'}: malformed Live Bus")
