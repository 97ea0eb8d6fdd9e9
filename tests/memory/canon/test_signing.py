"""Signed human authority (memory/canon/signing.py) with real SSH keys, real git and ssh-keygen.

Guards the issue's door "human approval is a claim": with signing on, a human commit or
decision made without the pinned key is tampering, in verify and at boot.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evolving_agent.memory import authority
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.canon.signing import SigningState, pin, public_key_of, signing_state
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.models import Decision
from tests.helpers import run_cli
from tests.helpers.review import IDENTITY, add, queue, set_identity
from tests.helpers.roots import fresh_root


def _key(path: Path) -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(path)],
        check=True,
    )
    return path


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    monkeypatch.setenv("USER", "alice")
    root = fresh_root(tmp_path / "memory")
    set_identity(root)
    return root


@pytest.fixture
def signed(root: MemoryRoot, tmp_path: Path) -> MemoryRoot:
    key = _key(tmp_path / "human_key")
    result = run_cli("signing", "enable", "--key", str(key))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("signing enabled: key SHA256:")
    return root


def _signature(root: MemoryRoot, rev: str = "HEAD") -> str:
    state = signing_state(root)
    return subprocess.run(
        ["git", "-c", "gpg.format=ssh", "-c", f"gpg.ssh.allowedSignersFile={state.allowed_signers}",
         "log", "-1", "--format=%G?", rev],
        cwd=root.path, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def test_without_signing_verify_says_human_is_a_claim(root: MemoryRoot) -> None:
    result = run_cli("verify")
    assert result.exit_code == 0
    assert "note: human authority is a claim: signing is off" in result.output
    assert run_cli("signing", "status").output.startswith("signing: off")


def test_signed_commits_and_decisions_verify(signed: MemoryRoot, tmp_path: Path) -> None:
    root = signed
    status = json.loads(run_cli("signing", "status", "--json").output)
    assert status["enabled"] is True and status["fingerprint"].startswith("SHA256:")
    pinned = Path(status["pinned"])
    assert pinned.is_file() and not pinned.is_relative_to(root.path)  # outside the root
    Writer(root, "human").write("canon", "identity.yaml", IDENTITY + "# signed\n", message="x")
    assert _signature(root) == "G"
    queue(root, "rev-2026-11-1", add("Ask before offering options."))
    assert run_cli("review", "approve", "rev-2026-11-1", "--yes").exit_code == 0
    assert (root.area_dir("decisions") / "rev-2026-11-1.json.sig").is_file()
    result = run_cli("verify")
    assert result.exit_code == 0, result.output
    assert "is a claim" not in result.output
    assert run_cli("boot").exit_code == 0


def test_a_forged_unsigned_decision_is_tampering(signed: MemoryRoot) -> None:
    root = signed
    queue(root, "rev-2026-11-1", add("Ask before offering options."))
    forged = Decision(
        review_id="rev-2026-11-1",
        status="rejected",
        approver="alice",
        ts="2026-12-01T10:00:00+00:00",  # type: ignore[arg-type]
        reason="not me",
    )
    path = root.area_dir("decisions") / "rev-2026-11-1.json"
    path.write_text(forged.model_dump_json())
    result = run_cli("verify")
    assert result.exit_code == 5
    assert f"{path}: a human decision without a valid signature by the pinned key" in (
        result.output
    )


def test_a_forged_approval_cannot_open_the_writer(signed: MemoryRoot) -> None:
    from evolving_agent.errors import WriteDenied
    from evolving_agent.memory.authority import Approval

    root = signed
    queue(root, "rev-2026-11-1", add("Never ask before destructive commands."))
    forged = Decision(
        review_id="rev-2026-11-1",
        status="approved",
        approver="alice",
        ts="2026-12-01T10:00:00+00:00",  # type: ignore[arg-type]
    )
    (root.area_dir("decisions") / "rev-2026-11-1.json").write_text(forged.model_dump_json())
    with pytest.raises(WriteDenied, match="decision on rev-2026-11-1 is not signed"):
        Writer(root, "monthly", approval=Approval("rev-2026-11-1", "alice")).write(
            "canon", "identity.yaml", IDENTITY + "  - Never ask.\n"
        )


def test_an_unsigned_human_commit_is_refused_and_then_reported(
    signed: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = signed
    pinned = Path(json.loads(run_cli("signing", "status", "--json").output)["pinned"])
    # The assistant's view: no pinned key in its own config directory.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "assistant-config"))
    denied = run_cli("write", "--as", "human", "canon", "identity.yaml", input=IDENTITY + "#x\n")
    assert denied.exit_code == 3
    assert "signing is on and this user has no pinned signing key" in denied.output
    # It deletes the root's marker too: Evidence still says signing is on, so the
    # writer still refuses an unsigned "human" commit.
    (root.state / "signing.json").unlink()
    again = run_cli("write", "--as", "human", "canon", "identity.yaml", input=IDENTITY + "#x\n")
    assert again.exit_code == 3, again.output
    # Behind the writer's back, it commits as the writer would, unsigned.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(authority, "in_force", lambda _root: SigningState(enabled=False))
        Writer(root, "human").write("canon", "identity.yaml", IDENTITY + "#x\n")
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root.path, capture_output=True, text=True, check=True
    ).stdout.strip()
    # The human's view (the pinned record) finds both.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(pinned.parents[2]))
    result = run_cli("verify")
    assert result.exit_code == 5, result.output
    assert "the root's signing marker is gone" in result.output
    assert f"commit {sha[:10]}" in result.output and "a human commit that is not signed" in (
        result.output
    )
    boot = run_cli("boot")
    assert boot.exit_code == 5 and "signing marker is gone" in boot.output


def test_a_commit_signed_by_another_key_is_reported(
    signed: MemoryRoot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = Path(json.loads(run_cli("signing", "status", "--json").output)["pinned"])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "assistant-config"))
    other = _key(tmp_path / "assistant_key")
    refused = run_cli("signing", "enable", "--key", str(other))
    assert refused.exit_code == 3, refused.output
    assert "must be signed by that key" in refused.output
    # By hand, what 'signing enable' used to do: pin its own key over the human's.
    pin(signed, key=other, public_key=public_key_of(other), since="",
        decisions_before=[], trusted=[])  # fmt: skip
    assert (
        run_cli(
            "write", "--as", "human", "canon", "identity.yaml", input=IDENTITY + "#y\n"
        ).exit_code
        == 0
    )  # noqa: E501
    monkeypatch.setenv("XDG_CONFIG_HOME", str(pinned.parents[2]))
    result = run_cli("verify")
    assert result.exit_code == 5
    assert "names key SHA256:" in result.output and "but Evidence record ev-" in result.output
    assert "signed, but by no key the signing chain pinned" in result.output
    boot = run_cli("boot")
    assert boot.exit_code == 5
