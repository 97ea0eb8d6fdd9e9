"""Core operations carry their own warnings and rescues, so no front end can forget them.

The CLI and MCP renderings are tested with those front ends (memory/evidence/test_evidence.py,
integrations/test_mcp_server.py, memory/ops/test_canon_edit.py); these tests call the library
directly, as a third front end would, and get the same facts.
"""

from __future__ import annotations

import stat
from pathlib import Path

import git
import pytest

from evolving_agent.memory.ops.canon_edit import EditRefused, rescue_file, save_canon
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_a_refused_canon_edit_is_kept_by_the_core(root: MemoryRoot) -> None:
    before = (root.canon / "identity.yaml").read_bytes()
    edited = before.decode() + "mood: sunny\n"
    with pytest.raises(EditRefused) as refused:
        save_canon(root, "identity.yaml", edited)
    kept = refused.value.kept
    assert kept == rescue_file(root, "identity.yaml") == root.state / "rejected-identity.yaml"
    assert kept.read_text() == edited
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # it may hold private words
    assert "mood: Extra inputs are not permitted" in str(refused.value)
    assert refused.value.file == str(kept)  # the line is in the kept text, not in Canon
    assert (root.canon / "identity.yaml").read_bytes() == before
    assert len(list(git.Repo(root.path).iter_commits())) == 1


def test_the_writer_and_canon_edit_refuse_the_same_yaml(root: MemoryRoot) -> None:
    """One Canon validator: a note file that is not YAML is refused by either door."""
    from evolving_agent.errors import InvalidInput
    from evolving_agent.memory.authority import Writer

    with pytest.raises(EditRefused):
        save_canon(root, "notes.yaml", "a: [unclosed\n")
    with pytest.raises(InvalidInput, match="notes.yaml"):
        Writer(root, "human").write("canon", "notes.yaml", "a: [unclosed\n")
    assert not (root.canon / "notes.yaml").exists()
