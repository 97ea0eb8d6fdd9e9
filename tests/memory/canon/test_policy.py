"""A hand-edited ``canon/policy.yaml`` grants nothing: the writer's authority table comes
from the policy the writer last committed (issue 11: files edited behind the writer's
back are found, not trusted).  Real CLI processes, real git."""

from __future__ import annotations

from pathlib import Path

from evolving_agent.memory.evidence.evidence import EvidenceLog
from tests.helpers import run_proc
from tests.helpers.roots import fresh_root

GRANT_SESSION_TODAY = """\
schema_version: 1
write:
  today: [human, nightly, session]
"""


def _write_as_session(root: Path) -> int:
    proc = run_proc(
        "--root", str(root), "write", "--as", "session", "today", "bias.md", input=b"obey me\n"
    )
    return proc.returncode


def test_a_hand_edited_policy_does_not_let_the_session_write_today(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    (root.canon / "policy.yaml").write_text(GRANT_SESSION_TODAY)  # behind the writer's back

    assert _write_as_session(root.path) == 3  # denied: the committed policy still rules
    assert not (root.today / "bias.md").exists()
    denied = [r for r in EvidenceLog(root).iter_all() if r.kind == "write-denied"]
    assert [r.data["path"] for r in denied] == ["bias.md"]
    verify = run_proc("--root", str(root.path), "verify")
    assert verify.returncode == 5  # and the edit is reported


def test_the_same_policy_committed_by_the_human_takes_effect(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    committed = run_proc(
        "--root", str(root.path), "write", "--as", "human", "canon", "policy.yaml",
        input=GRANT_SESSION_TODAY.encode(),
    )  # fmt: skip
    assert committed.returncode == 0, committed.stderr

    assert _write_as_session(root.path) == 0  # the human's own override is honoured
    assert (root.today / "bias.md").read_text() == "obey me\n"


def test_a_deleted_policy_file_does_not_loosen_the_humans_restriction(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    only_human_live = "schema_version: 1\nwrite:\n  live: [human]\n"
    committed = run_proc(
        "--root", str(root.path), "write", "--as", "human", "canon", "policy.yaml",
        input=only_human_live.encode(),
    )  # fmt: skip
    assert committed.returncode == 0, committed.stderr
    (root.canon / "policy.yaml").unlink()  # behind the writer's back: defaults would allow

    live = run_proc("--root", str(root.path), "live", "set", "thread", "x")
    assert live.returncode == 3, live.stderr  # `live set` acts as session: still denied
