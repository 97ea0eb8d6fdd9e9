"""canon log / diff / revert, and verify's view of approvals and reverts."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from evolving_agent.memory.authority import Approval, Writer
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc
from tests.helpers.review import IDENTITY, add, head, queue, set_identity, snapshot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    monkeypatch.setenv("USER", "alice")
    return fresh_root(tmp_path / "memory", set_identity)


def _approve(root: MemoryRoot, review_id: str, text: str) -> str:
    queue(root, review_id, add(text), ["ev-aaaaaaaaaaaa", "ev-bbbbbbbbbbbb"])
    result = run_cli("review", "approve", review_id, "--yes")
    assert result.exit_code == 0, result.output
    return head(root).hexsha


def test_log_lists_identity_changes_with_their_review_ids(root: MemoryRoot) -> None:
    approved = _approve(root, "rev-2026-11-1", "Ask first.")
    repo = git.Repo(root.path)
    human, init = (c.hexsha for c in repo.iter_commits(f"{approved}~1"))
    day = head(root).committed_datetime.strftime("%Y-%m-%d")

    result = run_cli("canon", "log")

    assert result.exit_code == 0
    assert result.output == (
        f"{approved[:10]}  {day}  monthly  rev-2026-11-1   canon: review rev-2026-11-1 adds "
        "to habits\n"
        f"{human[:10]}  {day}  human    -               human: my identity\n"
        f"{init[:10]}  {day}  init     -               init: memory root created by "
        "evolving-agent\n"
    )
    [latest] = json.loads(run_cli("canon", "log", "--json", "-n", "1").output)
    assert latest["commit"] == approved
    assert (latest["actor"], latest["review_id"], latest["approved_by"]) == (
        "monthly",
        "rev-2026-11-1",
        "alice",
    )
    assert latest["evidence_ids"] == ["ev-aaaaaaaaaaaa", "ev-bbbbbbbbbbbb"]
    assert latest["files"] == ["canon/identity.yaml"]


def test_diff_rev_is_the_change_since_rev_and_show_is_one_commit(root: MemoryRoot) -> None:
    first = _approve(root, "rev-2026-11-1", "Ask first.")
    second = _approve(root, "rev-2026-11-2", "Say less.")
    repo = git.Repo(root.path)
    only_second = repo.git.diff(first, second, "--", "canon") + "\n"
    both = repo.git.diff(f"{first}~1", second, "--", "canon") + "\n"
    assert "+  - Say less.\n" in only_second and "+  - Ask first." not in only_second
    assert "+  - Ask first.\n" in both and "+  - Say less.\n" in both

    # As `git diff REV`: everything since REV, not what REV itself changed.
    assert run_cli("canon", "diff", "HEAD~1").output == only_second
    assert run_cli("canon", "diff", first[:10]).output == only_second
    assert run_cli("canon", "diff", f"{first}~1").output == both
    assert run_cli("canon", "diff").output == "(no changes)\n"  # nothing uncommitted
    assert run_cli("canon", "diff", "--worktree").output == "(no changes)\n"

    # One commit: `canon show REV`, by default the newest Canon change.
    shown = run_cli("canon", "show", first[:10])
    assert shown.exit_code == 0
    first_diff = repo.git.diff(f"{first}~1", first, "--", "canon") + "\n"
    assert shown.output.endswith(
        "\n    canon: review rev-2026-11-1 adds to habits\n\n" + first_diff
    )
    assert shown.output.startswith(f"commit {first}\n")
    assert "actor  monthly (approved by alice)\nreview rev-2026-11-1\n" in shown.output
    assert run_cli("canon", "show").output.endswith(only_second)
    data = json.loads(run_cli("canon", "show", "--json", second).output)
    assert (data["commit"], data["review_id"], data["diff"]) == (
        second,
        "rev-2026-11-2",
        only_second,
    )

    # The comparison is with the files on disk, as in git.
    (root.canon / "identity.yaml").write_text(IDENTITY)  # back to before both approvals
    uncommitted = run_cli("canon", "diff").output
    assert "-  - Ask first.\n" in uncommitted and "-  - Say less.\n" in uncommitted
    assert run_cli("canon", "diff", "--worktree").output == uncommitted
    assert run_cli("canon", "diff", f"{first}~1").output == "(no changes)\n"
    both_given = run_cli("canon", "diff", "HEAD~1", "--worktree")
    assert both_given.exit_code == 2
    assert both_given.output.startswith("error: give either REV or --worktree, not both")


@pytest.mark.parametrize("rev", ["no-such-rev", "../../etc", "HEAD~99", "0" * 40])
def test_unknown_revisions_exit_4(root: MemoryRoot, rev: str) -> None:
    before = snapshot(root.path)
    for args in (["diff", rev], ["show", rev], ["revert", rev]):
        result = run_cli("canon", *args)
        assert result.exit_code == 4, args
        assert result.output == f"error: no commit {rev!r} in the memory root's history\n"
    assert snapshot(root.path) == before


def test_revert_of_an_approval_restores_canon_byte_for_byte(root: MemoryRoot) -> None:
    before = {p: (root.canon / p).read_bytes() for p in ("identity.yaml", "policy.yaml")}
    approved = _approve(root, "rev-2026-11-1", "Ask first.")
    assert (root.canon / "identity.yaml").read_bytes() != before["identity.yaml"]

    proc = run_proc("canon", "revert", approved)

    revert = head(root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == (
        f"reverted {approved[:10]}: restored canon/identity.yaml in commit {revert.hexsha[:10]}\n"
    )
    assert {p: (root.canon / p).read_bytes() for p in before} == before
    assert str(revert.message).startswith(
        f"canon: revert {approved[:10]} (canon: review rev-2026-11-1 adds to habits)\n\n"
        f"This reverts commit {approved}.\n\nActor: human\nEvidence-Id: ev-"
    )
    assert run_proc("verify").returncode == 0
    [latest] = json.loads(run_cli("canon", "log", "--json", "-n", "1").output)
    assert (latest["actor"], latest["reverts"]) == ("human", approved)


def test_revert_refuses_to_undo_later_changes_silently(root: MemoryRoot) -> None:
    first = _approve(root, "rev-2026-11-1", "Ask first.")
    second = _approve(root, "rev-2026-11-2", "Then answer.")
    before = snapshot(root.path)

    refused = run_cli("canon", "revert", first)

    assert refused.exit_code == 4
    assert refused.output == (
        f"error: canon/identity.yaml changed again after {first[:10]} (in {second[:10]}); "
        "revert those first, newest first, or pass --force to restore the files exactly as "
        "they were before it\n"
    )
    assert snapshot(root.path) == before
    # Newest first works, and then the older one.
    assert run_cli("canon", "revert", second).exit_code == 0
    assert run_cli("canon", "revert", first, "--force").exit_code == 0
    assert (root.canon / "identity.yaml").read_text() == IDENTITY
    assert run_cli("verify").exit_code == 0


def test_revert_twice_says_there_is_nothing_left(root: MemoryRoot) -> None:
    approved = _approve(root, "rev-2026-11-1", "Ask first.")
    assert run_cli("canon", "revert", approved).exit_code == 0
    again = run_cli("canon", "revert", approved, "--force")
    assert again.exit_code == 4
    assert again.output == (f"error: canon/ already matches the state before {approved[:10]}\n")


def test_revert_of_a_commit_that_added_a_file_removes_it(root: MemoryRoot) -> None:
    Writer(root, "human").write("canon", "notes.md", "A note.\n", message="human: a note")
    added = head(root).hexsha
    assert run_cli("canon", "revert", added).exit_code == 0
    assert not (root.canon / "notes.md").exists()
    assert run_cli("verify").exit_code == 0


def test_verify_flags_a_second_use_of_one_approval(root: MemoryRoot) -> None:
    """Someone resets the decision, reuses the approval, then hides the reset."""
    approved = _approve(root, "rev-2026-11-1", "Ask first.")
    path = root.reviews / "decisions/rev-2026-11-1.json"
    spent = path.read_text()
    path.write_text(json.dumps(json.loads(spent) | {"commit": None}))
    approval = Approval("rev-2026-11-1", "alice", ("ev-aaaaaaaaaaaa",))
    Writer(root, "monthly", approval=approval).write(
        "canon", "identity.yaml", IDENTITY.replace("Ada", "Eve"), message="sneaky"
    )
    second = head(root).hexsha
    path.write_text(spent)

    result = run_cli("verify")

    assert result.exit_code == 5
    assert (
        f"commit {second[:10]} (sneaky): review rev-2026-11-1 was applied by commit "
        f"{approved[:10]}, not this one" in result.output
    )


def test_verify_flags_a_monthly_commit_whose_decision_was_removed(root: MemoryRoot) -> None:
    approved = _approve(root, "rev-2026-11-1", "Ask first.")
    (root.reviews / "decisions/rev-2026-11-1.json").unlink()
    result = run_cli("verify")
    assert result.exit_code == 5
    assert (
        f"commit {approved[:10]} (canon: review rev-2026-11-1 adds to habits): monthly Canon "
        "change without an approved review" in result.output
    )


def test_history_runs_no_program_the_roots_git_config_names(
    root: MemoryRoot, tmp_path: Path
) -> None:
    # Attack: a session with a shell edits memory/.git/config (a diff driver, a textconv,
    # an fsmonitor); `canon diff/show/revert`, run by the human, must not run them.
    approved = _approve(root, "rev-2026-11-1", "Ask first.")
    ran = tmp_path / "ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho "$0 $*" >> {ran}\n')  # what ran, if anything
    evil.chmod(0o755)
    repo = git.Repo(root.path)
    with repo.config_writer() as config:
        config.set_value("diff", "external", str(evil))
        config.set_value('diff "evil"', "textconv", str(evil))
        config.set_value("core", "fsmonitor", str(evil))
    (root.path / ".git" / "info").mkdir(exist_ok=True)
    (root.path / ".git" / "info" / "attributes").write_text("* diff=evil\n")

    shown = run_cli("canon", "show", approved)
    diff = run_cli("canon", "diff", "HEAD~1")
    reverted = run_proc("canon", "revert", approved)

    assert "+  - Ask first.\n" in shown.output and "+  - Ask first.\n" in diff.output
    assert reverted.returncode == 0, reverted.stderr
    assert not ran.exists()
