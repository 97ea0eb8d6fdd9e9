"""Commits shipped as git bundles between driver and workers (``search/executors/bundles.py``),
with real repositories: a turn travels whole, and a lying or broken bundle is refused."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evolving_agent.search.executors.bundles import (
    BundleRefused,
    fetch_bundle,
    init_repo,
    make_bundle,
    receive_turn,
    turn_bundle,
)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _commit(repo: Path, text: str) -> str:
    (repo / "value.txt").write_text(text)
    _git(repo, "add", "value.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", text)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def driver(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "driver"
    init_repo(repo)
    return repo, _commit(repo, "1\n")


def _worker_turn(tmp_path: Path, driver: Path, base: str, *texts: str) -> tuple[Path, str]:
    worker = tmp_path / "worker"
    init_repo(worker)
    fetch_bundle(worker, make_bundle(driver, [base]) or b"", "+refs/ea/ship/*:refs/ea/ship/*")
    _git(worker, "checkout", "-q", base)
    commit = base
    for text in texts:
        commit = _commit(worker, text)
    return worker, commit


def test_a_turn_travels_to_the_driver_and_is_measured_there(
    tmp_path: Path, driver: tuple[Path, str]
) -> None:
    repo, base = driver
    worker, commit = _worker_turn(tmp_path, repo, base, "2\n", "2\n3\n")
    change = receive_turn(
        repo, turn_bundle(worker, commit, base), commit=commit, base=base, label="r1-a1-t1"
    )
    assert change.commit == commit and not change.empty and change.lines_changed > 0
    assert _git(repo, "show", f"{commit}:value.txt") == "2\n3"
    assert turn_bundle(worker, base, base) is None  # no edit: nothing to send


def test_nothing_to_send_is_none_and_the_excluded_history_stays_out(
    driver: tuple[Path, str],
) -> None:
    repo, base = driver
    assert make_bundle(repo, [base], exclude=[base]) is None
    later = _commit(repo, "2\n")
    small = make_bundle(repo, [later], exclude=[base])
    whole = make_bundle(repo, [later])
    assert small is not None and whole is not None and len(small) < len(whole)


def test_a_bundle_that_does_not_hold_the_announced_commit_is_refused(
    tmp_path: Path, driver: tuple[Path, str]
) -> None:
    repo, base = driver
    worker, commit = _worker_turn(tmp_path, repo, base, "2\n")
    data = turn_bundle(worker, commit, base)
    with pytest.raises(BundleRefused, match="worker announced"):
        receive_turn(repo, data, commit=base, base=base, label="lie")
    with pytest.raises(BundleRefused):
        receive_turn(repo, b"not a bundle", commit=commit, base=base, label="junk")
    with pytest.raises(BundleRefused):  # no bundle, and the driver lacks the commit
        receive_turn(repo, None, commit="f" * 40, base=base, label="none")


def test_a_bundle_needing_commits_the_receiver_lacks_is_refused(
    tmp_path: Path, driver: tuple[Path, str]
) -> None:
    repo, base = driver
    worker, commit = _worker_turn(tmp_path, repo, base, "2\n")
    stranger = tmp_path / "stranger"
    init_repo(stranger)
    _commit(stranger, "other\n")
    with pytest.raises(BundleRefused):
        receive_turn(
            stranger, turn_bundle(worker, commit, base), commit=commit, base=base, label="t"
        )
    shutil.rmtree(worker)
