"""The permission-checked writer: denials, path confinement, policy override."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from evolving_agent.errors import ReadOutOfScope, WriteDenied
from evolving_agent.memory.authority import ScopedReader, Writer
from evolving_agent.memory.base.atomic import UnsafePath
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from tests.helpers import new_root, run_cli, run_proc, run_verify, shell_git
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


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


def identity(root: MemoryRoot) -> bytes:
    return (root.canon / "identity.yaml").read_bytes()


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_an_invalid_schedule_is_refused_and_nothing_is_committed(root: MemoryRoot) -> None:
    head = shell_git(root, "rev-parse", "HEAD")
    root.schedule_file.write_text("jobs: [\n")
    result = run_cli("accept", "schedule.yaml")
    assert result.exit_code == 4
    assert shell_git(root, "rev-parse", "HEAD") == head


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_today_symlinked_to_canon_cannot_turn_nightly_into_a_canon_writer(
    root: MemoryRoot,
) -> None:
    before = identity(root)
    os.rmdir(root.today)
    os.symlink("canon", root.today)
    result = run_cli("write", "--as", "nightly", "today", "identity.yaml", input="name: Evil\n")
    assert result.exit_code == 4
    assert "today is a symlink" in result.output
    assert identity(root) == before
    assert _denials(root) == [
        {
            "actor": "nightly",
            "layer": "today",
            "path": "identity.yaml",
            "reason": "today is a symlink",
        }
    ]


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_live_symlinked_outside_is_refused(root: MemoryRoot, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.rmdir(root.live)
    os.symlink(outside, root.live)
    result = run_cli("write", "--as", "session", "live", "x.json", input='{"a": 1}')
    assert result.exit_code == 4
    assert run_cli("live", "set", "thread", "hi").exit_code == 4
    assert list(outside.iterdir()) == []
    code, out = run_verify()
    assert code == 5
    assert f"{root.real / 'live'}: is a symlink (to {outside})" in out


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_an_evidence_day_file_symlinked_outside_is_never_written(
    root: MemoryRoot, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("")
    os.symlink(outside, EvidenceLog(root).day_file(date.today()))
    result = run_cli("friction", "something felt off")
    assert result.exit_code == 4
    assert "is a symlink" in result.output
    assert outside.read_text() == ""
    code, out = run_verify()
    assert code == 5
    assert "is a symlink; Evidence day files must be plain files" in out


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_crons_symlinked_to_canon_is_refused(root: MemoryRoot) -> None:
    from evolving_agent.jobs.prompts import prompt_loader

    for p in root.crons.iterdir():
        p.unlink()
    root.crons.rmdir()
    os.symlink("canon", root.crons)
    before = sorted(p.name for p in root.canon.iterdir())
    # What a model reflector does first: copy any missing default prompt into crons/.
    with pytest.raises(UnsafePath, match="crons: is a symlink"):
        prompt_loader(root)("nightly")
    assert sorted(p.name for p in root.canon.iterdir()) == before  # nothing landed in Canon
    assert run_cli("accept", "crons/nightly.md").exit_code == 4
    code, out = run_verify()
    assert code == 5
    assert f"{root.real / 'crons'}: is a symlink; the writer never makes one" in out


# Bad input a new user typed during QA.
def test_write_refuses_a_malformed_identity_and_commits_nothing(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    before = (root / "canon" / "identity.yaml").read_text()
    result = run_cli(
        "--root", str(root), "write", "--as", "human", "canon", "identity.yaml",
        input="name: [unclosed\n",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == (
        f"error: {root / 'canon' / 'identity.yaml'}:2: malformed YAML: "
        "expected ',' or ']', but got '<stream end>'\n"
    )
    assert (root / "canon" / "identity.yaml").read_text() == before
    assert run_cli("--root", str(root), "canon", "log").output.count("\n") == 1
    assert run_cli("--root", str(root), "boot").exit_code == 0


# Bad input a new user typed during QA.
def test_write_refuses_an_identity_with_an_unknown_field(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    result = run_cli(
        "--root", str(root), "write", "--as", "human", "canon", "identity.yaml",
        input="name: A\nnmae: typo\n",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == (
        f"error: {root / 'canon' / 'identity.yaml'}:2: nmae: Extra inputs are not permitted\n"
    )


# Bad input a new user typed during QA.
def test_write_refuses_a_policy_that_would_lock_every_writer_out(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    result = run_cli(
        "--root", str(root), "write", "--as", "human", "canon", "policy.yaml",
        input="review:\n  monthly_limit: -1\n",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == (
        f"error: {root / 'canon' / 'policy.yaml'}:2: review.monthly_limit: "
        "Input should be greater than or equal to 0\n"
    )
    assert run_cli("--root", str(root), "friction", "still works").exit_code == 0
