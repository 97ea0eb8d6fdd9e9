"""The permission-checked writer: denials, path confinement, policy override."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evolving_agent.errors import ReadOutOfScope, WriteDenied
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.evidence import EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return init_root(tmp_path / "memory")


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()
    }


def _denials(root: MemoryRoot) -> list[dict[str, object]]:
    return [
        {"actor": r.actor, **r.data}
        for r in EvidenceLog(root).iter_all()
        if r.kind == "write-denied"
    ]


@pytest.mark.parametrize(
    ("actor", "layer", "relpath"),
    [("nightly", "canon", "identity.yaml"), ("session", "today", "bias.md")],
)
def test_denied_write_exits_3_changes_nothing_and_is_recorded(
    root: MemoryRoot, actor: str, layer: str, relpath: str
) -> None:
    canon_before = _snapshot(root.canon)
    today_before = _snapshot(root.today)
    head_before = (root.path / ".git/HEAD").read_text()

    proc = run_proc("write", "--as", actor, layer, relpath, input=b"I am someone else now.\n")

    assert proc.returncode == 3
    assert proc.stderr.decode().strip() == (
        f"error: write denied: actor '{actor}' may not write {layer}/{relpath}"
    )
    assert _snapshot(root.canon) == canon_before  # byte-identical
    assert _snapshot(root.today) == today_before
    assert (root.path / ".git/HEAD").read_text() == head_before
    assert _denials(root) == [{"actor": actor, "layer": layer, "path": relpath, "reason": ""}]


def test_allowed_writes_land(root: MemoryRoot) -> None:
    assert (
        run_cli("write", "--as", "nightly", "today", "bias.md", input="Ask first.\n").exit_code == 0
    )
    assert (root.today / "bias.md").read_text() == "Ask first.\n"
    assert run_cli("write", "--as", "human", "today", "notes/deep.md", input="x").exit_code == 0
    assert (root.today / "notes/deep.md").read_text() == "x"
    assert _denials(root) == []


def test_evidence_cannot_be_replaced_by_anyone(root: MemoryRoot) -> None:
    EvidenceLog(root)  # nothing yet
    result = run_cli("write", "--as", "human", "evidence", "2026-11-30.jsonl", input="{}\n")
    assert result.exit_code == 3
    assert "Evidence is append-only" in result.output
    assert [p.name for p in root.evidence.iterdir()] == [f"{_today()}.jsonl"]  # only the denial


def _today() -> str:
    from datetime import date

    return date.today().isoformat()


@pytest.mark.parametrize(
    "relpath",
    ["../escape.txt", "../../etc/evil", "a/../../escape.txt", "/tmp/abs-evil.txt", ".hidden"],
)
def test_traversal_and_absolute_paths_exit_4_and_write_nothing(
    root: MemoryRoot, tmp_path: Path, relpath: str
) -> None:
    before = _snapshot(tmp_path)
    result = run_cli("write", "--as", "human", "today", relpath, input="payload")
    assert result.exit_code == 4
    assert "invalid path" in result.output
    assert _snapshot(tmp_path) == before
    assert not Path("/tmp/abs-evil.txt").exists()


def test_symlink_leaving_the_root_is_refused(root: MemoryRoot, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root.today / "link")
    result = run_cli("write", "--as", "human", "today", "link/x.md", input="payload")
    assert result.exit_code == 4
    assert "today/link is a symlink" in result.output
    assert list(outside.iterdir()) == []


def test_policy_override_in_canon_changes_who_may_write(root: MemoryRoot) -> None:
    policy = "schema_version: 1\nwrite:\n  today: [human, nightly, session]\n"
    assert run_cli("write", "--as", "human", "canon", "policy.yaml", input=policy).exit_code == 0
    assert run_cli("write", "--as", "session", "today", "bias.md", input="ok\n").exit_code == 0
    # ...but no override can hand Canon to the nightly job: the writer refuses to commit
    # one, and one written by hand is not trusted (the committed policy rules; issue 11).
    bad = "schema_version: 1\nwrite:\n  canon: [human, nightly]\n"
    refused = run_cli("write", "--as", "human", "canon", "policy.yaml", input=bad)
    assert refused.exit_code == 4
    assert "policy.yaml:2: write: Value error, only 'human'" in refused.output
    (root.canon / "policy.yaml").write_text(bad)
    with pytest.raises(WriteDenied):
        Writer(root, "nightly").write("canon", "identity.yaml", "name: Evil\n")


def test_monthly_canon_write_without_approval_is_denied(root: MemoryRoot) -> None:
    with pytest.raises(WriteDenied, match="needs an approved review"):
        Writer(root, "monthly").write("canon", "identity.yaml", "name: Evil\n")
    assert "name: Evil" not in (root.canon / "identity.yaml").read_text()


def test_read_scopes(root: MemoryRoot) -> None:
    from datetime import date

    nightly = ScopedReader(root, "nightly", evidence_window=(date(2026, 11, 30),) * 2)
    with pytest.raises(ReadOutOfScope, match="'nightly' may not read layer 'canon'"):
        nightly.read_text("canon", "identity.yaml")
    with pytest.raises(ReadOutOfScope, match="outside 2026-11-30..2026-11-30"):
        list(nightly.evidence(date(2026, 11, 1), date(2026, 11, 30)))
    assert list(nightly.evidence(date(2026, 11, 30))) == []
    session = ScopedReader(root, "session")
    assert session.read_text("canon", "identity.yaml") is not None
    with pytest.raises(ReadOutOfScope):
        list(session.evidence(date(2026, 11, 30)))
