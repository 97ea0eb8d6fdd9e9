"""Signing as a chain of trust: every enable, re-pin and disable is a signed Evidence record.

The pinned record and the root's marker (memory/canon/signing.py) say *that* signing is on;
they are files a same-user session can delete or rewrite.  What it cannot rewrite is
Evidence (hash-chained, anchored) and the human's key.  So each change of signing is a
``signing`` record in this root's own chain, citing a *statement* (``.ea/signing/
<sha256>.json``: the action, the key, the commit signing counts from, the record it
follows) and that statement's SSH signature (``<sha256>.sig``); the record names both
by hash, so no later file can stand in for either:

- the first record is signed by the key it pins (proof that the enabler holds it);
- every later one - a re-pin to another key, turning signing off, turning it on again
  - is signed by the key in force, the last one the chain pinned (kept after a disable);
- each statement names the record before it, so an old signature cannot be replayed.

:func:`read_chain` folds the records; a record whose statement is missing, altered,
out of order or signed by anyone else is reported and changes nothing.  ``since`` is
the commit the *first* enable counted from and never moves: a human commit or decision
made after it without the pinned key's signature is tampering, unless a re-enable
signed by the key in force vouched for it by name (``signing enable
--accept-unsigned``: the human saw the list).  While the chain says on, a vanished or
rewritten marker or pinned record is tampering naming the record that turned it on.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evolving_agent.errors import InvalidInput
from evolving_agent.gitcmd import GitError, git
from evolving_agent.memory.base.atomic import atomic_write, mkdirs_private
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.signing import (
    NAMESPACE,
    PRINCIPAL,
    SigningRefused,
    SigningState,
    commit_signatures,
    decisions_now,
    file_signed,
    fingerprint_of,
    marker_path,
    pin,
    public_key_of,
    sign_bytes,
    signed_by,
    signing_state,
    unpin,
)
from evolving_agent.memory.evidence.chain import canonical, now
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog, EvidenceRecord
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

KIND = "signing"  # the Evidence record kind
STATEMENT_NAMESPACE = "evolving-agent-signing"  # ssh-keygen -Y namespace of statements
FIRST = "-"  # what the first statement names as the record before it


class Statement(BaseModel):
    """What the key in force signs when signing changes."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = 1
    action: Literal["enable", "disable"]
    public_key: str  # the key pinned from now on (enable) or the one turned off
    fingerprint: str
    since: str  # the commit signing counts from (the first enable's, always)
    prev: str  # the signing record this one follows, or FIRST
    decisions_before: list[str] = []
    accepted: list[str] = []  # unsigned human writes the human vouched for, by name

    def data(self) -> bytes:
        return canonical(self.model_dump(mode="json"))


@record
class TrustChain:
    """The fold of this root's ``signing`` records (only the valid ones count)."""

    on: bool = False
    fingerprint: str = ""  # the key in force (kept after a disable: it signs the next change)
    public_key: str = ""
    keys: dict[str, str] = field(default_factory=dict)  # fingerprint -> public key, all pinned
    since: str = ""
    decisions_before: frozenset[str] = frozenset()
    accepted: frozenset[str] = frozenset()
    last: EvidenceRecord | None = None
    turned_on_by: EvidenceRecord | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def started(self) -> bool:
        return self.last is not None


def statement_dir(root: MemoryRoot) -> Path:
    return root.state / "signing"


def read_chain(root: MemoryRoot) -> TrustChain:
    chain = TrustChain()
    for rec in EvidenceLog(root).iter_kind(KIND):
        where = f"Evidence record {rec.id} ({rec.ts:%Y-%m-%d %H:%M}, {rec.text})"
        found = _statement(root, rec)
        if isinstance(found, str):
            chain.problems.append(f"{where}: {found}")
            continue
        statement, signature = found
        expected = chain.last.id if chain.last else FIRST
        if statement.prev != expected:
            chain.problems.append(
                f"{where}: does not follow record {expected} (a replayed or reordered change "
                "of signing)"
            )
            continue
        signer = chain.public_key or statement.public_key
        if not signed_by(signer, statement.data(), signature, STATEMENT_NAMESPACE):
            who = chain.fingerprint or statement.fingerprint
            chain.problems.append(
                f"{where}: not signed by the key in force {who} (a change of pin or turning "
                "signing off must be signed by it)"
            )
            continue
        _apply(chain, rec, statement)
    return chain


def _statement(root: MemoryRoot, rec: EvidenceRecord) -> tuple[Statement, str] | str:
    """The record's statement and signature, both named by their sha256 in the record
    (content-addressed: a later file can never replace an earlier one's bytes)."""
    sha = str(rec.data.get("statement", ""))
    sig_sha = str(rec.data.get("signature", ""))
    path = statement_dir(root) / f"{sha}.json"
    sig_path = statement_dir(root) / f"{sig_sha}.sig"
    try:
        data = path.read_bytes()
        signature = sig_path.read_bytes()
    except OSError:
        return f"its signed statement {path} (or its signature {sig_path.name}) is gone"
    if hashlib.sha256(data).hexdigest() != sha or hashlib.sha256(signature).hexdigest() != sig_sha:
        return f"its signed statement {path} (or its signature {sig_path.name}) was altered"
    try:
        return Statement.model_validate_json(data), signature.decode("utf-8", errors="replace")
    except ValidationError:
        return f"its signed statement {path} is not a signing statement"


def _apply(chain: TrustChain, rec: EvidenceRecord, statement: Statement) -> None:
    chain.last = rec
    chain.accepted = chain.accepted | set(statement.accepted)
    if statement.action == "disable":
        chain.on = False
        chain.keys.setdefault(statement.fingerprint, statement.public_key)
        chain.public_key = chain.public_key or statement.public_key
        chain.fingerprint = chain.fingerprint or statement.fingerprint
        return
    if not chain.since:
        chain.since = statement.since
        chain.decisions_before = frozenset(statement.decisions_before)
    chain.on = True
    chain.turned_on_by = rec
    chain.public_key, chain.fingerprint = statement.public_key, statement.fingerprint
    chain.keys[statement.fingerprint] = statement.public_key


# -- what the files must agree with ----------------------------------------------------


def file_problems(root: MemoryRoot, chain: TrustChain, state: SigningState) -> list[str]:
    """The marker and the pinned record against the chain (none for a root whose
    signing predates the chain: :attr:`SigningState.problem` speaks for it)."""
    if not chain.started:
        return [state.problem] if state.problem else []
    marker = marker_path(root)
    if not chain.on:
        if os.path.lexists(marker):
            assert chain.last is not None
            return [
                f"{marker}: says signing is on, but Evidence record {chain.last.id} turned it off"
            ]
        return []
    rec = chain.turned_on_by
    assert rec is not None
    named = f"Evidence record {rec.id} ({rec.ts:%Y-%m-%d %H:%M})"
    problems: list[str] = []
    if not os.path.lexists(marker):
        problems.append(
            f"{marker}: signing was turned on by {named} (key {chain.fingerprint}) but the "
            "root's signing marker is gone"
        )
    elif _marker_fingerprint(root) != chain.fingerprint:
        problems.append(
            f"{marker}: names key {_marker_fingerprint(root)}, but {named} pinned "
            f"{chain.fingerprint}"
        )
    if rec.data.get("uid") == os.getuid():  # this user pinned it: the record must be here
        if state.pinned is None:
            problems.append(
                f"{named}: turned signing on for this user with key {chain.fingerprint}, but "
                "the pinned record outside the root is gone"
            )
        elif _pinned_fingerprint(state) != chain.fingerprint:
            problems.append(
                f"{state.pinned}: names key {_pinned_fingerprint(state)}, but {named} pinned "
                f"{chain.fingerprint}"
            )
    return problems


def _marker_fingerprint(root: MemoryRoot) -> str:
    import json

    try:
        return str(json.loads(marker_path(root).read_text(encoding="utf-8")).get("fingerprint"))
    except (OSError, ValueError, AttributeError):
        return "(unreadable)"


def _pinned_fingerprint(state: SigningState) -> str:
    import json

    assert state.pinned is not None
    try:
        return str(json.loads(state.pinned.read_text(encoding="utf-8")).get("fingerprint"))
    except (OSError, ValueError, AttributeError):
        return "(unreadable)"


def in_force(root: MemoryRoot) -> SigningState:
    """The signing state a writer obeys: the files', or - when the chain says on and the
    files are gone - on, with no key (so a human write is refused, never unsigned)."""
    state = signing_state(root)
    if state.enabled:
        return state
    chain = read_chain(root)
    if not chain.on:
        return state
    return SigningState(
        enabled=True,
        fingerprint=chain.fingerprint,
        public_key=chain.public_key,
        since=chain.since,
        problem=f"signing is on (Evidence record {chain.last.id if chain.last else '?'}) "
        "but its marker and pinned record are gone",
    )


# -- what must be signed -----------------------------------------------------------------


@contextmanager
def trusted_signers(chain: TrustChain) -> Iterator[Path]:
    """An allowed-signers file of every key the chain pinned: what verify trusts, from
    Evidence, not from the files a session could rewrite."""
    with tempfile.TemporaryDirectory(prefix="ea-signers-") as tmp:
        path = Path(tmp) / "allowed_signers"
        path.write_text(
            "".join(
                f'{PRINCIPAL} namespaces="git,{NAMESPACE}" {key}\n' for key in chain.keys.values()
            )
        )
        yield path


def unsigned_writes(
    root: MemoryRoot, chain: TrustChain, human_commits: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    """(name, where) of the human writes since the chain's ``since`` that no key of the
    chain signed and no signed re-enable accepted: commits (by sha) and decisions (by
    their path under reviews/decisions/)."""
    reachable: set[str] = set()
    if chain.since:
        try:
            reachable = set(git(root.path, "rev-list", chain.since).text.split())
        except GitError:
            return [(chain.since, f"{root.path}: the commit signing counts from is gone")]
    todo = [
        (sha, where)
        for sha, where in human_commits
        if sha not in reachable and sha not in chain.accepted
    ]
    found: list[tuple[str, str]] = []
    with trusted_signers(chain) as signers:
        view = SigningState(enabled=True, fingerprint=chain.fingerprint, allowed_signers=signers)
        sigs = commit_signatures(root, view, [sha for sha, _ in todo], frozenset(chain.keys))
        for sha, where in todo:
            status = sigs.get(sha, "N")
            if status == "N":
                found.append((sha, f"{where}: a human commit that is not signed (signing is on)"))
            elif status != "G":
                found.append(
                    (sha, f"{where}: signed, but by no key the signing chain pinned "
                     f"({', '.join(chain.keys)})")
                )  # fmt: skip
        decisions = root.area_dir("decisions")
        for rel in decisions_now(root):
            if rel in chain.decisions_before or rel in chain.accepted:
                continue
            if not file_signed(view, decisions / rel):
                found.append(
                    (rel, f"{decisions / rel}: a human decision without a valid signature by "
                     f"the pinned key {chain.fingerprint} (signing is on)")
                )  # fmt: skip
    return found


def human_commits_since(root: MemoryRoot, since: str) -> list[tuple[str, str]]:
    """(sha, where) of the commits after ``since`` whose Actor trailer says human."""
    revs = [f"^{since}", "HEAD"] if since else ["HEAD"]
    if gitrepo.head_commit(root) is None:
        return []
    out = git(root.path, "log", "-z", "--format=%H%x00%B", *revs).text
    items = out.split("\0")
    found = []
    for sha, message in zip(items[0::2], items[1::2], strict=False):
        sha = sha.strip()
        if sha and gitrepo.parse_trailers(message).get("Actor") == "human":
            found.append((sha, f"commit {sha[:10]} ({message.strip().splitlines()[0]})"))
    return found


# -- the doors -----------------------------------------------------------------------------


@record(frozen=True)
class SigningChange:
    action: str  # "enabled", "re-pinned", "disabled", "unchanged"
    state: SigningState
    record: EvidenceRecord | None = None
    accepted: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        fp = self.state.fingerprint
        if self.action == "unchanged":
            return f"signing is already on with key {fp}; nothing changed"
        if self.action == "disabled":
            return f"signing disabled (Evidence {self.record.id if self.record else '-'})"
        vouched = f"; vouched for {len(self.accepted)} unsigned write(s)" if self.accepted else ""
        rec = self.record.id if self.record else "-"
        pinned = f"pinned in {self.state.pinned}"
        return f"signing {self.action}: key {fp}, {pinned} (Evidence {rec}){vouched}"


def enable(
    root: MemoryRoot,
    key: Path,
    *,
    previous_key: Path | None = None,
    accept_unsigned: bool = False,
) -> SigningChange:
    """``signing enable``: pin ``key``; a re-pin or a re-enable is signed by the key in
    force (``previous_key``, else the pinned key, else ``key`` when it is that key)."""
    key = key.expanduser().resolve()
    if not key.exists():
        # A path the user typed wrong: bad input (exit 4), not a refusal of authority.
        raise InvalidInput(f"{key}: no such key file")
    public = public_key_of(key)
    fingerprint = fingerprint_of(public)
    chain, state = read_chain(root), signing_state(root)
    if chain.problems:
        raise SigningRefused(
            f"the signing chain is broken ({chain.problems[0]}); run 'evolving-agent verify'"
        )
    intact = not file_problems(root, chain, state) and state.enabled
    if chain.on and chain.fingerprint == fingerprint and intact:
        return SigningChange("unchanged", state)
    in_force_fp = chain.fingerprint or (state.fingerprint if state.enabled else "")
    if not chain.started and state.enabled and state.fingerprint != fingerprint:
        raise SigningRefused(
            f"signing on this root predates its chain of trust: first record it with "
            f"'evolving-agent signing enable --key <the key of {state.fingerprint}>', "
            "then re-pin"
        )
    signer = _signer(key, fingerprint, in_force_fp, previous_key, state)
    since = chain.since or state.since or gitrepo.head_commit(root) or ""
    accepted: list[str] = []
    if chain.started or state.enabled:
        if not chain.started:  # a root set up before the chain: its own since
            chain.since = since
            chain.decisions_before = frozenset(state.decisions_before)
            chain.keys = {state.fingerprint: state.public_key} if state.public_key else {}
        pending = unsigned_writes(root, chain, human_commits_since(root, chain.since))
        if pending and not accept_unsigned:
            names = "; ".join(where for _name, where in pending[:3])
            more = f" (and {len(pending) - 3} more)" if len(pending) > 3 else ""
            raise SigningRefused(
                f"{len(pending)} human write(s) since signing was first enabled are not signed: "
                f"{names}{more}; check them, then re-run with --accept-unsigned to vouch for "
                "them with the key"
            )
        accepted = [name for name, _where in pending]
    decisions_before = sorted(chain.decisions_before) if chain.started else decisions_now(root)
    statement = Statement(
        action="enable",
        public_key=public,
        fingerprint=fingerprint,
        since=since,
        prev=chain.last.id if chain.last else FIRST,
        decisions_before=decisions_before,
        accepted=accepted,
    )
    action = "re-pinned" if in_force_fp and in_force_fp != fingerprint else "enabled"
    text = (
        f"signing re-pinned from {in_force_fp} to {fingerprint}"
        if action == "re-pinned"
        else f"signing enabled: key {fingerprint}"
    )
    record = _record(root, statement, signer, text, in_force=chain.public_key or public)
    trusted = [*chain.keys.values(), *([state.public_key] if state.public_key else [])]
    new_state = pin(
        root,
        key=key,
        public_key=public,
        since=since,
        decisions_before=decisions_before,
        trusted=trusted,
    )
    return SigningChange(action, new_state, record, tuple(accepted))


def disable(root: MemoryRoot, *, key: Path | None = None) -> SigningChange:
    """``signing disable``: turn signing off, signed by the key in force (or refused)."""
    chain, state = read_chain(root), signing_state(root)
    if not (chain.on or state.enabled):
        raise SigningRefused("signing is already off for this root")
    fingerprint = chain.fingerprint if chain.on else state.fingerprint
    public = chain.public_key if chain.on else state.public_key
    signer = str(key.expanduser().resolve()) if key is not None else state.key
    if not signer:
        raise SigningRefused(
            f"signing is on with key {fingerprint}: turning it off must be signed by that key, "
            "and this user has no pinned key (give --key PATH)"
        )
    statement = Statement(
        action="disable",
        public_key=public,
        fingerprint=fingerprint,
        since=chain.since or state.since,
        prev=chain.last.id if chain.last else FIRST,
    )
    record = _record(
        root, statement, signer, f"signing disabled: key {fingerprint}", in_force=public
    )
    unpin(root)
    return SigningChange("disabled", signing_state(root), record)


def _signer(
    key: Path, fingerprint: str, in_force: str, previous_key: Path | None, state: SigningState
) -> str:
    if not in_force or in_force == fingerprint:
        return str(key)
    if previous_key is not None:
        return str(previous_key.expanduser().resolve())
    if state.key and state.fingerprint == in_force:
        return state.key
    raise SigningRefused(
        f"signing is on with key {in_force}: re-pinning to {fingerprint} must be signed by "
        "that key, and this user has no pinned copy of it (give --previous-key PATH)"
    )


def _record(
    root: MemoryRoot, statement: Statement, signer: str, text: str, *, in_force: str
) -> EvidenceRecord:
    """Sign ``statement`` with ``signer`` (refused when it cannot, or when ``signer`` is
    not the key ``in_force``, the public key the chain checks it with), store it, and
    record it in Evidence."""
    data = statement.data()
    in_force_fp = fingerprint_of(in_force)
    what = {"enable": "a change of pin", "disable": "turning signing off"}[statement.action]
    if statement.prev == FIRST:
        what = "the first enable"
    try:
        signature = sign_bytes(signer, data, STATEMENT_NAMESPACE)
    except SigningRefused as exc:
        raise SigningRefused(
            f"signing's key in force is {in_force_fp}: {what} must be signed by it ({exc})"
        ) from None
    if not signed_by(in_force, data, signature, STATEMENT_NAMESPACE):
        raise SigningRefused(
            f"{signer} is not the key in force {in_force_fp}: {what} must be signed by it"
        )
    sha = hashlib.sha256(data).hexdigest()
    sig = signature.encode("utf-8")
    sig_sha = hashlib.sha256(sig).hexdigest()
    folder = statement_dir(root)
    mkdirs_private(folder)  # group-readable in the deployment: anyone may check the chain
    atomic_write(folder / f"{sha}.json", data, base=root.real)
    atomic_write(folder / f"{sig_sha}.sig", sig, base=root.real)
    draft = EvidenceDraft(
        ts=now(),
        kind=KIND,
        actor="human",
        text=text,
        data={
            "action": statement.action,
            "fingerprint": statement.fingerprint,
            "statement": sha,
            "signature": sig_sha,
            "uid": os.getuid(),
        },
    )
    return EvidenceLog(root).append(draft)
