"""``signing enable / disable / status`` (``cli/signing_cmds.py``) with a real ssh-keygen key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.helpers.keys import ssh_key
from tests.helpers.roots import fresh_root


@pytest.fixture(autouse=True)
def _root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USER", "alice")
    fresh_root(tmp_path / "memory")


def test_status_says_off_until_enabled_then_names_the_key(tmp_path: Path) -> None:
    off = run_cli("signing", "status")
    assert off.exit_code == 0
    assert off.stdout == "signing: off (human authority is a claim; see docs/authority.md)\n"
    key = ssh_key(tmp_path / "id_ed25519")
    enabled = run_cli("signing", "enable", "--key", str(key))
    assert enabled.exit_code == 0, enabled.output
    on = run_cli("signing", "status").stdout.splitlines()
    assert on[0].startswith("signing: on, key SHA256:")
    assert on[1].startswith("pinned: ") and on[2].startswith("allowed signers: ")
    shown = json.loads(run_cli("signing", "status", "--json").stdout)
    assert shown["enabled"] is True and shown["fingerprint"] == on[0].split("key ", 1)[1]


def test_disable_needs_the_key_in_force_and_then_turns_it_off(tmp_path: Path) -> None:
    key = ssh_key(tmp_path / "id_ed25519")
    assert run_cli("signing", "enable", "--key", str(key)).exit_code == 0
    other = ssh_key(tmp_path / "other")
    refused = run_cli("signing", "disable", "--key", str(other))
    assert refused.exit_code == 3, refused.output
    assert run_cli("signing", "status").stdout.startswith("signing: on")
    done = run_cli("signing", "disable")
    assert done.exit_code == 0, done.output
    assert run_cli("signing", "status").stdout.startswith("signing: off")


def test_enable_without_a_key_is_a_usage_error_and_a_missing_key_is_named(tmp_path: Path) -> None:
    assert run_cli("signing", "enable").exit_code == 2
    missing = run_cli("signing", "enable", "--key", str(tmp_path / "nope"))
    assert missing.exit_code == 4 and "nope" in missing.stderr
    assert run_cli("signing", "status").stdout.startswith("signing: off")
