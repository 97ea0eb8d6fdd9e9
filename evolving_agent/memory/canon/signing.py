"""Signed human authority: the human's Canon commits and review decisions, SSH-signed.

Without signing, "human" is a word anyone with a shell in the root can say (``--as
human``, ``review approve --yes``, ``$USER``).  With it, the human's key decides:

- ``signing enable --key PATH`` pins the key *outside the root*: an allowed-signers
  file and a record of the key's fingerprint under
  ``$XDG_CONFIG_HOME/evolving-agent/signing/`` (default ``~/.config``), named by the
  root's real path.  The root gets a marker (``.ea/signing.json``: fingerprint, the
  HEAD commit and the decisions that existed at set-up), so every reader knows
  signing is on; the pinned copy is what a check trusts when it is there.
- Human Canon commits are signed by git itself (``gpg.format=ssh``, ``commit-tree
  -S``), with the program and formats given on git's command line so a repository
  config cannot swap them.  Decisions (``reviews/decisions/<id>.json`` and human
  edits) get a detached ``ssh-keygen -Y sign`` signature beside them (``.sig``).
- :func:`check_signatures` (``verify``; boot checks HEAD only) reports as tampering a
  human commit after set-up that is unsigned or signed by another key, a decision
  made after set-up without a valid signature, and a marker that disagrees with the
  pinned record (or is gone while the record says signing is on).

Keeping the key out of the assistant's reach is the user's part (docs/authority.md):
an ssh-agent key added with ``ssh-add -c`` (confirm each use), a hardware key, or an
OS-user boundary (the assistant's user cannot read the key or the config directory).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from evolving_agent.errors import EXIT_DENIED, EvolvingAgentError, InvalidInput
from evolving_agent.fsio import write_atomic
from evolving_agent.gitcmd import git
from evolving_agent.paths import MemoryRoot
from evolving_agent.process import run_tool
from evolving_agent.records import record

MARKER = "signing.json"  # in .ea/
NAMESPACE = "evolving-agent-decision"  # ssh-keygen -Y namespace of decision signatures
PRINCIPAL = "human@evolving-agent"
SIG_SUFFIX = ".sig"


def _ssh_keygen() -> str:
    for candidate in ("/usr/bin/ssh-keygen", "/bin/ssh-keygen", shutil.which("ssh-keygen")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise InvalidInput("ssh-keygen was not found; signing needs OpenSSH 8.2 or newer")


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "evolving-agent" / "signing"


def _root_key(root: MemoryRoot) -> str:
    return hashlib.sha256(str(root.real).encode()).hexdigest()[:16]


@record(frozen=True)
class SigningState:
    """What is known about signing for a root, from the pinned record and the marker."""

    enabled: bool
    fingerprint: str = ""
    key: str = ""  # the private key (or its .pub, with the key in ssh-agent)
    public_key: str = ""
    since: str = ""  # HEAD at set-up: commits reachable from it need no signature
    decisions_before: tuple[str, ...] = ()  # decision files that existed at set-up
    pinned: Path | None = None  # the pinned record, when this user has it
    allowed_signers: Path | None = None
    problem: str = ""  # marker and pinned record disagree, or one is missing

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "fingerprint": self.fingerprint or None,
            "key": self.key or None,
            "since": self.since or None,
            "pinned": str(self.pinned) if self.pinned else None,
            "allowed_signers": str(self.allowed_signers) if self.allowed_signers else None,
            "problem": self.problem or None,
        }


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def marker_path(root: MemoryRoot) -> Path:
    return root.state / MARKER


def signing_state(root: MemoryRoot, *, pin_of: MemoryRoot | None = None) -> SigningState:
    """Signing for ``root``, from the marker and this user's pinned record - of ``pin_of``
    when given (sync's staged copy of a root is checked against the root's own pin)."""
    pinned_path = config_dir() / f"{_root_key(pin_of or root)}.json"
    pinned = _read_json(pinned_path)
    marker = _read_json(marker_path(root))
    if pinned is None and marker is None:
        return SigningState(enabled=False)
    source = pinned or marker or {}
    problem = ""
    if pinned is not None and marker is None:
        problem = (
            f"{marker_path(root)}: signing was enabled for this root (pinned in "
            f"{pinned_path}) but the root's signing marker is gone"
        )
    elif pinned is not None and marker is not None:
        if marker.get("fingerprint") != pinned.get("fingerprint"):
            problem = (
                f"{marker_path(root)}: names key {marker.get('fingerprint')}, but the key "
                f"pinned in {pinned_path} is {pinned.get('fingerprint')}"
            )
    signers = config_dir() / f"{_root_key(pin_of or root)}.allowed_signers"
    if pinned is None:  # another user (the assistant's): only the root's copy is known
        signers = root.state / "signing.allowed_signers"
    return SigningState(
        enabled=True,
        fingerprint=str(source.get("fingerprint", "")),
        key=str(source.get("key", "")) if pinned is not None else "",
        public_key=str(source.get("public_key", "")),
        since=str(source.get("since", "")),
        decisions_before=tuple(source.get("decisions_before", [])),
        pinned=pinned_path if pinned is not None else None,
        allowed_signers=signers,
        problem=problem,
    )


def _public_key(key: Path) -> str:
    if key.suffix == ".pub" and key.is_file():
        return key.read_text(encoding="utf-8").strip()
    pub = key.with_name(key.name + ".pub")
    if pub.is_file():
        return pub.read_text(encoding="utf-8").strip()
    done = run_tool([_ssh_keygen(), "-y", "-f", str(key)], timeout=60)
    if done.returncode != 0:
        raise InvalidInput(f"not a readable SSH key ({done.stderr.strip()[:200]})", file=key)
    return done.stdout.strip()


def _fingerprint(public_key: str) -> str:
    done = run_tool([_ssh_keygen(), "-l", "-f", "-"], input=public_key + "\n", timeout=60)
    if done.returncode != 0:
        raise InvalidInput(f"not an SSH public key: {done.stderr.strip()[:200]}")
    return done.stdout.split()[1]


class SigningRefused(EvolvingAgentError):
    """A signature the change needs could not be made (no key, the agent said no)."""

    exit_code = EXIT_DENIED


def public_key_of(key: Path) -> str:
    """The public half of ``key`` (a private key file, or the .pub of an agent's key)."""
    return _public_key(key)


def fingerprint_of(public_key: str) -> str:
    return _fingerprint(public_key)


def can_sign(key: str) -> bool:
    """Whether this process can sign with ``key`` without asking anyone: a private key
    file it can read, or a .pub whose key the ssh-agent it can reach holds.  Checked
    before a write starts, so an unsignable human write is refused before anything
    lands (the agent may still ask for confirmation when the signature is made)."""
    path = Path(key)
    if not key or not path.exists():
        return False
    if path.suffix != ".pub":
        return os.access(path, os.R_OK)
    if not os.environ.get("SSH_AUTH_SOCK"):
        return False
    listed = run_tool(["ssh-add", "-L"], timeout=30)
    wanted = path.read_text(encoding="utf-8").split()[:2]
    return listed.returncode == 0 and any(
        line.split()[:2] == wanted for line in listed.stdout.splitlines()
    )


def sign_bytes(key: str, data: bytes, namespace: str) -> str:
    """An armored ``ssh-keygen -Y sign`` signature of ``data`` by ``key``."""
    if not can_sign(key):
        raise SigningRefused(
            f"cannot sign with {key or '(no key)'}: not a readable private key, and no "
            "ssh-agent this process can reach holds it"
        )
    done = run_tool(
        [_ssh_keygen(), "-Y", "sign", "-q", "-f", key, "-n", namespace],
        input=data.decode("utf-8"),
        timeout=300,  # a passphrase or an agent confirmation may be asked
    )
    if done.returncode != 0 or "BEGIN SSH SIGNATURE" not in done.stdout:
        raise SigningRefused(f"ssh-keygen could not sign with {key}: {done.stderr.strip()[:200]}")
    return done.stdout


def signed_by(public_key: str, data: bytes, signature: str, namespace: str) -> bool:
    """Whether ``signature`` is ``public_key``'s signature of ``data`` in ``namespace``."""
    with tempfile.TemporaryDirectory(prefix="ea-sig-") as tmp:
        signers = Path(tmp) / "allowed_signers"
        signers.write_text(f'{PRINCIPAL} namespaces="{namespace}" {public_key}\n')
        sig = Path(tmp) / "data.sig"
        sig.write_text(signature)
        done = run_tool(
            [_ssh_keygen(), "-Y", "verify", "-f", str(signers), "-I", PRINCIPAL,
             "-n", namespace, "-s", str(sig)],
            input=data.decode("utf-8"),
            timeout=60,
        )  # fmt: skip
    return done.returncode == 0


def pin(
    root: MemoryRoot,
    *,
    key: Path,
    public_key: str,
    since: str,
    decisions_before: list[str],
    trusted: list[str],
) -> SigningState:
    """Write the pinned record (outside the root) and the root's marker for ``key``.

    ``trusted`` are the public keys of the whole chain of trust (memory/evidence/signing_chain.py):
    a commit or decision signed by an earlier key of the chain stays valid."""
    record = {
        "schema_version": 1,
        "root": str(root.real),
        "key": str(key),
        "public_key": public_key,
        "fingerprint": _fingerprint(public_key),
        "since": since,
        "decisions_before": decisions_before,
    }
    directory = config_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    keys = [public_key, *(k for k in trusted if k != public_key)]
    signers = "".join(f'{PRINCIPAL} namespaces="git,{NAMESPACE}" {k}\n' for k in keys)
    write_atomic(directory / f"{_root_key(root)}.allowed_signers", signers.encode())
    write_atomic(
        directory / f"{_root_key(root)}.json", (json.dumps(record, indent=2) + "\n").encode()
    )
    marker = {k: record[k] for k in ("schema_version", "public_key", "fingerprint", "since")}
    marker["decisions_before"] = decisions_before
    write_atomic(marker_path(root), (json.dumps(marker, indent=2) + "\n").encode())
    write_atomic(root.state / "signing.allowed_signers", signers.encode())
    return signing_state(root)


def unpin(root: MemoryRoot) -> None:
    """Remove the pinned record and the root's marker (signing off)."""
    for path in (
        config_dir() / f"{_root_key(root)}.json",
        config_dir() / f"{_root_key(root)}.allowed_signers",
        marker_path(root),
        root.state / "signing.allowed_signers",
    ):
        path.unlink(missing_ok=True)


def decisions_now(root: MemoryRoot) -> list[str]:
    decisions = root.area_dir("decisions")
    if not decisions.is_dir():
        return []
    return sorted(p.relative_to(decisions).as_posix() for p in decisions.rglob("*.json"))


def git_signing_args(state: SigningState) -> list[str]:
    """git options that sign a commit with the pinned key (command line beats repo config)."""
    return [
        "-c", "gpg.format=ssh",
        "-c", f"gpg.ssh.program={_ssh_keygen()}",
        "-c", f"user.signingkey={state.key}",
    ]  # fmt: skip


def sign_file(state: SigningState, path: Path) -> Path:
    """Write ``path``'s detached signature beside it (``path.sig``); returns its path."""
    if not can_sign(state.key):
        raise SigningRefused(
            f"signing is on for this root and this process cannot sign with the pinned "
            f"key {state.fingerprint} (run 'evolving-agent signing status'); "
            f"{path.name} was not written as the human's"
        )
    sig = path.with_name(path.name + SIG_SUFFIX)
    sig.unlink(missing_ok=True)  # ssh-keygen refuses to overwrite
    done = run_tool(
        [_ssh_keygen(), "-Y", "sign", "-q", "-f", state.key, "-n", NAMESPACE, str(path)],
        timeout=300,  # a passphrase or an agent confirmation may be asked
    )
    if done.returncode != 0:
        raise SigningRefused(f"could not sign {path.name}: {done.stderr.strip()[:200]}")
    os.chmod(sig, 0o600)
    return sig


def file_signed(state: SigningState, path: Path) -> bool:
    sig = path.with_name(path.name + SIG_SUFFIX)
    if state.allowed_signers is None or not sig.is_file() or not path.is_file():
        return False
    done = run_tool(
        [
            _ssh_keygen(),
            "-Y",
            "verify",
            "-f",
            str(state.allowed_signers),
            "-I",
            PRINCIPAL,
            "-n",
            NAMESPACE,
            "-s",
            str(sig),
        ],  # fmt: skip
        stdin_path=path,
        timeout=60,
    )
    return done.returncode == 0


def commit_signatures(
    root: MemoryRoot, state: SigningState, shas: list[str], trusted: frozenset[str] = frozenset()
) -> dict[str, str]:
    """sha -> G (signed by the pinned key, or one of ``trusted``: earlier keys of the
    chain of trust), N (not signed) or B (signed otherwise, or badly)."""
    if not shas or state.allowed_signers is None:
        return {}
    good_keys = trusted | {state.fingerprint}
    out = git(
        root.path,
        "-c", "gpg.format=ssh",
        "-c", f"gpg.ssh.program={_ssh_keygen()}",
        "-c", f"gpg.ssh.allowedSignersFile={state.allowed_signers}",
        "log", "--no-walk=unsorted", "--format=%H %G? %GF", "--stdin",
        input=("\n".join(shas) + "\n").encode(),
    ).text  # fmt: skip
    result: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, rest = line.partition(" ")
        status, _, fingerprint = rest.partition(" ")
        good = status == "G" and fingerprint.strip() in good_keys
        result[sha] = "G" if good else ("N" if status == "N" else "B")
    return result


def check_signatures(
    root: MemoryRoot,
    human_commits: list[tuple[str, str]],
    reachable_from_since: set[str],
    *,
    pin_of: MemoryRoot | None = None,
) -> list[str]:
    """Problems with signed authority (none when signing is off).

    ``human_commits`` are (sha, where) of commits whose writer record says ``human``;
    ``reachable_from_since`` the commits that existed at set-up (no signature needed).
    """
    state = signing_state(root, pin_of=pin_of)
    if not state.enabled:
        return []
    problems = [state.problem] if state.problem else []
    todo = [(sha, where) for sha, where in human_commits if sha not in reachable_from_since]
    sigs = commit_signatures(root, state, [sha for sha, _ in todo])
    for sha, where in todo:
        status = sigs.get(sha, "N")
        if status == "N":
            problems.append(f"{where}: a human commit that is not signed (signing is on)")
        elif status != "G":
            problems.append(f"{where}: signed, but not by the pinned key {state.fingerprint}")
    decisions = root.area_dir("decisions")
    if decisions.is_dir():
        for path in sorted(decisions.rglob("*.json")):
            rel = path.relative_to(decisions).as_posix()
            if rel in state.decisions_before:
                continue
            if not file_signed(state, path):
                problems.append(
                    f"{path}: a human decision without a valid signature by the pinned key "
                    f"{state.fingerprint} (signing is on)"
                )
    return problems


def check_head(root: MemoryRoot) -> list[str]:
    """Boot's check when signing is on: the commit Canon is served from (HEAD) is signed
    by the pinned key if the human made it, or applies a signed decision if the monthly
    job did.  One git call and at most one ssh-keygen: not the whole history (verify)."""
    from evolving_agent.memory.canon import gitrepo

    state = signing_state(root)
    if not state.enabled:
        return []
    if state.problem:
        return [state.problem]
    head = gitrepo.head_commit(root)
    if head is None or head == state.since:
        return []
    message = git(root.path, "log", "-1", "--format=%B", head).text
    trailers = gitrepo.parse_trailers(message)
    where = f"commit {head[:10]} ({message.splitlines()[0] if message else ''})"
    if trailers.get("Actor") == "human":
        if commit_signatures(root, state, [head]).get(head) != "G":
            return [
                f"{where}: a human Canon commit not signed by the pinned key {state.fingerprint}"
            ]
    elif trailers.get("Actor") == "monthly":
        decision = root.area_dir("decisions") / f"{trailers.get('Review-Id', '')}.json"
        if not file_signed(state, decision):
            return [
                f"{where}: applies review {trailers.get('Review-Id')} whose decision is not signed"
            ]
    return []
