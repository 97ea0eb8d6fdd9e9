"""Talking to the remote (``memory/sync/remote.py``): the remotes file, fetch, push and the
refusal of a rewritten branch - against real bare repositories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.sync import SyncRefused, sync
from evolving_agent.memory.sync.base import DATA_BRANCH, MAIN_BRANCH, incoming, synced
from evolving_agent.memory.sync.remote import (
    absolute_url,
    add_remote,
    check_not_rewritten,
    fetch,
    git_reason,
    load_remotes,
    offline_reason,
    remote_status,
    resolve_remote,
)
from tests.helpers.roots import fresh_root
from tests.helpers.sync import bare, friction


def test_the_first_remote_is_the_default_and_a_path_is_kept_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fresh_root(tmp_path / "memory")
    monkeypatch.chdir(tmp_path)
    add_remote(root, "origin", "remote.git")
    add_remote(root, "usb", "/media/usb/me.git")
    remotes = load_remotes(root)
    assert remotes.remotes == {"origin": str(tmp_path / "remote.git"), "usb": "/media/usb/me.git"}
    assert remotes.default == "origin"
    assert resolve_remote(root, None) == ("origin", str(tmp_path / "remote.git"))
    assert resolve_remote(root, "usb") == ("usb", "/media/usb/me.git")
    with pytest.raises(InvalidInput, match=r"unknown remote 'nas' \(known: origin, usb\)"):
        resolve_remote(root, "nas")


def test_bad_names_urls_and_duplicates_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    with pytest.raises(InvalidInput, match="no remote to sync with"):
        resolve_remote(root, None)
    for name, url in [("a b", "/x"), ("ok", "--upload-pack=evil"), ("ok", "ext::sh -c x")]:
        with pytest.raises(InvalidInput, match="invalid remote"):
            add_remote(root, name, url)
    assert not (root.state / "remotes.json").exists()
    add_remote(root, "origin", "/x")
    with pytest.raises(InvalidInput, match=r"remote 'origin' already exists \(/x\)"):
        add_remote(root, "origin", "/y")


def test_a_malformed_remotes_file_is_named(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    (root.state / "remotes.json").write_text(json.dumps({"remotes": {}, "extra": 1}))
    with pytest.raises(InvalidInput, match=r"remotes\.json: malformed remotes file"):
        load_remotes(root)


@pytest.mark.parametrize(
    "url", ["ssh://host/me.git", "git@host:me.git", "host:me.git", "https://h/me.git"]
)
def test_a_network_url_is_kept_as_written(url: str) -> None:
    assert absolute_url(url) == url


def test_fetching_from_nowhere_fails_with_gits_reason_and_changes_no_ref(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    res = fetch(root, "origin", str(tmp_path / "missing.git"))
    assert not res.ok
    assert offline_reason(res).startswith("fatal: ")
    assert "missing.git" in offline_reason(res)
    assert gitrepo.ref(root, incoming("origin", MAIN_BRANCH)) is None


def test_fetch_brings_the_remotes_branches_under_incoming(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    remote = bare(tmp_path / "remote.git")
    add_remote(root, "origin", str(remote))
    sync(root)
    other = fresh_root(tmp_path / "other")
    assert fetch(other, "there", str(remote)).ok
    assert gitrepo.ref(other, incoming("there", DATA_BRANCH)) == gitrepo.ref(
        root, synced("origin", DATA_BRANCH)
    )


def test_a_force_pushed_branch_is_refused_by_name(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    remote = bare(tmp_path / "remote.git")
    add_remote(root, "origin", str(remote))
    sync(root)
    before = gitrepo.ref(root, synced("origin", DATA_BRANCH))
    assert before is not None
    friction(root, "a second day")
    sync(root)
    # The remote is put back to the first data commit behind this device's back.
    subprocess.run(
        ["git", "-C", str(remote), "update-ref", f"refs/heads/{DATA_BRANCH}", before], check=True
    )
    assert fetch(root, "origin", str(remote)).ok
    with pytest.raises(SyncRefused, match=f"rewrote branch '{DATA_BRANCH}'"):
        check_not_rewritten(root, "origin")
    subprocess.run(
        ["git", "-C", str(remote), "branch", "-D", DATA_BRANCH], check=True, capture_output=True
    )
    assert fetch(root, "origin", str(remote)).ok
    with pytest.raises(SyncRefused, match=f"no longer has branch '{DATA_BRANCH}'"):
        check_not_rewritten(root, "origin")


def test_remote_show_counts_what_waits_to_be_pushed(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    add_remote(root, "origin", str(bare(tmp_path / "remote.git")))
    sync(root)
    friction(root, "one")
    friction(root, "two")
    [status] = remote_status(root)
    assert status["name"] == "origin" and status["default"] is True
    assert status["unpushed_events"] == 2
    assert status["last_synced_data"] == gitrepo.ref(root, synced("origin", DATA_BRANCH))


def test_git_reason_keeps_every_fatal_line_and_drops_git_s_advice() -> None:
    ssh = (
        "ssh: Could not resolve hostname desktop: Name or service not known\r\n"
        "fatal: Could not read from remote repository.\n\n"
        "Please make sure you have the correct access rights\n"
        "and the repository exists.\n"
    )
    assert git_reason(ssh) == (
        "ssh: Could not resolve hostname desktop: Name or service not known; "
        "fatal: Could not read from remote repository."
    )
    assert git_reason("warning: odd\nsomething else broke\n") == "something else broke"
    assert git_reason("", 128) == "git exit 128"
