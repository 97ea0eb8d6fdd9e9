"""review list / show / approve / edit / reject through the real CLI."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.cli import review_cmds
from evolving_agent.errors import WriteDenied
from evolving_agent.memory.authority import Approval, Writer
from evolving_agent.memory.canon.canon_diff import CanonDiff
from evolving_agent.memory.ops.review_trace import queue_pending
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.models import Decision
from tests.helpers import run_cli, run_proc
from tests.helpers.review import (
    IDENTITY,
    add,
    evidence_of,
    head,
    queue,
    set_identity,
    snapshot,
)
from tests.helpers.roots import fresh_root
from tests.helpers.terminal import run_with_typeahead

NEW_HABIT = "Ask before offering options."
APPROVED = IDENTITY.replace(
    "  - Lead with the answer, then the reasoning.\n",
    "  - Lead with the answer, then the reasoning.\n  - Ask before offering options.\n",
)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    monkeypatch.setenv("USER", "alice")
    return fresh_root(tmp_path / "memory", set_identity)


@pytest.fixture
def evidence(root: MemoryRoot) -> list[str]:
    """Two friction events on known days; returns their ids."""
    w = Writer(root, "human")
    first = w.append(
        "friction",
        "Offered three options when one was asked for.",
        ts=datetime(2026, 11, 3, 14, 2),
    )
    second = w.append(
        "friction",
        "Started 'or you could also…' unasked; stopped.",
        ts=datetime(2026, 11, 17, 9, 30),
    )
    return [first.id, second.id]


def test_list_shows_every_review_with_status(root: MemoryRoot) -> None:
    assert run_cli("review", "list").output == (
        "(no reviews queued; the monthly job fills the queue)\n"
    )
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    queue(root, "rev-2026-11-2", add("Be brief.", "values"))
    assert run_cli("review", "reject", "rev-2026-11-2", "--reason", "not a pattern").exit_code == 0
    result = run_cli("review", "list")
    assert result.exit_code == 0
    assert result.output == (
        "rev-2026-11-1  pending   add to habits: 'Ask before offering options.'\n"
        "rev-2026-11-2  rejected  add to values: 'Be brief.'  [by alice: not a pattern]\n"
    )
    listed = json.loads(run_cli("review", "list", "--json").output)
    assert [(r["id"], r["status"]) for r in listed] == [
        ("rev-2026-11-1", "pending"),
        ("rev-2026-11-2", "rejected"),
    ]


def test_show_prints_the_diff_against_canon_and_the_cited_evidence(
    root: MemoryRoot, evidence: list[str]
) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT), [*evidence, "ev-missing00000"])
    result = run_cli("review", "show", "rev-2026-11-1")
    assert result.exit_code == 0
    assert result.output == (
        "review rev-2026-11-1 (pending, from 2026-11)\n"
        "change: add to habits: 'Ask before offering options.'\n"
        "hypothesis: h-options\n"
        "proposals: prop-rev-2026-11-1\n"
        "rationale: Seen on four days.\n"
        "\n"
        "--- a/canon/identity.yaml\n"
        "+++ b/canon/identity.yaml\n"
        "@@ -15,4 +15,5 @@\n"
        " # Habits.\n"
        " habits:\n"
        "   - Lead with the answer, then the reasoning.\n"
        "+  - Ask before offering options.\n"
        " # end of file\n"
        "\n"
        "evidence cited:\n"
        f"  {evidence[0]}  2026-11-03 14:02  friction: Offered three options when one was "
        "asked for.\n"
        f"  {evidence[1]}  2026-11-17 09:30  friction: Started 'or you could also…' unasked; "
        "stopped.\n"
        "  ev-missing00000  (not found in Evidence)\n"
    )


def test_approve_commits_with_provenance_and_keeps_the_humans_comments(
    root: MemoryRoot, evidence: list[str]
) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT), evidence)
    before = head(root).hexsha

    result = run_cli("review", "approve", "rev-2026-11-1", "--yes")

    commit = head(root)
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"approved rev-2026-11-1: commit {commit.hexsha[:10]} (1 of 3 approvals used in "
        "2026-11)\n"  # the month the review belongs to, whenever it is approved
    )
    assert (root.canon / "identity.yaml").read_text() == APPROVED  # every comment kept
    assert commit.parents[0].hexsha == before
    message = str(commit.message)
    assert message.startswith(
        "canon: review rev-2026-11-1 adds to habits\n\n"
        "add to habits: 'Ask before offering options.'\n\nSeen on four days.\n\n"
    )
    assert message.endswith(
        "Review-Id: rev-2026-11-1\nApproved-By: alice\n"
        f"Evidence-Ids: {evidence[0]}, {evidence[1]}\n"
    )
    decision = Decision.model_validate_json(
        (root.reviews / "decisions/rev-2026-11-1.json").read_text()
    )
    assert (decision.status, decision.approver, decision.commit) == (
        "approved",
        "alice",
        commit.hexsha,
    )
    assert evidence_of(root, "review") == [
        {  # the intent, before the decision file: what makes the file the human's
            "actor": "human",
            "text": "approving rev-2026-11-1",
            "review_id": "rev-2026-11-1",
            "action": "approving",
            "approver": "alice",
        },
        {
            "actor": "human",
            "text": "approved rev-2026-11-1: add to habits: 'Ask before offering options.'",
            "review_id": "rev-2026-11-1",
            "action": "approve",
            "approver": "alice",
            "commit": commit.hexsha,
            "evidence_ids": evidence,
        }
    ]
    assert run_cli("verify").exit_code == 0
    shown = run_cli("review", "show", "rev-2026-11-1").output
    assert (
        f"decision: approved by alice on {decision.ts.astimezone():%Y-%m-%d %H:%M} in commit "
        f"{commit.hexsha[:10]}\n\ndiff --git a/canon/identity.yaml b/canon/identity.yaml\n" in shown
    )
    assert "+  - Ask before offering options.\n" in shown


def test_an_approved_review_cannot_be_applied_twice(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    assert run_cli("review", "approve", "rev-2026-11-1", "--yes").exit_code == 0
    sha = head(root).hexsha
    canon = snapshot(root.canon)

    again = run_cli("review", "approve", "rev-2026-11-1", "--yes")
    assert again.exit_code == 4
    today = datetime.now().strftime("%Y-%m-%d")
    assert again.output == (
        f"error: review rev-2026-11-1 was already approved by alice on {today} and applied "
        f"in commit {sha[:10]}; an approval applies once\n"
    )
    # The spent approval no longer opens the writer either.
    approval = Approval("rev-2026-11-1", "alice", ("ev-000000000000",))
    with pytest.raises(WriteDenied, match="review rev-2026-11-1 is not approved"):
        Writer(root, "monthly", approval=approval).write("canon", "identity.yaml", "name: X\n")
    assert head(root).hexsha == sha
    assert snapshot(root.canon) == canon


def test_approve_asks_on_a_terminal_and_no_changes_nothing(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(review_cmds, "_on_terminal", lambda: True)
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    before = snapshot(root.path)

    declined = run_cli("review", "approve", "rev-2026-11-1", input="n\n")

    assert declined.exit_code == 0  # declining is an answer, not a failure
    assert declined.output == (
        "review rev-2026-11-1: add to habits: 'Ask before offering options.'\n"
        "--- a/canon/identity.yaml\n"
        "+++ b/canon/identity.yaml\n"
        "@@ -15,4 +15,5 @@\n"
        " # Habits.\n"
        " habits:\n"
        "   - Lead with the answer, then the reasoning.\n"
        "+  - Ask before offering options.\n"
        " # end of file\n"
        "Apply review rev-2026-11-1 to Canon? [y/N]: n\n"
        "not approved; nothing changed\n"
    )
    assert snapshot(root.path) == before

    accepted = run_cli("review", "approve", "rev-2026-11-1", input="y\n")
    assert accepted.exit_code == 0
    assert accepted.output.endswith(
        "Apply review rev-2026-11-1 to Canon? [y/N]: y\n"
        f"approved rev-2026-11-1: commit {head(root).hexsha[:10]} "
        "(1 of 3 approvals used in 2026-11)\n"
    )
    assert (root.canon / "identity.yaml").read_text() == APPROVED


def test_approve_without_a_terminal_or_yes_refuses_instead_of_hanging(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    before = snapshot(root.path)
    proc = run_proc("review", "approve", "rev-2026-11-1")  # stdin is an empty pipe
    assert proc.returncode == 2
    assert proc.stderr.decode() == (
        "error: approving rev-2026-11-1 needs confirmation and there is no terminal; "
        "pass --yes to approve from a script\n"
    )
    assert snapshot(root.path) == before


def test_a_fourth_approval_for_one_month_is_refused_whenever_it_is_made(
    root: MemoryRoot,
) -> None:
    # The limit counts the month a review belongs to (issue 34: approving November's
    # review in December said "1 of 3 approvals used in 2026-12"), so waiting for the
    # calendar to turn no longer lets a month have a fourth identity diff.
    for n in range(1, 5):
        queue(root, f"rev-2026-11-{n}", add(f"Habit number {n}."))
    queue(root, "rev-2026-12-1", add("A habit of December."), month="2026-12")
    with freeze_time("2026-12-02 10:00:00"):
        for n in range(1, 4):
            assert run_cli("review", "approve", f"rev-2026-11-{n}", "--yes").exit_code == 0
        before = snapshot(root.path)
        fourth = run_cli("review", "approve", "rev-2026-11-4", "--yes")
        assert fourth.exit_code == 3
        assert fourth.output == (
            "error: refused: 3 of 3 identity diffs of 2026-11 already approved (rev-2026-11-1, "
            "rev-2026-11-2, rev-2026-11-3); the monthly limit is reached, so rev-2026-11-4 "
            "stays pending (reject it, or raise review.monthly_limit in canon/policy.yaml)\n"
        )
        assert snapshot(root.path) == before
        # December's own review has December's three places, untouched by November's.
        december = run_cli("review", "approve", "rev-2026-12-1", "--yes")
        assert december.exit_code == 0, december.output
        assert december.output.endswith("(1 of 3 approvals used in 2026-12)\n")
    with freeze_time("2027-01-01 00:01:00"):
        assert run_cli("review", "approve", "rev-2026-11-4", "--yes").exit_code == 3
    assert "  - Habit number 4.\n" not in (root.canon / "identity.yaml").read_text()


def test_monthly_canon_write_without_approval_is_denied_exit_3(root: MemoryRoot) -> None:
    canon = snapshot(root.canon)
    sha = head(root).hexsha
    proc = run_proc("write", "--as", "monthly", "canon", "identity.yaml", input=b"name: Other\n")
    assert proc.returncode == 3
    assert proc.stderr.decode() == (
        "error: write denied: actor 'monthly' may not write canon/identity.yaml: "
        "the monthly job needs an approved review to write canon\n"
    )
    assert snapshot(root.canon) == canon
    assert head(root).hexsha == sha
    assert [d["actor"] for d in evidence_of(root, "write-denied")] == ["monthly"]


def test_pending_but_unapproved_review_does_not_open_the_writer(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    approval = Approval("rev-2026-11-1", "alice")
    with pytest.raises(WriteDenied) as err:
        Writer(root, "monthly", approval=approval).write("canon", "identity.yaml", "name: X\n")
    assert err.value.exit_code == 3
    assert (root.canon / "identity.yaml").read_text() == IDENTITY


BAD_IDS = [
    ("../x", "error: invalid path '../x.json' for layer 'pending': '..' is not allowed"),
    (
        "../../etc/passwd",
        "error: invalid path '../../etc/passwd.json' for layer 'pending': '..' is not allowed",
    ),
    (
        "/etc/passwd",
        "error: invalid path '/etc/passwd.json' for layer 'pending': "
        "absolute paths are not allowed",
    ),
    (
        "pending/rev-2026-11-1",
        "error: invalid path 'pending/rev-2026-11-1.json' for layer "
        "'pending': a review id is a single name",
    ),
    (
        ".hidden",
        "error: invalid path '.hidden.json' for layer 'pending': hidden files are reserved",
    ),
    ("rev-2099-01-1", "error: no review 'rev-2099-01-1' (see 'evolving-agent review list')"),
    ("rev 1", "error: no review 'rev 1' (ids look like rev-2026-11-1)"),
]


@pytest.mark.parametrize(("review_id", "message"), BAD_IDS)
@pytest.mark.parametrize(
    "command",
    [["show"], ["approve", "--yes"], ["edit"], ["reject", "--reason", "no"]],
    ids=["show", "approve", "edit", "reject"],
)
def test_path_traversal_and_unknown_ids_exit_4_and_write_nothing(
    root: MemoryRoot, command: list[str], review_id: str, message: str
) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    before = snapshot(root.path)
    result = run_cli("review", command[0], review_id, *command[1:])
    assert result.exit_code == 4
    assert result.output == message + "\n"
    assert snapshot(root.path) == before


def test_bad_id_as_a_subprocess_exits_4_without_traceback(root: MemoryRoot) -> None:
    proc = run_proc("review", "approve", "../../canon/identity", "--yes")
    assert proc.returncode == 4
    assert proc.stderr.decode() == (
        "error: invalid path '../../canon/identity.json' for layer 'pending': '..' is not allowed\n"
    )


SMALL = """\
values:
  - Say what I know.  # keep
habits:
  - Lead with the answer.
  - Ask first.
"""


def test_removing_over_a_quarter_of_canon_needs_an_extra_confirmation(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_identity(root, SMALL)
    queue(root, "rev-2026-11-1", CanonDiff(section="habits", op="remove", old_text="Ask first."))
    before = snapshot(root.path)

    scripted = run_cli("review", "approve", "rev-2026-11-1", "--yes")
    assert scripted.exit_code == 2
    assert scripted.output == (
        "error: review rev-2026-11-1 removes 1 of 3 Canon entries (33%, more than 25%); "
        "pass --allow-large-removal as well to approve it from a script\n"
    )
    assert snapshot(root.path) == before

    monkeypatch.setattr(review_cmds, "_on_terminal", lambda: True)
    wrong = run_cli("review", "approve", "rev-2026-11-1", input="y\nyes\n")
    assert wrong.exit_code == 0
    assert wrong.output.endswith(
        "Apply review rev-2026-11-1 to Canon? [y/N]: y\n"
        "This removes 1 of 3 Canon entries (33%). Type the review id to confirm: yes\n"
        "not approved; nothing changed\n"
    )
    assert snapshot(root.path) == before

    typed = run_cli("review", "approve", "rev-2026-11-1", input="y\nrev-2026-11-1\n")
    assert typed.exit_code == 0, typed.output
    assert (root.canon / "identity.yaml").read_text() == SMALL.replace("  - Ask first.\n", "")


def test_large_removal_from_a_script_with_the_explicit_flag(root: MemoryRoot) -> None:
    set_identity(root, SMALL)
    queue(
        root, "rev-2026-11-1", CanonDiff(section="values", op="remove", old_text="Say what I know.")
    )
    result = run_cli("review", "approve", "rev-2026-11-1", "--yes", "--allow-large-removal")
    assert result.exit_code == 0, result.output
    assert (root.canon / "identity.yaml").read_text() == (
        "values: []\nhabits:\n  - Lead with the answer.\n  - Ask first.\n"
    )


def test_a_quarter_exactly_needs_no_extra_confirmation(root: MemoryRoot) -> None:
    queue(
        root,
        "rev-2026-11-1",
        CanonDiff(
            section="habits", op="remove", old_text="Lead with the answer, then the reasoning."
        ),
    )  # 1 of IDENTITY's 4 entries
    assert run_cli("review", "approve", "rev-2026-11-1", "--yes").exit_code == 0


EDITOR_SCRIPT = """\
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace({old!r}, {new!r}))
"""


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR_SCRIPT.format(old=old, new=new))
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)


def test_edit_opens_the_editor_and_approval_applies_the_edited_text(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    pending_before = (root.reviews / "pending/rev-2026-11-1.json").read_bytes()
    _editor(tmp_path, monkeypatch, NEW_HABIT, "Ask before offering alternatives.")

    result = run_cli("review", "edit", "rev-2026-11-1")

    assert result.exit_code == 0, result.output
    assert (
        result.output
        == "edited rev-2026-11-1: add to habits: 'Ask before offering alternatives.'\n"
    )
    # The monthly job's file is untouched; the human's edit is recorded separately.
    assert (root.reviews / "pending/rev-2026-11-1.json").read_bytes() == pending_before
    edits = evidence_of(root, "review")
    assert [(e["action"], e["editor"]) for e in edits] == [("edit", "alice")]
    shown = run_cli("review", "show", "rev-2026-11-1").output
    assert "change: add to habits: 'Ask before offering alternatives.' (edited)\n" in shown
    assert "originally: add to habits: 'Ask before offering options.'\n" in shown
    assert "+  - Ask before offering alternatives.\n" in shown

    assert run_cli("review", "approve", "rev-2026-11-1", "--yes").exit_code == 0
    identity = (root.canon / "identity.yaml").read_text()
    assert identity == APPROVED.replace(NEW_HABIT, "Ask before offering alternatives.")
    decision = json.loads((root.reviews / "decisions/rev-2026-11-1.json").read_text())
    assert decision["diff"]["text"] == "Ask before offering alternatives."


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "op: add",
            "op: frobnicate",
            "<edited review rev-2026-11-1>: op: Input should be 'add', 'remove' or 'replace'",
        ),
        (
            "op: add",
            "op: replace",
            "<edited review rev-2026-11-1>: a 'replace' diff needs old_text\n",
        ),
        (
            "section: habits",
            "section: [",
            "<edited review rev-2026-11-1>:8: malformed YAML: expected ',' or ']', but got ':'\n",
        ),
        (
            "op: add\n",
            "op: remove\nold_text: Not in Canon.\n",
            "canon/identity.yaml: habits: the entry 'Not in Canon.' is not in Canon",
        ),
    ],
)
def test_an_invalid_edit_is_refused_and_nothing_is_recorded(
    root: MemoryRoot,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    old: str,
    new: str,
    message: str,
) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    before = snapshot(root.path)
    _editor(tmp_path, monkeypatch, old, new)
    result = run_cli("review", "edit", "rev-2026-11-1")
    assert result.exit_code == 4
    assert result.output.startswith("error: " + message)
    assert snapshot(root.path) == before


def test_edit_saved_unchanged_records_nothing(
    root: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    before = snapshot(root.path)
    _editor(tmp_path, monkeypatch, "habits", "habits")  # saves the same text
    result = run_cli("review", "edit", "rev-2026-11-1")
    assert (result.exit_code, result.output) == (0, "no change; nothing recorded\n")
    assert snapshot(root.path) == before


def test_reject_records_the_reason_in_evidence(root: MemoryRoot, evidence: list[str]) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT), evidence)
    canon = snapshot(root.canon)
    result = run_cli("review", "reject", "rev-2026-11-1", "--reason", "one bad week, not a pattern")
    assert result.exit_code == 0
    assert result.output == "rejected rev-2026-11-1: one bad week, not a pattern\n"
    assert snapshot(root.canon) == canon
    [record] = evidence_of(root, "review")
    assert record["text"] == "rejected rev-2026-11-1: one bad week, not a pattern"
    assert record["reason"] == "one bad week, not a pattern"
    assert record["evidence_ids"] == evidence
    again = run_cli("review", "approve", "rev-2026-11-1", "--yes")
    assert again.exit_code == 4
    assert again.output.startswith("error: review rev-2026-11-1 was rejected by alice on ")
    assert run_cli("review", "reject", "rev-2026-11-1", "--reason", "x").exit_code == 4
    empty = run_cli("review", "reject", "rev-2026-11-1", "--reason", "  ")
    assert (empty.exit_code, empty.output) == (
        4,
        "error: a rejection needs a reason (--reason TEXT)\n",
    )


def test_approve_refuses_while_canon_has_uncommitted_edits(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    identity = root.canon / "identity.yaml"
    identity.write_text(IDENTITY + "# sneaky\n")
    result = run_cli("review", "approve", "rev-2026-11-1", "--yes")
    assert result.exit_code == 4
    assert result.output == (
        f"error: {identity}: has changes that were not committed through the writer; run "
        "'evolving-agent verify', then commit them as the human or undo them\n"
    )
    assert identity.read_text() == IDENTITY + "# sneaky\n"
    assert not (root.reviews / "decisions/rev-2026-11-1.json").exists()


def test_a_denied_canon_write_backs_out_the_decision(root: MemoryRoot) -> None:
    """If the policy takes Canon away from the monthly job, approval changes nothing."""
    policy = root.canon / "policy.yaml"
    Writer(root, "human").write(
        "canon", "policy.yaml", policy.read_text() + "write:\n  canon: [human]\n"
    )
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    canon = snapshot(root.canon)
    result = run_cli("review", "approve", "rev-2026-11-1", "--yes")
    assert result.exit_code == 3
    assert (
        result.output == "error: write denied: actor 'monthly' may not write canon/identity.yaml\n"
    )
    assert snapshot(root.canon) == canon
    assert not (root.reviews / "decisions/rev-2026-11-1.json").exists()
    assert run_cli("review", "list", "--json").output.count('"status": "pending"') == 1


def _half_decided(root: MemoryRoot, review_id: str) -> None:
    """The state after a crash between writing the decision and committing Canon."""
    decision = Decision(
        review_id=review_id,
        status="approved",
        approver="alice",
        ts=datetime.now(UTC),
        diff=add(NEW_HABIT),
    )
    human = Writer(root, "human")
    human.append(  # what approve records before it writes the decision
        "review",
        f"approving {review_id}",
        data={"review_id": review_id, "action": "approving", "approver": "alice"},
    )
    human.write("decisions", f"{review_id}.json", decision.model_dump_json())


def test_a_planted_approval_is_unverifiable_never_an_interrupted_one(root: MemoryRoot) -> None:
    # Guards issue 31's forged approval that showed as "applying ... interrupted: run
    # 'review approve' again", inviting the human to finish it.
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    planted = Decision(
        review_id="rev-2026-11-1",
        status="approved",
        approver="alice",
        ts=datetime.now(UTC),
        diff=add(NEW_HABIT),
    )
    path = root.reviews / "decisions" / "rev-2026-11-1.json"
    path.write_text(planted.model_dump_json())
    before = head(root).hexsha
    listed = run_cli("review", "list")
    assert listed.exit_code == 0, listed.output
    assert "rev-2026-11-1  unverifiable" in listed.output
    assert "interrupted" not in listed.output
    shown = run_cli("review", "show", "rev-2026-11-1", "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["status"] == "unverifiable"
    result = run_cli("review", "approve", "rev-2026-11-1", "--yes")
    assert result.exit_code == 5, result.output
    assert "that no human's Evidence record made" in result.output
    assert head(root).hexsha == before
    verify = run_cli("verify")
    assert verify.exit_code == 5
    assert f"{path}: an approval that no human's Evidence record made" in verify.output


def test_a_malformed_decision_is_reported_by_verify(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    path = root.reviews / "decisions" / "rev-2026-11-1.json"
    path.write_text('{"review_id": "rev-2026-11-1", "status": "maybe"}')
    verify = run_cli("verify")
    assert verify.exit_code == 5
    assert f"{path}: not a decision (" in verify.output
    listed = run_cli("review", "list")
    assert listed.exit_code == 0 and "unverifiable" in listed.output


def test_rerunning_an_interrupted_approval_finishes_it(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    _half_decided(root, "rev-2026-11-1")
    before = head(root).hexsha
    listed = run_cli("review", "list").output
    assert "rev-2026-11-1  applying" in listed

    result = run_cli("review", "approve", "rev-2026-11-1")  # no prompt: already decided

    assert result.exit_code == 0, result.output
    assert result.output.startswith("finishing the interrupted approval of rev-2026-11-1\n")
    assert head(root).parents[0].hexsha == before
    assert (root.canon / "identity.yaml").read_text() == APPROVED
    assert run_cli("verify").exit_code == 0


def test_crash_after_the_canon_file_was_written_but_not_committed(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    _half_decided(root, "rev-2026-11-1")
    (root.canon / "identity.yaml").write_text(APPROVED)  # atomic write done, commit not
    assert run_cli("review", "approve", "rev-2026-11-1").exit_code == 0
    assert run_cli("verify").exit_code == 0
    assert (root.canon / "identity.yaml").read_text() == APPROVED


def test_crash_after_the_commit_records_it_without_a_second_commit(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    assert run_cli("review", "approve", "rev-2026-11-1", "--yes").exit_code == 0
    sha = head(root).hexsha
    path = root.reviews / "decisions/rev-2026-11-1.json"
    unrecorded = json.loads(path.read_text()) | {"commit": None}
    path.write_text(json.dumps(unrecorded))  # as if killed before step 4

    result = run_cli("review", "approve", "rev-2026-11-1")

    assert result.exit_code == 0, result.output
    assert head(root).hexsha == sha
    assert json.loads(path.read_text())["commit"] == sha
    assert run_cli("verify").exit_code == 0


def test_concurrent_approvals_never_exceed_the_monthly_limit(root: MemoryRoot) -> None:
    """Two real processes race for the last approval of the month: exactly one wins."""
    for n in range(1, 5):
        queue(root, f"rev-2026-11-{n}", add(f"Habit number {n}."))
    for n in (1, 2):
        assert run_cli("review", "approve", f"rev-2026-11-{n}", "--yes").exit_code == 0
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evolving_agent",
                "review",
                "approve",
                f"rev-2026-11-{n}",
                "--yes",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n in (3, 4)
    ]
    outcomes = sorted(p.wait(timeout=120) for p in procs)
    for p in procs:
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()
        p.stderr.close()
    assert outcomes == [0, 3]
    identity = (root.canon / "identity.yaml").read_text()
    assert sum(f"  - Habit number {n}.\n" in identity for n in range(1, 5)) == 3
    statuses = [r["status"] for r in json.loads(run_cli("review", "list", "--json").output)]
    assert sorted(statuses) == ["approved", "approved", "approved", "pending"]
    assert run_cli("verify").exit_code == 0


def _read_until(fd: int, marker: bytes) -> bytes:
    seen = b""
    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, f"no {marker!r} from the terminal; got {seen!r}"
        seen += os.read(fd, 4096)
    return seen


def test_a_real_terminal_gets_the_prompt(root: MemoryRoot) -> None:
    """On a real pseudo-terminal the prompt appears and the typed answer is taken."""
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "review", "approve", "rev-2026-11-1"],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        close_fds=True,
    )
    os.close(secondary)
    try:
        shown = _read_until(primary, b"Apply review rev-2026-11-1 to Canon? [y/N]: ")
        assert b"+  - Ask before offering options." in shown
        os.write(primary, b"y\n")
        _read_until(primary, b"approved rev-2026-11-1: commit ")
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(primary)
    assert (root.canon / "identity.yaml").read_text() == APPROVED


def _approve_on_a_pty_holding(root: MemoryRoot, waiting: bytes) -> tuple[int, bytes, bytes]:
    """``review approve rev-2026-11-1`` on a real terminal where ``waiting`` was typed
    before it started: (exit code, what it showed, what it left unread)."""
    return run_with_typeahead(["review", "approve", "rev-2026-11-1"], waiting)


@pytest.mark.slow
def test_lines_pasted_after_approve_are_left_for_the_shell(root: MemoryRoot) -> None:
    # Newcomer snag: pasting the README tour, the [y/N] prompt read each later pasted
    # command as an answer (re-asking after each), so none of them ever ran.
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    pasted = b"evolving-agent canon log\nevolving-agent canon show\n"
    code, shown, left = _approve_on_a_pty_holding(root, pasted)
    assert code == 2
    assert left == pasted  # still there, for the shell to run next
    assert b"[y/N]" not in shown  # the terminal echoes the paste; then one line, no prompt
    assert shown.endswith(
        b"\r\nerror: approving rev-2026-11-1 asks a question, but lines pasted after the command "
        b"are waiting (left for the shell to run); run 'evolving-agent review approve "
        b"rev-2026-11-1' on its own to answer it, or pass --yes\r\n"
    )
    assert (root.canon / "identity.yaml").read_text() != APPROVED


@pytest.mark.slow
def test_a_y_typed_before_the_prompt_is_its_answer(root: MemoryRoot) -> None:
    # What the README tour's own test does: the "y" is in the terminal before the prompt.
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    code, shown, left = _approve_on_a_pty_holding(root, b"y\n")
    assert code == 0 and left == b""
    assert b"Apply review rev-2026-11-1 to Canon? [y/N]: y (typed ahead)\r\n" in shown
    assert b"approved rev-2026-11-1: commit " in shown
    assert (root.canon / "identity.yaml").read_text() == APPROVED


def test_a_damaged_queue_file_is_named(root: MemoryRoot) -> None:
    queue(root, "rev-2026-11-1", add(NEW_HABIT))
    queue_pending(
        Writer(root, "monthly"),
        "rev-2026-11-2",
        '{"id": "rev-2026-11-2"}',
        by="monthly",
        run="test",
    )
    result = run_cli("review", "list")
    assert result.exit_code == 4
    assert result.output == (
        f"error: {root.reviews / 'pending/rev-2026-11-2.json'}: month: Field required\n"
    )
    Writer(root, "monthly").delete("pending", "rev-2026-11-2.json")
    Writer(root, "monthly").write("pending", "notes here.json", "{}")
    assert run_cli("review", "list").output == (
        f"error: {root.reviews / 'pending/notes here.json'}: not a review file "
        "(ids look like rev-2026-11-1)\n"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["review", "list"],
        ["review", "show"],
        ["review", "approve"],
        ["review", "edit"],
        ["review", "reject"],
        ["canon", "log"],
        ["canon", "diff"],
        ["canon", "revert"],
    ],
    ids=" ".join,
)
def test_every_review_and_canon_command_has_help_with_an_example(command: list[str]) -> None:
    result = run_cli(*command, "--help")
    assert result.exit_code == 0
    assert f"Usage: cli {' '.join(command)} " in result.output
    assert f"Example:\n    evolving-agent {' '.join(command)}" in result.output.replace(
        "EDITOR=nano ", ""
    )


# A newcomer's snag.
def test_review_list_pending_ids_is_what_a_script_needs(tmp_path: Path) -> None:
    from tests.helpers.review import add, queue, set_identity

    root = fresh_root(tmp_path / "memory")
    set_identity(root)
    queue(root, "rev-2026-11-1", add("Ask first."))
    queue(root, "rev-2026-11-2", add("Say less."))
    assert run_cli("review", "approve", "rev-2026-11-1", "--yes").exit_code == 0
    assert run_cli("review", "list", "--ids").output == "rev-2026-11-1\nrev-2026-11-2\n"
    assert run_cli("review", "list", "--pending", "--ids").output == "rev-2026-11-2\n"
    pending = json.loads(run_cli("review", "list", "--pending", "--json").output)
    assert [r["id"] for r in pending] == ["rev-2026-11-2"]
