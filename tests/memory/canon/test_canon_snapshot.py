"""The Canon snapshot: boot serves disk only when it matches the last writer commit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evolving_agent.memory.canon.canon import IDENTITY_FILE
from evolving_agent.memory.canon.canon_snapshot import (
    check_canon_snapshot,
    load_canon,
    record_canon_snapshot,
    state_file,
)
from evolving_agent.memory.canon.gitrepo import commit_contents, head_commit
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root

IDENTITY = IDENTITY_FILE  # inside canon/, as load_canon names it
IDENTITY_PATH = f"canon/{IDENTITY_FILE}"  # in the root, as git names it


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_a_fresh_root_serves_its_canon_from_disk(root: MemoryRoot) -> None:
    canon = load_canon(root)
    assert canon.from_disk and canon.problems == []
    assert canon.commit == head_commit(root)
    assert canon.files[IDENTITY] == (root.path / IDENTITY_PATH).read_bytes()
    assert check_canon_snapshot(root) == []


def test_a_hand_edit_is_named_and_the_committed_bytes_are_served(root: MemoryRoot) -> None:
    committed = (root.path / IDENTITY_PATH).read_bytes()
    (root.path / IDENTITY_PATH).write_bytes(committed + b"\nname: someone else\n")
    canon = load_canon(root)
    assert not canon.from_disk
    assert canon.files[IDENTITY] == committed
    assert any("changed behind the writer's back" in p for p in canon.problems)


def test_a_file_added_or_deleted_by_hand_is_named(root: MemoryRoot) -> None:
    (root.path / "canon" / "extra.yaml").write_text("planted: true\n")
    assert any("added by hand" in p for p in check_canon_snapshot(root))
    (root.path / "canon" / "extra.yaml").unlink()
    (root.path / IDENTITY_PATH).unlink()
    assert any("deleted by hand" in p for p in check_canon_snapshot(root))


def test_a_commit_behind_the_writers_back_is_not_trusted(root: MemoryRoot) -> None:
    writer_commit = head_commit(root)
    identity = root.path / IDENTITY_PATH
    identity.write_bytes(identity.read_bytes() + b"\n# edited and committed by hand\n")
    env = {"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
           "GIT_COMMITTER_EMAIL": "x@x", "PATH": "/usr/bin:/bin"}  # fmt: skip
    subprocess.run(["git", "commit", "-qam", "by hand"], cwd=root.path, env=env, check=True)
    canon = load_canon(root)
    assert canon.commit == writer_commit  # served from the last writer commit
    assert any("not the last writer commit" in p for p in canon.problems)


def test_an_edited_snapshot_file_is_named(root: MemoryRoot) -> None:
    state = json.loads(state_file(root).read_text())
    state["files"] = {path: "0" * 40 for path in state["files"]}
    state_file(root).write_text(json.dumps(state))
    assert any("snapshot file was edited" in p for p in check_canon_snapshot(root))


def test_a_writer_commit_is_one_with_its_evidence_and_is_trusted_once_recorded(
    root: MemoryRoot,
) -> None:
    init_commit = head_commit(root)
    identity = root.path / IDENTITY_PATH
    new = identity.read_bytes() + b"\n# a writer edit\n"
    identity.write_bytes(new)
    # An Actor trailer alone is not the writer's mark: the Evidence record is.
    bare = commit_contents(root, {IDENTITY_PATH: new}, "edit", {"Actor": "human"})
    assert record_canon_snapshot(root)["commit"] == bare
    canon = load_canon(root)
    assert canon.commit == init_commit and not canon.from_disk
    assert any(f"commit {bare[:10]} was not made by the writer" in p for p in canon.problems)
    trailers = {"Actor": "human", "Evidence-Id": "ev-test"}
    made = commit_contents(root, {IDENTITY_PATH: new}, "edit", trailers)
    record_canon_snapshot(root)
    canon = load_canon(root)
    assert canon.commit == made and canon.from_disk
    assert canon.files[IDENTITY] == new


def test_a_root_without_history_is_one_clear_error(root: MemoryRoot) -> None:
    subprocess.run(["rm", "-rf", str(root.path / ".git")], check=True)
    problems = check_canon_snapshot(root)
    assert len(problems) == 1 and "no readable git history" in problems[0]
