"""verify: is every byte of the self where the writer put it?

It reads git's objects, never its porcelain: no index (so ``--assume-unchanged`` and
``--skip-worktree`` hide nothing), no ignore rules (so ``.gitignore`` and
``.git/info/exclude`` hide nothing), NUL-separated paths (so ``über.md`` or a name
with a quote or newline is still a Canon path).  The tracked paths are ``canon/``,
``crons/`` and ``schedule.yaml``: only the human (or an approved review) changes them.

Checks:

1. the Evidence hash chain, line by line, and each day against the writer's anchored
   head (a cut tail or a deleted day file is tampering) - for this root's own chain and
   for every chain synced in from another device (``evidence/devices/<id>/``);
2. every commit reachable from HEAD, parentless ones included: its tracked tree
   against its first parent's (``git diff-tree -z``).  A change needs an
   ``Evidence-Id`` trailer naming a ``canon-write`` record whose blob hashes (and
   whole recorded tree) match, by an actor with authority; a monthly commit needs an
   approved review whose approver is its ``Approved-By`` and must be exactly the
   approved diff.  The only exception is *the* init commit: the first root commit,
   with init's message, holding exactly the files ``init`` writes;
3. no rollback: HEAD's tracked tree equals the tree the last ``canon-write`` record
   recorded (this device's records, and other devices' once their commit is in HEAD's
   history: a Canon change made on another device arrives only by a verified sync),
   and every approved review's commit is still an ancestor of HEAD;
4. the files on disk equal HEAD's, hashed directly from disk (no symlinks; a new file
   under ``canon/`` or ``crons/`` that HEAD lacks is reported).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path

from evolving_agent.errors import EvolvingAgentError, InvalidInput
from evolving_agent.fsio import read_files
from evolving_agent.gitcmd import GitError, git
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.approvals import read_decision
from evolving_agent.memory.canon.canon_diff import CanonDiff, apply_diff
from evolving_agent.memory.canon.signing import check_signatures, signing_state
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord, parse_line
from evolving_agent.memory.evidence.signing_chain import (
    file_problems,
    read_chain,
    unsigned_writes,
)
from evolving_agent.memory.ops.review_trace import TraceIndex
from evolving_agent.memory.root import (
    INIT_MESSAGE,
    default_prompt,
    deployment,
    init_contents,
    require_root,
)
from evolving_agent.paths import MemoryRoot
from evolving_agent.records import record

REGULAR_MODES = ("100644", "100755")
IDENTITY_PATH = "canon/identity.yaml"


@record
class VerifyReport:
    evidence_records: int = 0
    canon_commits: int = 0
    problems: list[str] = field(default_factory=list)
    # What verify cannot prove, said plainly (e.g. that "human" is a claim unsigned).
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@record
class Commit:
    """One commit as git's objects hold it."""

    sha: str
    parents: list[str]
    message: str
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (path, mode, blob)
    tree: dict[str, str] = field(default_factory=dict)  # tracked path -> blob after it

    @property
    def summary(self) -> str:
        return self.message.split("\n", 1)[0]

    @property
    def where(self) -> str:
        return f"commit {self.sha[:10]} ({self.summary})"


def verify_root(root: MemoryRoot, *, pin_of: MemoryRoot | None = None) -> VerifyReport:
    """Every check of the module docstring.  ``pin_of``: the root whose pinned signing
    record counts (sync verifies a staged copy of this root against this root's pin)."""
    require_root(root)
    report = VerifyReport()
    log = EvidenceLog(root)
    report.problems += log.verify_chain()
    for other in log.device_logs():  # chains synced in from the self's other devices
        report.problems += other.verify_chain()
    canon_writes: dict[str, EvidenceRecord] = {}
    last_write: EvidenceRecord | None = None
    traces = TraceIndex()
    # Canon writes recorded by other devices (sync): they count as "the last writer
    # commit" only once their commit is in this device's history (see below).
    elsewhere: dict[str, EvidenceRecord] = {}
    for chain in (log, *log.device_logs()):
        for rec in _chain_records(chain):
            report.evidence_records += 1
            traces.add(rec)
            if rec.kind == "canon-write":
                canon_writes[rec.id] = rec
                if chain.device is not None:
                    elsewhere[rec.id] = rec
                elif last_write is None or rec.ts >= last_write.ts:
                    last_write = rec
    head = gitrepo.head_commit(root) if (root.path / ".git").exists() else None
    if head is None:
        report.problems.append(
            f"{root.path / '.git'}: git history is missing; Canon changes cannot be checked"
        )
        return report
    report.problems += _check_no_symlinked_dirs(root)
    report.problems += _check_reviews(root, traces, report)
    report.problems += _check_no_rewritten_parents(root)
    git_dir = root.path / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        what = f"a symlink (to {os.readlink(git_dir)})" if git_dir.is_symlink() else "a file"
        report.problems.append(
            f"{git_dir}: is {what}, not the root's own repository directory; git follows it "
            "elsewhere and boot cannot read Canon's history (restore the directory)"
        )
    try:
        commits = read_history(root)
    except GitError as exc:
        report.problems.append(f"{root.path / '.git'}: git history is unreadable ({exc})")
        return report
    human_commits: list[tuple[str, str]] = []
    report.problems += _check_history(root, commits, canon_writes, report, human_commits)
    report.problems += _check_signed(root, commits, human_commits, report, pin_of)
    cited = {gitrepo.parse_trailers(c.message).get("Evidence-Id") for c in commits.values()}
    for rec in elsewhere.values():
        if rec.id in cited and (last_write is None or rec.ts >= last_write.ts):
            last_write = rec
    report.problems += _check_no_rollback(root, commits, head, last_write)
    report.problems += _check_worktree(root, commits[head].tree if head in commits else {})
    return report


def _readable_records(log: EvidenceLog) -> Iterator[EvidenceRecord]:
    """Every record that parses, of every device's chain; a damaged line is skipped here
    (verify_chain reports it)."""
    for chain in (log, *log.device_logs()):
        yield from _chain_records(chain)


def _chain_records(chain: EvidenceLog) -> Iterator[EvidenceRecord]:
    """Every record of one device's chain that parses."""
    for day in chain.days():
        path = chain.day_file(day)
        if path.is_symlink():
            continue
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    yield parse_line(raw, file=path, line=lineno)
                except InvalidInput:
                    continue


# -- reading git's objects ---------------------------------------------------------


def read_history(root: MemoryRoot) -> dict[str, Commit]:
    """Every commit reachable from HEAD, parents first, with its tracked changes and tree.

    Three git processes whatever the history's length: ``rev-list``, ``cat-file
    --batch`` for the messages, ``diff-tree --stdin -z`` for the changes.
    """
    lines = git(root.path, "rev-list", "--topo-order", "--reverse", "--parents", "HEAD").text
    commits: dict[str, Commit] = {}
    for line in lines.splitlines():
        sha, *parents = line.split()
        commits[sha] = Commit(sha, parents, "")
    if not commits:
        return commits
    batch = git(root.path, "cat-file", "--batch", input="\n".join(commits).encode() + b"\n")
    _parse_batch(batch.stdout, commits)
    spec = "".join(
        f"{c.sha} {c.parents[0]}\n" if c.parents else f"{c.sha}\n" for c in commits.values()
    )
    diff = git(
        root.path, "diff-tree", "--stdin", "-z", "-r", "--root", "--no-renames", input=spec.encode()
    )
    _parse_diff(diff.z_items(), commits)
    for c in commits.values():  # parents come first (--reverse --topo-order)
        tree = dict(commits[c.parents[0]].tree) if c.parents and c.parents[0] in commits else {}
        for path, mode, blob in c.changes:
            if mode == "000000":
                tree.pop(path, None)
            else:
                tree[path] = blob
        c.tree = tree
    return commits


def _parse_batch(out: bytes, commits: dict[str, Commit]) -> None:
    pos = 0
    while pos < len(out):
        nl = out.index(b"\n", pos)
        header = out[pos:nl].decode(errors="replace").split()
        if len(header) != 3:  # "<sha> missing": reported when its tree cannot be read
            pos = nl + 1
            continue
        sha, _kind, size = header
        body = out[nl + 1 : nl + 1 + int(size)]
        pos = nl + 1 + int(size) + 1
        _headers, _, message = body.partition(b"\n\n")
        commits[sha].message = message.decode("utf-8", errors="replace")


def _parse_diff(items: list[str], commits: dict[str, Commit]) -> None:
    """``diff-tree --stdin -z -r`` output: a commit id, then (meta, path) pairs."""
    current: Commit | None = None
    i = 0
    while i < len(items):
        item = items[i]
        if not item.startswith(":"):
            current = commits.get(item)
            i += 1
            continue
        path = items[i + 1]
        i += 2
        if current is None or not gitrepo.is_tracked(path):
            continue
        _old_mode, new_mode, _old_sha, new_sha, _status = item[1:].split(" ", 4)
        current.changes.append((path, new_mode, new_sha))


# -- history -------------------------------------------------------------------------


def _init_trees() -> list[dict[str, str]]:
    return [
        {p: gitrepo.blob_sha(d) for p, d in init_contents(with_prompts=w, with_probes=q).items()}
        for w in (True, False)
        for q in (True, False)
    ]


def _is_init(commit: Commit) -> bool:
    """The commit ``init`` makes: parentless, init's message, exactly init's files."""
    trailers = gitrepo.parse_trailers(commit.message)
    return (
        not commit.parents
        and commit.summary == INIT_MESSAGE
        and trailers.get("Actor") == "init"
        and commit.tree in _init_trees()
    )


def _check_history(
    root: MemoryRoot,
    commits: dict[str, Commit],
    canon_writes: dict[str, EvidenceRecord],
    report: VerifyReport,
    human_commits: list[tuple[str, str]],
) -> list[str]:
    problems: list[str] = []
    used_records: dict[str, str] = {}  # canon-write record id -> first commit citing it
    init_seen = False
    for commit in commits.values():
        if not commit.changes:
            continue
        where = commit.where
        for path, mode, _blob in commit.changes:
            if mode != "000000" and mode not in REGULAR_MODES:
                problems.append(f"{where}: {path} is not a regular file (mode {mode})")
        if not init_seen and _is_init(commit):
            init_seen = True
            continue
        report.canon_commits += 1
        tracked = [path for path, _m, _b in commit.changes]
        trailers = gitrepo.parse_trailers(commit.message)
        record = canon_writes.get(trailers.get("Evidence-Id", ""))
        if record is None:
            problems.append(
                f"{where}: changes {', '.join(tracked)} without going through the writer"
            )
            continue
        blobs = record.data.get("blobs", {})
        for path, mode, blob in commit.changes:
            actual = None if mode == "000000" else blob
            if path not in blobs or blobs[path] != actual:
                problems.append(f"{where}: {path} differs from what the writer recorded")
        recorded_tree = record.data.get("tree")
        if isinstance(recorded_tree, dict) and recorded_tree != commit.tree:
            problems.append(f"{where}: its Canon tree differs from the one the writer recorded")
        if trailers.get("Actor", record.actor) != record.actor:
            problems.append(
                f"{where}: Actor trailer '{trailers.get('Actor')}' does not match the "
                f"record's actor '{record.actor}'"
            )
        first = used_records.setdefault(record.id, commit.sha)
        if first != commit.sha:
            problems.append(f"{where}: reuses the provenance record of commit {first[:10]}")
        if record.actor == "monthly":
            problems += _check_approval(root, where, commit.sha, record, trailers)
            problems += _check_applied_diff(root, commits, commit, trailers)
        elif record.actor != "human":
            problems.append(f"{where}: actor '{record.actor}' has no authority over Canon")
        else:
            human_commits.append((commit.sha, where))
    return problems


def _check_applied_diff(
    root: MemoryRoot, commits: dict[str, Commit], commit: Commit, trailers: dict[str, str]
) -> list[str]:
    """A monthly commit must be exactly the approved diff applied to its parent's Canon.

    The writer lets the monthly actor write Canon while it holds an approval; this
    makes sure nothing else rode along with the approved change.
    """
    where = commit.where
    decision = read_decision(root, trailers.get("Review-Id", ""))
    if decision is None or not decision.get("diff"):
        return []  # reported by _check_approval
    changed = [p for p, _m, _b in commit.changes if p != IDENTITY_PATH]
    if changed:
        return [
            f"{where}: an approved review may change only {IDENTITY_PATH}, not {', '.join(changed)}"
        ]
    parent = commits.get(commit.parents[0]) if commit.parents else None
    before_sha = parent.tree.get(IDENTITY_PATH) if parent else None
    after_sha = commit.tree.get(IDENTITY_PATH)
    before = gitrepo.read_blob(root, before_sha) if before_sha else None
    after = gitrepo.read_blob(root, after_sha) if after_sha else None
    try:
        if before is None or after is None:
            raise ValueError("missing")
        expected = apply_diff(
            before.decode("utf-8"), CanonDiff.model_validate(decision["diff"])
        ).after
    except (KeyError, ValueError, EvolvingAgentError):
        return [f"{where}: the approved diff does not apply to the Canon before it"]
    if expected != after.decode("utf-8", errors="replace"):
        return [f"{where}: {IDENTITY_PATH} holds more than the approved diff"]
    return []


def _check_approval(
    root: MemoryRoot, where: str, sha: str, record: EvidenceRecord, trailers: dict[str, str]
) -> list[str]:
    """A monthly commit needs an approved review, applied by this commit and no other."""
    review_id = str(record.data.get("review_id", ""))
    decision = read_decision(root, review_id)
    if decision is None or decision.get("status") != "approved":
        return [f"{where}: monthly Canon change without an approved review"]
    if trailers.get("Review-Id") != review_id:
        return [f"{where}: Review-Id trailer does not match the approved review {review_id}"]
    approver = str(decision.get("approver", ""))
    if trailers.get("Approved-By") != approver or record.data.get("approver") != approver:
        return [
            f"{where}: Approved-By '{trailers.get('Approved-By')}' does not match the "
            f"decision's approver '{approver}'"
        ]
    applied = decision.get("commit")
    if applied and applied != sha:
        return [
            f"{where}: review {review_id} was applied by commit {str(applied)[:10]}, not this one"
        ]
    return []


# -- signed human authority ----------------------------------------------------------

CLAIM_NOTE = (
    "human authority is a claim: signing is off, so a 'human' commit or review decision "
    "is whoever says so with a shell in the root (see docs/authority.md; "
    "evolving-agent signing enable --key PATH)"
)


def _check_signed(
    root: MemoryRoot,
    commits: dict[str, Commit],
    human_commits: list[tuple[str, str]],
    report: VerifyReport,
    pin_of: MemoryRoot | None = None,
) -> list[str]:
    """With signing on, human commits after set-up and every later decision must carry the
    pinned key's signature (memory/canon/signing.py); without it, say that "human" is a claim."""
    state = signing_state(root, pin_of=pin_of)
    chain = read_chain(root)
    on = chain.on if chain.started else state.enabled
    deployed = deployment(root)
    if deployed is not None:
        # What the OS enforces is not a claim; within the human's own account it still is.
        human, assistant = deployed.get("human"), deployed.get("assistant")
        note = (
            f"human authority rests on the OS-user deployment: only {human!r} can write "
            f"canon/, reviews/, .git and .ea/; the assistant's user {assistant!r} appends "
            "Evidence and writes live/"
        )
        if not on:
            note += f"; signing is off, so any program running as {human!r} is 'human' too"
        report.notes.append(note)
    if not chain.started:  # off, or set up before the chain of trust was recorded
        if not state.enabled:
            if deployed is None:
                report.notes.append(CLAIM_NOTE)
            return []
        since: set[str] = set()
        if state.since:
            try:
                since = set(git(root.path, "rev-list", state.since).text.split())
            except GitError:
                return [
                    f"{root.path}: the commit signing was set up at ({state.since[:10]}) is gone"
                ]
        return check_signatures(root, human_commits, since, pin_of=pin_of)
    # The chain in Evidence decides: a vanished or rewritten marker or pin, a change of
    # signing not signed by the key in force, a human write since the first enable
    # that no key of the chain signed - all tampering (memory/evidence/signing_chain.py).
    problems = chain.problems + file_problems(root, chain, state)
    if not on:
        if deployed is None:
            report.notes.append(CLAIM_NOTE)
        return problems
    return problems + [where for _name, where in unsigned_writes(root, chain, human_commits)]


# -- review provenance ---------------------------------------------------------------


def _check_reviews(root: MemoryRoot, traces: TraceIndex, report: VerifyReport) -> list[str]:
    """Every pending review traced to the job that queued it, unchanged, and through it
    to the weekly runs that wrote its proposals; every decision (and human edit) on a
    genuine pending review.  Reviews from before proposal tracing are noted."""
    problems: list[str] = []
    pending = root.area_dir("pending")
    decisions = root.area_dir("decisions")
    ids = {p.stem for p in pending.glob("*.json")} if pending.is_dir() else set()
    for review_id in sorted(ids):
        trace = traces.check(root, review_id)
        if not trace.genuine:
            problems.append(trace.problem)
        report.notes += trace.notes
    problems += _check_proposals(root, traces, report)
    decided: list[tuple[Path, str]] = []
    if decisions.is_dir():
        decided += [(p, p.stem) for p in sorted(decisions.glob("*.json"))]
        decided += [(p, p.stem) for p in sorted(decisions.glob("edits/*.json"))]
    for path, review_id in decided:
        if review_id not in ids:
            problems.append(
                f"{path}: a decision on review {review_id}, which no job queued "
                f"({pending / (review_id + '.json')} does not exist)"
            )
            continue
        # Its form and its maker: a human's Evidence record (memory/ops/review_trace.py).
        problem = traces.check_decision(path)
        if problem:
            problems.append(problem)
    return problems


def _check_proposals(root: MemoryRoot, traces: TraceIndex, report: VerifyReport) -> list[str]:
    """Every weekly proposal as a weekly run wrote it (the monthly job consolidates them
    into reviews: a planted or edited one would reach the human next month)."""
    folder = root.area_dir("proposals")
    problems, legacy = [], 0
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        status, problem = traces.check_proposal_file(path)
        if problem:
            problems.append(problem)
        legacy += status == "legacy"
    if legacy:
        report.notes.append(
            f"{legacy} proposal(s) in {folder} were written before the weekly job recorded "
            "each proposal's sha256: their weekly job records list them, their bytes are "
            "not checked"
        )
    return problems


# -- rollback ------------------------------------------------------------------------


def _check_no_rollback(
    root: MemoryRoot, commits: dict[str, Commit], head: str, last_write: EvidenceRecord | None
) -> list[str]:
    problems: list[str] = []
    recorded = last_write.data.get("tree") if last_write is not None else None
    if last_write is not None and isinstance(recorded, dict):
        if head in commits and recorded != commits[head].tree:
            gone = sorted(
                p
                for p in set(recorded) | set(commits[head].tree)
                if recorded.get(p) != commits[head].tree.get(p)
            )
            problems.append(
                f"{root.path}: HEAD's Canon ({', '.join(gone)}) is not what the last writer "
                f"commit recorded (Evidence {last_write.id}, {last_write.ts:%Y-%m-%d %H:%M}): "
                "a commit was rolled back or rewritten"
            )
    decisions = root.area_dir("decisions")
    for path in sorted(decisions.glob("*.json")) if decisions.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("status") != "approved":
            continue
        sha = data.get("commit")
        if sha and str(sha) not in commits:
            problems.append(
                f"{path}: review {data.get('review_id', path.stem)} was applied by commit "
                f"{str(sha)[:10]}, which is no longer in HEAD's history (rolled back)"
            )
    return problems


def _check_no_rewritten_parents(root: MemoryRoot) -> list[str]:
    """A graft file or a shallow file makes git show other parents than the commits hold.

    Grafts are ignored by every git call we make (``GIT_GRAFT_FILE``); a shallow file
    cannot be, and a memory root is never cloned shallow, so either is reported.
    """
    git_dir = root.path / ".git"
    return [
        f"{git_dir / rel}: rewrites which parents git shows (a memory root never has one); "
        "remove it after checking 'git log'"
        for rel in ("info/grafts", "shallow")
        if os.path.lexists(git_dir / rel)
    ]


# -- the files on disk ---------------------------------------------------------------

# Directories whose symlinking is reported here (canon/, crons/ and evidence/ are
# reported by the checks that read them).
_PLAIN_DIRS = (
    "live",
    "today",
    "reviews",
    "reviews/proposals",
    "reviews/pending",
    "reviews/decisions",
    ".ea",
    ".ea/evidence",
    ".ea/locks",
    "evidence/devices",  # chains synced in from other devices (memory/evidence/devices.py)
    ".ea/sync",
)


def _check_no_symlinked_dirs(root: MemoryRoot) -> list[str]:
    return [
        f"{root.real / rel}: is a symlink (to {os.readlink(root.real / rel)}); "
        "the writer refuses to follow it"
        for rel in _PLAIN_DIRS
        if (root.real / rel).is_symlink()
    ]


def _check_worktree(root: MemoryRoot, head_tree: dict[str, str]) -> list[str]:
    disk = read_files(root.real, ("canon", "crons", *gitrepo.TRACKED_FILES))
    files, problems = disk.files, disk.problems
    for rel in sorted(set(head_tree) | set(files)):
        where = root.path / rel
        if rel not in files:
            if disk.reported(rel):
                continue  # a symlink or unreadable file (or one under it), reported above
            problems.append(f"{where}:1: changed behind the writer's back (deleted, not committed)")
            continue
        data = files[rel]
        if rel not in head_tree:
            if _is_default_prompt(rel, data, head_tree):
                continue
            problems.append(
                f"{where}:1: changed behind the writer's back (new file, not committed)"
            )
        elif gitrepo.blob_sha(data) != head_tree[rel]:
            committed = gitrepo.read_blob(root, head_tree[rel]) or b""
            line = _first_changed_line(committed, data)
            problems.append(f"{where}:{line}: changed behind the writer's back (not committed)")
    return problems


def _is_default_prompt(rel: str, data: bytes, head_tree: dict[str, str]) -> bool:
    """A root made before prompts were tracked gets the shipped prompt copied in on first
    use; that copy is not an edit."""
    if not rel.startswith("crons/") or any(p.startswith("crons/") for p in head_tree):
        return False
    job = rel.removeprefix("crons/").removesuffix(".md")
    try:
        return data == default_prompt(job).encode("utf-8")
    except (FileNotFoundError, OSError):
        return False


def _first_changed_line(committed: bytes, current: bytes) -> int:
    """1-based number of the first line that differs from the committed text."""
    old, new = committed.splitlines(), current.splitlines()
    for i, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            return i
    return min(len(old), len(new)) + 1
