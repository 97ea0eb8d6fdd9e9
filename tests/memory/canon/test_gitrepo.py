"""The root's git repository, read and written only through gitrepo: a real repo each time."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.canon import gitrepo
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _git(root: MemoryRoot, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=root.path, input=data, capture_output=True, check=True
    ).stdout


@pytest.mark.parametrize("data", [b"", b"\0", b"identity: x\n", "ü日本".encode(), b"\xff\xfe"])
def test_blob_sha_is_what_git_hash_object_prints(root: MemoryRoot, data: bytes) -> None:
    printed = _git(root, "hash-object", "--stdin", data=data).decode().strip()
    assert gitrepo.blob_sha(data) == printed


def test_commit_contents_commits_the_given_bytes_not_the_disk(root: MemoryRoot) -> None:
    before = gitrepo.head_commit(root)
    (root.path / "schedule.yaml").write_text("changed on disk after the call\n")
    commit = gitrepo.commit_contents(
        root,
        {"canon/new.yaml": b"given: bytes\n", "crons/nightly": None},
        "a writer commit\n\nwith a body",
        {"Actor": "human", "Evidence-Id": "ev-1"},
    )
    assert gitrepo.head_commit(root) == commit
    assert gitrepo.blob_at(root, commit, "canon/new.yaml") == b"given: bytes\n"
    assert gitrepo.committed_text(root, "canon/new.yaml") == b"given: bytes\n"
    assert gitrepo.committed_blob(root, "crons/nightly") is None  # None deletes
    # schedule.yaml was not in the contents: its committed bytes are the parent's.
    assert gitrepo.blob_at(root, commit, "schedule.yaml") == gitrepo.blob_at(
        root, before or "", "schedule.yaml"
    )
    info = gitrepo.log(root, limit=1)[0]
    assert (info.sha, info.parents, info.summary) == (commit, (before,), "a writer commit")
    assert gitrepo.parse_trailers(info.message) == {"Actor": "human", "Evidence-Id": "ev-1"}
    # git's own index is kept in step with the commit (the disk is the caller's to write).
    assert _git(root, "diff", "--cached", "--name-only").decode() == ""


def test_the_tracked_tree_holds_only_what_the_writer_alone_may_change(root: MemoryRoot) -> None:
    tree = gitrepo.tracked_tree(root)
    assert tree and all(gitrepo.is_tracked(path) for path in tree)
    assert "schedule.yaml" in tree and any(p.startswith("canon/") for p in tree)
    assert gitrepo.tracked_tree(root, "no-such-rev") == {}
    assert not gitrepo.is_tracked("evidence/2026-12-01.jsonl")
    assert not gitrepo.is_tracked("canonical.txt")


def test_a_root_that_lost_its_repository_is_one_clear_error(root: MemoryRoot) -> None:
    assert gitrepo.require_repo(root) == gitrepo.head_commit(root)
    subprocess.run(["rm", "-rf", str(root.path / ".git")], check=True)
    with pytest.raises(InvalidInput, match="no git repository at .*restore its .git"):
        gitrepo.require_repo(root)


@pytest.mark.parametrize("rev", ["", "--all", "-p", "HEAD ~1", "main\tx", "no-such-branch"])
def test_resolve_commit_names_no_commit_for_an_option_or_a_spaced_rev(
    root: MemoryRoot, rev: str
) -> None:
    assert gitrepo.resolve_commit(root, rev) is None
    assert gitrepo.resolve_commit(root, "HEAD") == gitrepo.head_commit(root)


def test_stale_git_locks_of_a_killed_writer_are_cleared(root: MemoryRoot) -> None:
    (root.path / ".git" / "index.lock").write_text("")
    (root.path / ".git" / "refs" / "heads" / "main.lock").write_text("")
    (root.state / "index.12345.tmp").write_text("")
    assert sorted(gitrepo.clear_stale_locks(root)) == [
        ".ea/index.12345.tmp",
        ".git/index.lock",
        ".git/refs/heads/main.lock",
    ]
    assert gitrepo.clear_stale_locks(root) == []
    after = gitrepo.commit_contents(root, {"canon/x.yaml": b"x\n"}, "after", {"Actor": "human"})
    assert gitrepo.head_commit(root) == after  # the next update-ref is not blocked


@settings(max_examples=60)
@given(
    trailers=st.dictionaries(
        st.from_regex(r"[A-Z][A-Za-z-]{0,12}", fullmatch=True),
        st.from_regex(r"[a-z0-9][a-z0-9 .-]{0,20}[a-z0-9]", fullmatch=True),
        max_size=4,
    ),
    body=st.from_regex(r"[a-z ]{1,30}", fullmatch=True),
)
def test_trailers_written_by_commit_contents_read_back(trailers: dict[str, str], body: str) -> None:
    # The message commit_contents writes: message, blank line, one "Key: value" per trailer.
    message = "summary\n\n" + body + "\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
    assert gitrepo.parse_trailers(message) == trailers
