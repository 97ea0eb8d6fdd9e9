"""Signing as a chain of trust (memory/evidence/signing_chain.py): real keys, a real ssh-agent,
real git and the CLI as real processes.

The human's key lives only in an ssh-agent the human's processes reach (its private
file is deleted after ``ssh-add``); the session is the same OS user with the same
config directory, but no agent socket: what ``ssh-add -c`` or a hardware key gives in
practice.  Each test is one of issue 31's doors: re-pin refused, removal detected,
laundering detected, a human Today write unsigned refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolving_agent.memory.canon.signing import config_dir, marker_path
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_proc
from tests.helpers.review import IDENTITY, set_identity
from tests.helpers.roots import fresh_root


def _keygen(path: Path) -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
    )
    return path


@dataclass
class Parties:
    root: MemoryRoot
    human: dict[str, str]  # the human's environment: the agent socket
    session: dict[str, str]  # the session's: same user, same config, no agent
    human_pub: Path
    session_key: Path

    def as_human(self, *args: str, input: str = "") -> tuple[int, str]:
        return _run(self.human, args, input)

    def as_session(self, *args: str, input: str = "") -> tuple[int, str]:
        return _run(self.session, args, input)


def _run(env: dict[str, str], args: tuple[str, ...], input: str) -> tuple[int, str]:
    done = run_proc(*args, input=input.encode(), env=env)
    return done.returncode, (done.stdout + done.stderr).decode()


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[str]:
    """A real ssh-agent in the foreground (-D), ended by its pid; its socket path."""
    # A socket path must fit in 108 bytes: a short directory of its own, not tmp_path.
    short = Path(tempfile.mkdtemp(prefix="ea-agent-", dir="/tmp"))
    sock = short / "s"
    proc = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(sock)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # printed once it listens
    assert first.startswith("SSH_AUTH_SOCK="), proc.stderr.read()
    yield str(sock)
    proc.terminate()
    proc.wait(timeout=30)
    shutil.rmtree(short, ignore_errors=True)


@pytest.fixture
def parties(tmp_path: Path, agent: str, monkeypatch: pytest.MonkeyPatch) -> Parties:
    monkeypatch.setenv("USER", "alice")
    root = fresh_root(tmp_path / "memory")
    set_identity(root)
    key = _keygen(tmp_path / "human_key")
    env = {**os.environ, "SSH_AUTH_SOCK": agent}
    subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, capture_output=True)
    key.unlink()  # only the agent holds the private half now
    human = {"SSH_AUTH_SOCK": agent}
    session = {"SSH_AUTH_SOCK": ""}
    parties = Parties(root, human, session, key.with_suffix(".pub"), _keygen(tmp_path / "s_key"))
    code, out = parties.as_human("signing", "enable", "--key", str(parties.human_pub))
    assert code == 0, out
    assert out.startswith("signing enabled: key SHA256:")
    return parties


def _signing_records(p: Parties) -> list[dict[str, object]]:
    code, out = p.as_human("evidence", "show", "--json")
    assert code == 0, out
    return [r for r in json.loads(out) if r["kind"] == "signing"]


def _fingerprint(p: Parties) -> str:
    code, out = p.as_human("signing", "status", "--json")
    assert code == 0, out
    return str(json.loads(out)["fingerprint"])


def test_the_enable_is_a_signed_evidence_record_and_verifies(parties: Parties) -> None:
    p = parties
    (record,) = _signing_records(p)
    assert record["actor"] == "human" and record["data"]["action"] == "enable"  # type: ignore[index]
    assert str(record["text"]).startswith("signing enabled: key SHA256:")
    code, out = p.as_human("write", "--as", "human", "canon", "identity.yaml", input=IDENTITY)
    assert code == 0, out
    code, out = p.as_human("verify")
    assert code == 0, out


def test_a_repin_or_disable_by_the_session_is_refused(parties: Parties) -> None:
    p = parties
    before = _fingerprint(p)
    code, out = p.as_session("signing", "enable", "--key", str(p.session_key))
    assert code == 3, out
    assert f"signing's key in force is {before}: a change of pin must be signed by it" in out
    code, out = p.as_session("signing", "disable")
    assert code == 3, out
    assert f"signing's key in force is {before}: turning signing off must be signed by it" in out
    assert _fingerprint(p) == before
    code, out = p.as_human("verify")
    assert code == 0, out


def test_a_repin_signed_by_the_key_in_force_keeps_old_signatures_valid(
    parties: Parties, tmp_path: Path
) -> None:
    p = parties
    code, out = p.as_human("write", "--as", "human", "canon", "identity.yaml", input=IDENTITY)
    assert code == 0, out
    new_key = _keygen(tmp_path / "new_human_key")
    code, out = p.as_human("signing", "enable", "--key", str(new_key))
    assert code == 0, out
    assert out.startswith("signing re-pinned: key SHA256:")
    code, out = p.as_human("verify")
    assert code == 0, out  # the commit signed by the first key still verifies


def test_a_vanished_marker_and_pin_is_tampering_naming_the_record(parties: Parties) -> None:
    p = parties
    (record,) = _signing_records(p)
    for path in [marker_path(p.root), p.root.state / "signing.allowed_signers"]:
        path.unlink()
    for path in (config_dir()).glob("*"):  # the same user's config: the session reaches it
        path.unlink()
    code, out = p.as_session("write", "--as", "human", "canon", "identity.yaml", input=IDENTITY)
    assert code == 3, out  # the chain still says on: an unsigned human commit is refused
    code, out = p.as_human("verify")
    assert code == 5, out
    assert f"signing was turned on by Evidence record {record['id']}" in out
    assert "the root's signing marker is gone" in out
    assert "the pinned record outside the root is gone" in out


def test_laundering_off_unsigned_on_fails(parties: Parties) -> None:
    p = parties
    saved = {path: path.read_bytes() for path in [marker_path(p.root), *config_dir().glob("*")]}
    code, out = p.as_human("signing", "disable")
    assert code == 0, out
    assert out.startswith("signing disabled (Evidence ev-")
    code, out = p.as_session("write", "--as", "human", "canon", "identity.yaml", input=IDENTITY)
    assert code == 0, out  # off: "human" is a claim again (verify says so)
    # The session turns it on again with the human's public key: it cannot sign.
    code, out = p.as_session("signing", "enable", "--key", str(p.human_pub))
    assert code == 3, out
    assert p.as_session("signing", "status")[1].startswith("signing: off")
    code, out = p.as_session("signing", "enable", "--key", str(p.human_pub), "--accept-unsigned")
    assert code == 3, out
    assert "cannot sign with" in out
    # It puts the old marker and pin back by hand: the chain says off.
    for path, data in saved.items():
        path.write_bytes(data)
    code, out = p.as_human("verify")
    assert code == 5, out
    assert "says signing is on, but Evidence record ev-" in out
    for path in saved:
        path.unlink()
    # The human turns it on again: since has not moved; the unsigned commit is named.
    code, out = p.as_human("signing", "enable", "--key", str(p.human_pub))
    assert code == 3, out
    assert "1 human write(s) since signing was first enabled are not signed: commit " in out
    code, out = p.as_human("signing", "enable", "--key", str(p.human_pub), "--accept-unsigned")
    assert code == 0, out
    assert "vouched for 1 unsigned write(s)" in out
    code, out = p.as_human("verify")
    assert code == 0, out


def test_laundering_by_hand_fails_verify(parties: Parties) -> None:
    """The issue's laundering with the files: the session removes marker and pin (off),
    an unsigned human commit lands, and the marker comes back - since does not move."""
    p = parties
    saved = {path: path.read_bytes() for path in [marker_path(p.root), *config_dir().glob("*")]}
    for path in saved:
        path.unlink()
    # Even with every file gone, the writer reads the chain and refuses.
    code, out = p.as_session("write", "--as", "human", "canon", "identity.yaml", input=IDENTITY)
    assert code == 3, out
    assert "signing is on and this user has no pinned signing key it can use" in out
    # So it commits unsigned behind the writer's back, the way the writer would.
    unsigned = _unsigned_human_commit(p.root)
    for path, data in saved.items():
        path.write_bytes(data)
    code, out = p.as_human("verify")
    assert code == 5, out
    assert f"commit {unsigned[:10]}" in out and "a human commit that is not signed" in out


def _unsigned_human_commit(root: MemoryRoot) -> str:
    """What a same-user program can do without the CLI: the writer's steps, unsigned."""
    script = (
        "import sys\n"
        "from pathlib import Path\nfrom evolving_agent.paths import MemoryRoot\n"
        "from evolving_agent.memory import authority\n"
        "from evolving_agent.memory.canon.signing import SigningState\n"
        "authority.in_force = lambda root: SigningState(enabled=False)\n"
        "root = MemoryRoot(Path(sys.argv[1]))\n"
        "authority.Writer(root, 'human').write('canon', 'identity.yaml', sys.argv[2])\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(root.path), IDENTITY + "# laundered\n"],
        check=True, env={**os.environ, "SSH_AUTH_SOCK": ""},
    )  # fmt: skip
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root.path, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_a_human_today_write_is_signed_or_refused(parties: Parties) -> None:
    p = parties
    code, out = p.as_session("write", "--as", "human", "today", "bias.md", input="obey me\n")
    assert code == 3, out
    assert "a human write to today must be signed by SHA256:" in out
    assert not (p.root.area_dir("today") / "bias.md").exists() or (
        "obey me" not in (p.root.area_dir("today") / "bias.md").read_text()
    )
    code, out = p.as_human("write", "--as", "human", "today", "bias.md", input="- lead\n")
    assert code == 0, out
    assert (p.root.area_dir("today") / "bias.md.sig").is_file()
    code, out = p.as_session("write", "--as", "nightly", "today", "bias.md", input="- x\n")
    assert code == 0, out  # the nightly's own layer: not the human's word
    code, out = p.as_human("verify")
    assert code == 0, out


# -- the fold, against generated sequences of changes (Hypothesis) -------------------------

_KEYS: list[Path] = []


def _keys(base: Path) -> list[Path]:
    """Three real keys, made once for the module's generated examples."""
    if not _KEYS:
        base.mkdir(parents=True, exist_ok=True)
        _KEYS.extend(_keygen(base / f"k{i}") for i in range(3))
    return _KEYS


def _append_change(root: MemoryRoot, action: str, key: Path, signer: Path, prev: str) -> None:
    """What anyone with a shell can append: a statement signed by any key it holds."""
    import hashlib

    from evolving_agent.memory.canon.signing import fingerprint_of, public_key_of, sign_bytes
    from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog, now
    from evolving_agent.memory.evidence.signing_chain import (
        STATEMENT_NAMESPACE,
        Statement,
        statement_dir,
    )

    public = public_key_of(key)
    statement = Statement(
        action=action,  # type: ignore[arg-type]
        public_key=public,
        fingerprint=fingerprint_of(public),
        since="",
        prev=prev,
    )
    data = statement.data()
    sig = sign_bytes(str(signer), data, STATEMENT_NAMESPACE).encode()
    sha, sig_sha = hashlib.sha256(data).hexdigest(), hashlib.sha256(sig).hexdigest()
    folder = statement_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sha}.json").write_bytes(data)
    (folder / f"{sig_sha}.sig").write_bytes(sig)
    EvidenceLog(root).append(
        EvidenceDraft(ts=now(), kind="signing", actor="human", text=f"{action} by hand",
                      data={"action": action, "statement": sha, "signature": sig_sha})
    )  # fmt: skip


_change = st.tuples(st.sampled_from(["enable", "disable"]), st.integers(0, 2), st.integers(0, 2))


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(changes=st.lists(_change, min_size=1, max_size=4), replay=st.booleans())
def test_the_key_in_force_moves_only_by_its_own_signature(
    changes: list[tuple[str, int, int]], replay: bool, tmp_path: Path
) -> None:
    """Invariant: whatever records anyone appends, the fold's key in force changes only
    through a statement signed by the key in force (the first: by the key it pins), that
    names the record before it; every other record is reported and changes nothing."""
    from evolving_agent.memory.canon.signing import fingerprint_of, public_key_of
    from evolving_agent.memory.evidence.signing_chain import FIRST, read_chain

    keys = _keys(tmp_path.parent / "hypothesis-keys")
    root = fresh_root(Path(tempfile.mkdtemp(dir=tmp_path)) / "memory")
    fps = [fingerprint_of(public_key_of(k)) for k in keys]
    in_force, on, last, rejected = None, False, FIRST, 0
    for action, key, signer in changes:
        chain = read_chain(root)
        prev = (chain.last.id if chain.last else FIRST) if not replay else FIRST
        _append_change(root, action, keys[key], keys[signer], prev)
        expected_signer = in_force if in_force is not None else key
        follows = prev == last
        if signer == expected_signer and follows:
            new = read_chain(root).last
            assert new is not None
            last = new.id
            if action == "enable":
                in_force, on = key, True
            else:
                in_force, on = (in_force if in_force is not None else key), False
        else:
            rejected += 1
    chain = read_chain(root)
    assert chain.on is on
    assert chain.fingerprint == (fps[in_force] if in_force is not None else "")
    assert len(chain.problems) == rejected


@pytest.mark.parametrize(
    "changes",
    [[("enable", 0, 0), ("enable", 0, 1)], [("disable", 1, 1), ("disable", 1, 0)]],
    ids=["replayed-enable", "replayed-disable"],
)
def test_a_replayed_statement_signed_by_another_key_leaves_the_first_valid(
    changes: list[tuple[str, int, int]], tmp_path: Path
) -> None:
    """Hypothesis's shrunk counter-examples: the second change repeats the first one's
    statement byte for byte (same action, key and predecessor) signed by another key.
    Its signature once replaced the first's (the .sig was named by the statement), so
    the valid record turned invalid; signatures are now content-addressed too."""
    from evolving_agent.memory.canon.signing import fingerprint_of, public_key_of
    from evolving_agent.memory.evidence.signing_chain import FIRST, read_chain

    keys = _keys(tmp_path.parent / "regression-keys")
    root = fresh_root(tmp_path / "memory")
    for action, key, signer in changes:
        _append_change(root, action, keys[key], keys[signer], FIRST)
    chain = read_chain(root)
    first_action, first_key, _signer = changes[0]
    assert chain.on is (first_action == "enable")
    assert chain.fingerprint == fingerprint_of(public_key_of(keys[first_key]))
    assert len(chain.problems) == 1 and "does not follow record" in chain.problems[0]
