"""canon edit: the human's own Canon change through $EDITOR, validated and committed."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import git
import pytest

from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python: str) -> None:
    """An $EDITOR that rewrites the file it is given with a Python expression."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "text = p.read_text()\n"
        f"p.write_text({python})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)


def test_edit_commits_through_the_writer_and_verifies(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _editor(tmp_path, monkeypatch, "text.replace('name: Assistant', 'name: Ada')")
    result = run_cli("canon", "edit", "-m", "call her Ada")
    assert result.output == "committed canon/identity.yaml\n"
    assert "name: Ada" in (root.canon / "identity.yaml").read_text()
    head = git.Repo(root.path).head.commit
    assert head.summary == "call her Ada"
    assert "Actor: human" in head.message
    assert run_cli("verify").exit_code == 0


def test_invalid_edit_is_refused_and_kept(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (root.canon / "identity.yaml").read_bytes()
    _editor(tmp_path, monkeypatch, "text + 'mood: sunny\\n'")
    result = run_cli("canon", "edit")
    assert result.exit_code == 4
    assert "mood: Extra inputs are not permitted" in result.output
    assert f"your edit is kept in {root.state / 'rejected-identity.yaml'}" in result.output
    assert (root.canon / "identity.yaml").read_bytes() == before
    assert (root.state / "rejected-identity.yaml").read_text().endswith("mood: sunny\n")
    assert len(list(git.Repo(root.path).iter_commits())) == 1


def test_hand_edit_on_disk_is_committed_by_an_unchanged_edit(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ident = root.canon / "identity.yaml"
    ident.write_text(ident.read_text().replace("name: Assistant", "name: Bo"))
    assert run_cli("verify").exit_code == 5  # behind the writer's back
    _editor(tmp_path, monkeypatch, "text")  # saves without changing anything
    result = run_cli("canon", "edit")
    assert result.output == "committed canon/identity.yaml\n"
    assert run_cli("verify").exit_code == 0
    result = run_cli("canon", "edit")
    assert result.output == "no change\n"


def test_edit_refuses_paths_outside_canon(root: MemoryRoot) -> None:
    result = run_cli("canon", "edit", "../today/bias.md")
    assert result.exit_code == 4
    assert "invalid path" in result.output


def test_editing_again_after_a_refusal_reopens_the_refused_text(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Newcomer snag: the second `canon edit` reopened the old file (the work looked lost)
    # and the error named a line of canon/identity.yaml, which the refusal never touched.
    kept = root.state / "rejected-identity.yaml"
    _editor(tmp_path, monkeypatch, "text.replace('name: Assistant', 'name: Ada') + 'mood: x\\n'")
    refused = run_cli("canon", "edit")
    assert refused.exit_code == 4
    line = kept.read_text().splitlines().index("mood: x") + 1
    assert f"error: {kept}:{line}: mood: Extra inputs are not permitted" in refused.output
    _editor(tmp_path, monkeypatch, "text.replace('mood: x\\n', '')")  # fix only that line
    again = run_cli("canon", "edit")
    assert again.exit_code == 0, again.output
    assert f"reopening your refused edit from {kept}" in again.output
    assert "name: Ada" in (root.canon / "identity.yaml").read_text()  # the first edit's work
    assert not kept.exists()
    assert run_cli("verify").exit_code == 0
