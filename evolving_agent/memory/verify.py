"""verify: is every byte of the self where the writer put it?

Checks (1) the Evidence hash chain, line by line; (2) that every git commit touching
Canon is the root's first commit, or carries an ``Evidence-Id`` trailer naming a
``canon-write`` record whose blob hashes match the commit's files, and for the
monthly actor an approved review; (3) that Canon on disk matches the last commit —
a file edited behind the writer's back is found, not trusted.  A monthly commit must
name its review in a ``Review-Id`` trailer, and an approval applies once: a second
commit citing the same review or the same ``canon-write`` record is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evolving_agent.errors import EvolvingAgentError, InvalidInput
from evolving_agent.memory import gitrepo
from evolving_agent.memory.evidence import EvidenceLog, EvidenceRecord, parse_line
from evolving_agent.memory.reviews import read_decision
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot

TRACKED_PREFIXES = ("canon/",)


@dataclass
class VerifyReport:
    evidence_records: int = 0
    canon_commits: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _touches_tracked(paths: list[str]) -> list[str]:
    return [p for p in paths if p.startswith(TRACKED_PREFIXES)]


def verify_root(root: MemoryRoot) -> VerifyReport:
    require_root(root)
    report = VerifyReport()
    log = EvidenceLog(root)
    report.problems += log.verify_chain()
    canon_writes: dict[str, EvidenceRecord] = {}
    for rec in _readable_records(log):
        report.evidence_records += 1
        if rec.kind == "canon-write":
            canon_writes[rec.id] = rec
    try:
        gitrepo.open_repo(root)
    except InvalidInput:
        report.problems.append(
            f"{root.path / '.git'}: git history is missing; Canon changes cannot be checked"
        )
        return report
    report.problems += _check_history(root, canon_writes, report)
    report.problems += _check_worktree(root)
    return report


def _readable_records(log: EvidenceLog) -> Iterator[EvidenceRecord]:
    """Every record that parses; a damaged line is skipped here (verify_chain reports it)."""
    for day in log.days():
        path = log.day_file(day)
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    yield parse_line(raw, file=path, line=lineno)
                except InvalidInput:
                    continue


def _check_history(
    root: MemoryRoot, canon_writes: dict[str, EvidenceRecord], report: VerifyReport
) -> list[str]:
    problems: list[str] = []
    import git

    repo = gitrepo.open_repo(root)
    try:
        commits = list(repo.iter_commits("HEAD", reverse=True))
    except (git.GitCommandError, ValueError):
        return [f"{root.path}: git history is missing or unreadable"]
    used_records: dict[str, str] = {}  # canon-write record id -> first commit citing it
    for commit in commits:
        if not commit.parents:
            continue  # the root's first commit (created by init)
        changed = [str(p) for p in commit.stats.files]
        tracked = _touches_tracked(changed)
        if not tracked:
            continue
        report.canon_commits += 1
        where = f"commit {commit.hexsha[:10]} ({commit.summary!s})"
        trailers = gitrepo.parse_trailers(str(commit.message))
        record = canon_writes.get(trailers.get("Evidence-Id", ""))
        if record is None:
            problems.append(
                f"{where}: changes {', '.join(tracked)} without going through the writer"
            )
            continue
        blobs = record.data.get("blobs", {})
        for path in tracked:
            try:
                actual: str | None = commit.tree[path].hexsha
            except KeyError:
                actual = None
            if path not in blobs or blobs[path] != actual:
                problems.append(f"{where}: {path} differs from what the writer recorded")
        first = used_records.setdefault(record.id, commit.hexsha)
        if first != commit.hexsha:
            problems.append(f"{where}: reuses the provenance record of commit {first[:10]}")
        if record.actor == "monthly":
            problems += _check_approval(root, where, commit.hexsha, record, trailers)
            problems += _check_applied_diff(root, where, commit)
        elif record.actor != "human":
            problems.append(f"{where}: actor '{record.actor}' has no authority over Canon")
    return problems


def _check_applied_diff(root: MemoryRoot, where: str, commit: Any) -> list[str]:
    """A monthly commit must be exactly the approved diff applied to its parent's Canon.

    The writer lets the monthly actor write Canon while it holds an approval; this
    makes sure nothing else rode along with the approved change.
    """
    from evolving_agent.review.apply import apply_diff
    from evolving_agent.review.models import CanonDiff

    trailers = gitrepo.parse_trailers(str(commit.message))
    decision = read_decision(root, trailers.get("Review-Id", ""))
    if decision is None or not decision.get("diff"):
        return []  # reported by _check_approval
    path = "canon/identity.yaml"
    changed = [p for p in _touches_tracked([str(p) for p in commit.stats.files]) if p != path]
    if changed:
        return [f"{where}: an approved review may change only {path}, not {', '.join(changed)}"]
    try:
        before = commit.parents[0].tree[path].data_stream.read().decode("utf-8")
        after = commit.tree[path].data_stream.read().decode("utf-8")
        expected = apply_diff(before, CanonDiff.model_validate(decision["diff"])).after
    except (KeyError, ValueError, EvolvingAgentError):
        return [f"{where}: the approved diff does not apply to the Canon before it"]
    if expected != after:
        return [f"{where}: {path} holds more than the approved diff"]
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
    applied = decision.get("commit")
    if applied and applied != sha:
        return [
            f"{where}: review {review_id} was applied by commit {str(applied)[:10]}, not this one"
        ]
    return []


def _check_worktree(root: MemoryRoot) -> list[str]:
    repo = gitrepo.open_repo(root)
    problems = []
    dirty = repo.git.status("--porcelain", "--untracked-files=all", "--", "canon")
    for line in dirty.splitlines():
        path = line[3:].strip()
        lineno = _first_changed_line(root, path)
        problems.append(
            f"{root.path / path}:{lineno}: changed behind the writer's back (not committed)"
        )
    return problems


def _first_changed_line(root: MemoryRoot, relpath: str) -> int:
    """1-based number of the first line that differs from the last commit (1 if new)."""
    committed = gitrepo.committed_text(root, relpath)
    try:
        current = (root.path / relpath).read_bytes().splitlines()
    except OSError:
        return 1  # deleted: the file as a whole is the change
    if committed is None:
        return 1
    old = committed.splitlines()
    for i, (a, b) in enumerate(zip(old, current, strict=False), 1):
        if a != b:
            return i
    return min(len(old), len(current)) + 1
