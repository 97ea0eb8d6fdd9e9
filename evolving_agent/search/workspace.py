"""Candidates as git commits: round repositories, agent worktrees, turn commits.

Every round lives in ``rounds/rNN/`` of the run directory.  A forgetting round with a
fresh repository (``forget``, ``forget-team``, and round 1 of every policy) creates
``rounds/rNN/repo`` holding exactly one commit: the files of the team's best
candidate, no earlier history.  Each agent then gets its own worktree
``rounds/rNN/agent-K`` on branch ``rNN-agent-K``; the worktree holds nothing but the
candidate's files.  ``fork-and-flush`` keeps round 1's repository and adds new
worktrees at the best commit, so the whole candidate history stays reachable.

Every candidate is tagged ``cand/rNN-aK-tTTT`` (all of a round's tags are written in
one call, see :func:`tag_candidates`), so peers' commits can be named and inspected
(``git show``) from any worktree of the round's repository.

Agents can write to these repositories, so every git call goes through the hardened
runner (:mod:`evolving_agent.gitcmd`), and before the harness touches a repository
after a turn, its ``.git/config`` is put back to the harness's own
(:func:`restore_config`): an agent-planted filter driver, hook path or fsmonitor
never runs inside a harness git call.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evolving_agent.errors import InvalidInput
from evolving_agent.gitcmd import NO_DIFF_PROGRAMS, GitError, git

_SKIP = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}

# What ``git init`` writes, and nothing else: no filters, hooks, fsmonitor, includes.
HARNESS_CONFIG = (
    "[core]\n"
    "\trepositoryformatversion = 0\n"
    "\tfilemode = true\n"
    "\tbare = false\n"
    "\tlogallrefupdates = true\n"
)


@dataclass(frozen=True)
class TurnCommit:
    commit: str
    empty: bool
    lines_changed: int


class UnsafeCandidate(InvalidInput):
    """A commit that cannot be exported safely (a symlink leaving the candidate)."""


def copy_candidate(candidate: Path, dest: Path) -> None:
    """Copy the candidate's files into ``dest``.

    A git work tree contributes only its committed files at HEAD (what a judge
    would see); a plain directory is copied without VCS and cache directories.
    """
    dest.mkdir(parents=True, exist_ok=True)
    top = git(candidate, "rev-parse", "--show-toplevel", "HEAD", check=False)
    lines = top.text.splitlines() if top.ok else []
    if len(lines) == 2 and Path(lines[0]).resolve() == candidate.resolve():
        export_commit(candidate, "HEAD", dest)
        return
    for item in candidate.iterdir():
        if item.name in _SKIP:
            continue
        if item.is_dir():
            shutil.copytree(item, dest / item.name, ignore=shutil.ignore_patterns(*_SKIP))
        else:
            shutil.copy2(item, dest / item.name)


def export_commit(repo_dir: Path, commit: str, dest: Path) -> None:
    """Write the committed, non-ignored files of ``commit`` into ``dest`` (git archive).

    A symlink that is absolute or points outside the candidate raises
    :class:`UnsafeCandidate` (an ``InvalidInput``), never a tarfile error.
    """
    dest.mkdir(parents=True, exist_ok=True)
    archive = dest.parent / f".{dest.name}.tar"
    # git writes the archive straight to a file: no copy of it in this process's memory.
    # It reads the objects through a git directory of the harness's own (no config,
    # no info/attributes an agent could plant: git archive runs smudge filters).
    env = _isolated_git_dir(repo_dir, dest.parent)
    try:
        if env is not None and not re.fullmatch(r"[0-9a-f]{40,64}", commit):
            named = git(
                repo_dir, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}", check=False
            )
            commit = named.text if named.ok else commit
        proc = git(
            repo_dir, "archive", "--format=tar", "-o", str(archive), commit,
            check=False, env=env,
        )  # fmt: skip
        if not proc.ok:
            raise InvalidInput(
                f"cannot export commit {commit}: {proc.stderr.strip()}", file=repo_dir
            )
        try:
            tar = tarfile.open(archive)
        except tarfile.ReadError:
            # An empty tree: git writes a header and no member, which tarfile refuses.
            if not git(repo_dir, "ls-tree", commit, env=env).stdout:
                return
            raise
        with tar:
            try:
                tar.extractall(dest, filter="data")
            except tarfile.FilterError as exc:
                member = exc.tarinfo
                raise UnsafeCandidate(
                    f"candidate {commit[:12]} has an unsafe symlink: "
                    f"{member.name} -> {member.linkname}"
                ) from None
    finally:
        archive.unlink(missing_ok=True)
        if env is not None:
            shutil.rmtree(env["GIT_DIR"], ignore_errors=True)


def _isolated_git_dir(repo_dir: Path, scratch: Path) -> dict[str, str] | None:
    """Environment pointing git at ``repo_dir``'s objects through a fresh git directory."""
    common = _common_git_dir(repo_dir)
    if common is None or not (common / "objects").is_dir():
        return None
    git_dir = Path(tempfile.mkdtemp(prefix=".ea-git-", dir=scratch))
    (git_dir / "objects").mkdir()
    (git_dir / "refs").mkdir()
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "config").write_text(HARNESS_CONFIG.replace("bare = false", "bare = true"))
    return {"GIT_DIR": str(git_dir), "GIT_OBJECT_DIRECTORY": str(common / "objects")}


def _write_config(git_dir: Path) -> None:
    # A unique temporary name: parallel agents' turns may restore the same repository.
    fd, tmp = tempfile.mkstemp(dir=git_dir, prefix=".config.harness.")
    with os.fdopen(fd, "w") as fh:
        fh.write(HARNESS_CONFIG)
    os.replace(tmp, git_dir / "config")


def init_round_repo(repo_dir: Path, files: Path, message: str) -> str:
    """A new repository whose only commit holds the files in ``files``; its sha."""
    repo_dir.mkdir(parents=True)
    git(repo_dir, "init", "-q", NO_TEMPLATES, "-b", "main")
    _write_config(repo_dir / ".git")
    for item in files.iterdir():
        target = repo_dir / item.name
        if item.is_dir():
            shutil.copytree(item, target, symlinks=True)
        else:
            shutil.copy2(item, target, follow_symlinks=False)
    git(repo_dir, "add", "-A")
    made = git(
        repo_dir, "-c", "core.abbrev=40", "commit", "--allow-empty", "--no-verify",
        "-m", message, identity=True,
    )  # fmt: skip
    summary = _COMMITTED.search(made.stdout.decode(errors="replace"))
    return summary.group(1) if summary else git(repo_dir, "rev-parse", "HEAD").text


# ``git init`` without the template directory: no sample hooks, no description -- files
# every repository of a run would carry (and every round boundary delete) for nothing.
NO_TEMPLATES = "--template="


def _common_git_dir(path: Path) -> Path | None:
    """The repository's ``.git`` directory, from a repository or one of its worktrees."""
    dot_git = path / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        pointer = dot_git.read_text().strip()
    except OSError:
        return None
    if not pointer.startswith("gitdir:"):
        return None
    gitdir = (path / pointer.removeprefix("gitdir:").strip()).resolve()
    # <repo>/.git/worktrees/<name>  ->  <repo>/.git
    return gitdir.parent.parent if gitdir.parent.name == "worktrees" else gitdir


def restore_config(path: Path) -> bool:
    """Put the harness's own ``.git/config`` back if an agent changed it; True if it had.

    ``path`` is the repository or any of its worktrees.  A per-worktree config
    (``config.worktree``) is removed too: only the harness configures these repositories.
    """
    common = _common_git_dir(path)
    if common is None:
        return False
    changed = False
    try:
        current = (common / "config").read_text()
    except (OSError, UnicodeDecodeError):
        current = None
    if current != HARNESS_CONFIG:
        _write_config(common)
        changed = True
    for extra in common.glob("worktrees/*/config.worktree"):
        extra.unlink(missing_ok=True)
        changed = True
    return changed


def pin_git_pointer(path: Path) -> dict[Path, bytes] | None:
    """The files that say which repository the worktree ``path`` belongs to, as they are
    now: its ``.git`` pointer and its registration's ``commondir`` (None: not a worktree)."""
    dot_git = path / ".git"
    if dot_git.is_symlink() or not dot_git.is_file():
        return None
    pointer = dot_git.read_bytes()
    pinned = {dot_git: pointer}
    admin = Path(pointer.decode(errors="replace").removeprefix("gitdir:").strip())
    admin = admin if admin.is_absolute() else path / admin
    if (admin / "commondir").is_file():
        pinned[admin / "commondir"] = (admin / "commondir").read_bytes()
    return pinned


def restore_git_pointer(path: Path, pinned: dict[Path, bytes] | None) -> None:
    """Put those files back if an agent deleted or replaced them.

    Without the ``.git`` pointer git would look for the next repository up -- often
    the user's own project, where the run directory lives -- and commit the turn
    there; a ``commondir`` pointed at a repository of the agent's makes the harness's
    git read that repository's config (filter drivers) and commit into it.
    """
    if pinned and (path.is_symlink() or not path.is_dir()):
        # The agent replaced its worktree (by a symlink to another repository, say):
        # never follow it; an empty worktree is what the agent left.
        if path.is_symlink() or path.exists():
            path.unlink()
        path.mkdir()
    for name, content in (pinned or {}).items():
        if not name.is_symlink() and name.is_file() and name.read_bytes() == content:
            continue
        if name.is_dir() and not name.is_symlink():
            shutil.rmtree(name)
        else:
            name.unlink(missing_ok=True)
        name.write_bytes(content)


def add_worktree(repo_dir: Path, path: Path, branch: str, commit: str) -> None:
    """A worktree at ``path`` on ``branch`` at ``commit``, whatever was there before.

    A worktree left half-made by a kill (directory partly checked out, registration
    locked as "initializing") is removed and made again: ``-f -f`` overrides a missing
    but locked registration.
    """
    if path.exists() or path.is_symlink():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    restore_config(repo_dir)
    remove_stale_locks(repo_dir)
    common = _common_git_dir(repo_dir)
    # Forget any registration of this path, locked or not (the directory is gone), and
    # any registration a kill left half-written (git cannot even prune those).
    for admin in common.glob("worktrees/*") if common else []:
        if _half_made(admin) or _registered_path(admin) == path.absolute() or _on(admin, branch):
            shutil.rmtree(admin, ignore_errors=True)
    git(repo_dir, "worktree", "prune")
    git(repo_dir, "worktree", "add", "-q", "-f", "-f", "-B", branch, str(path), commit)


def _registered_path(admin: Path) -> Path | None:
    try:
        return Path((admin / "gitdir").read_text().strip()).parent.absolute()
    except OSError:
        return None


def _on(admin: Path, branch: str) -> bool:
    """A registration of ``branch`` (the harness's own, one worktree per branch): in a
    copied run directory it still names the original's worktree."""
    try:
        return (admin / "HEAD").read_text().strip() == f"ref: refs/heads/{branch}"
    except (OSError, UnicodeDecodeError):
        return False


def _half_made(admin: Path) -> bool:
    """A worktree registration missing one of the files git writes to make it."""
    for name in ("gitdir", "commondir", "HEAD"):
        try:
            if not (admin / name).read_text().strip():
                return True
        except (OSError, UnicodeDecodeError):
            return True
    return False


def remove_stale_locks(repo_dir: Path) -> list[Path]:
    """Delete ``*.lock`` files a killed git left in the repository; the paths removed.

    Only safe while no git process works on the repository: the runner holds the run
    lock, and every process of an earlier harness has been killed.
    """
    common = _common_git_dir(repo_dir)
    if common is None:
        return []
    removed = []
    for lock in common.rglob("*.lock"):
        if lock.is_file():
            lock.unlink(missing_ok=True)
            removed.append(lock)
    return removed


def remove_own_locks(path: Path) -> None:
    """Delete the lock files that would stop the harness committing in the worktree
    ``path`` (its index and HEAD, its branch): ones an agent left or planted.  Only
    this worktree's, as peers' turns may hold their own at the same moment."""
    dot_git = path / ".git"
    if dot_git.is_symlink():
        return
    if dot_git.is_dir():  # a repository of its own (a private workspace)
        admin = dot_git
    elif dot_git.is_file():
        admin = Path(dot_git.read_text(errors="replace").removeprefix("gitdir:").strip())
        admin = admin if admin.is_absolute() else path / admin
    else:
        return
    locks = [admin / "index.lock", admin / "HEAD.lock"]
    try:
        ref = (admin / "HEAD").read_text().strip().removeprefix("ref: ")
    except (OSError, UnicodeDecodeError):
        ref = ""
    common = _common_git_dir(path)
    if common is not None and ref.startswith("refs/heads/") and ".." not in ref:
        locks.append(common / f"{ref}.lock")
    for lock in locks:
        if lock.is_file() or lock.is_symlink():
            lock.unlink(missing_ok=True)


def reset_worktree(path: Path, commit: str) -> None:
    """Throw away anything uncommitted (a turn killed half-way) and go to ``commit``."""
    restore_config(path)
    remove_own_locks(path)
    git(path, "reset", "-q", "--hard", commit)
    git(path, "clean", "-q", "-fdx")


def head(path: Path) -> str:
    return git(path, "rev-parse", "HEAD").text


def commit_turn(path: Path, base: str, message: str) -> TurnCommit:
    """Commit whatever the agent left (respecting .gitignore) and measure the change.

    The agent may also have committed on its own; the candidate is HEAD either way.
    An empty turn is one whose tree equals the base's tree.  Git processes are the
    bulk of the harness's own per-turn cost, so the common cases are cheap: a turn
    that left nothing costs one (``status``, which also names HEAD), one that changed
    only files git tracks two (``status``, ``commit -a`` -- whose summary line gives
    the commit and the lines changed), one that made new files three (an ``add -A``
    first); an agent that committed by itself costs a ``diff`` more.
    """
    restore_config(path)
    remove_own_locks(path)
    status = git(path, "status", "--porcelain=v2", "--branch", "--no-renames")
    rows = status.text.splitlines()
    current = next((r.split()[2] for r in rows if r.startswith("# branch.oid ")), "")
    if all(r.startswith("# ") for r in rows):  # nothing uncommitted
        if current == base:
            return TurnCommit(base, True, 0)
        return _measured(current, _numstat(path, base, current))
    # ``commit -a`` stages every change to a tracked file (edits, deletions, type
    # changes) as ``add -A`` would; only new files ("?" rows) need the ``add``.
    untracked = any(r.startswith(("? ", "u ")) for r in rows)
    if untracked:
        git(path, "add", "-A")
    made = git(
        path, "-c", "core.abbrev=40", "commit", *(() if untracked else ("-a",)),
        "--no-verify", "-m", message, check=False, identity=True,
    )  # fmt: skip
    out = made.stdout.decode(errors="replace")
    if made.ok:
        summary = _COMMITTED.search(out)
        if summary and current == base:
            stats = {kind: int(n) for n, kind in _STAT.findall(out)}
            lines = stats.get("insertion", 0) + stats.get("deletion", 0)
            # A binary or mode-only change still counts: one line per file.
            return TurnCommit(summary.group(1), False, lines or stats.get("file", 1))
        commit = summary.group(1) if summary else head(path)
    elif "nothing to commit" in out + made.stderr:
        commit = head(path)
        if commit == base:
            return TurnCommit(commit, True, 0)
    else:
        raise GitError(["commit"], made.returncode, made.stderr)
    # The agent made commits of its own: measure against the turn's base.
    return _measured(commit, _numstat(path, base, commit))


_COMMITTED = re.compile(r"^\[[^\]]*?\b([0-9a-f]{40})\] ", re.MULTILINE)
_STAT = re.compile(r"(\d+) (file|insertion|deletion)")


def _numstat(path: Path, base: str, commit: str) -> str:
    return git(path, "diff", "--numstat", *NO_DIFF_PROGRAMS, base, commit).text


def lines_changed(path: Path, base: str, commit: str) -> int | None:
    """Lines changed from ``base`` to ``commit`` as a turn counts them; None if git cannot say
    (a commit gone from the repository, a repository gone)."""
    proc = git(path, "diff", "--numstat", *NO_DIFF_PROGRAMS, base, commit, check=False)
    return _measured(commit, proc.text).lines_changed if proc.ok else None


def measure(path: Path, base: str, commit: str) -> TurnCommit:
    """``commit`` measured against ``base`` (empty, lines changed), as a turn is."""
    if commit == base:
        return TurnCommit(commit, True, 0)
    return _measured(commit, _numstat(path, base, commit))


def _measured(commit: str, numstat: str) -> TurnCommit:
    lines = 0
    rows = [row for row in numstat.splitlines() if row.strip()]
    for row in rows:
        added, deleted, _name = row.split("\t", 2)
        # Binary files show "-": count each as one changed line.
        lines += (int(added) if added != "-" else 1) + (int(deleted) if deleted != "-" else 0)
    return TurnCommit(commit, not rows, lines)


def tag_candidates(repo_dir: Path, tags: dict[str, str]) -> None:
    """Point each tag name at its commit, all in one git call."""
    if not tags:
        return
    restore_config(repo_dir)
    common = _common_git_dir(repo_dir)
    # The names are predictable: an agent can plant their locks in the shared repo.
    for name in tags:
        lock = (common or repo_dir) / "refs" / "tags" / f"{name}.lock"
        if lock.is_file() or lock.is_symlink():
            lock.unlink(missing_ok=True)
    script = "".join(f"update refs/tags/{name} {commit}\n" for name, commit in tags.items())
    git(repo_dir, "update-ref", "--stdin", input=script.encode())


def tag_candidate(path: Path, name: str, commit: str) -> None:
    tag_candidates(path, {name: commit})


def read_file_at(path: Path, commit: str, relpath: str) -> str | None:
    """A file's content at ``commit`` (None if absent); used to peek at peers' work."""
    proc = git(path, "show", "--no-textconv", f"{commit}:{relpath}", check=False)
    return proc.stdout.decode() if proc.ok else None
