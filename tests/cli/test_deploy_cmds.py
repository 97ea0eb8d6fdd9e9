"""``deploy os-users`` (``cli/deploy_cmds.py``): its refusals, before anything changes.

The deployment itself (real OS users, setpriv) is tests/memory/sync/test_deploy.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.helpers.review import snapshot
from tests.helpers.roots import fresh_root


def _modes(path: Path) -> dict[str, tuple[int, int, int]]:
    return {str(p): (p.stat().st_mode, p.stat().st_uid, p.stat().st_gid) for p in path.rglob("*")}


@pytest.mark.parametrize(
    ("human", "assistant", "group", "says"),
    [
        ("nobody", "nobody", None, "--human and --assistant must be two different OS users"),
        ("nobody", "root", None, "--assistant may not be root: root can write everything"),
        ("root", "nobody", "no-such-group-ea", "--group 'no-such-group-ea': no such group"),
        ("no-such-user-ea", "nobody", None, "no-such-user-ea"),
    ],
)
def test_a_deployment_that_cannot_hold_is_refused_with_nothing_changed(
    human: str, assistant: str, group: str | None, says: str, tmp_path: Path
) -> None:
    root = fresh_root(tmp_path / "memory")
    files, modes = snapshot(root.path), _modes(root.path)
    args = ["deploy", "os-users", "--human", human, "--assistant", assistant]
    result = run_cli(*args, *(["--group", group] if group else []))
    assert result.exit_code == 4, result.output
    assert says in result.stderr and len(result.stderr.splitlines()) == 1
    assert snapshot(root.path) == files and _modes(root.path) == modes


def test_both_users_are_required() -> None:
    result = run_cli("deploy", "os-users", "--human", "alice")
    assert result.exit_code == 2 and "--assistant" in result.stderr
