"""The one git runner: git as a plain child process that a repository cannot subvert.

Memory roots and search workspaces are repositories that an assistant or an agent can
write to with a shell.  Repository config can make a harmless ``git status`` run
arbitrary programs (``core.hooksPath``, ``core.fsmonitor``, ``diff.external``, a
``core.pager``), and user or system config can change what git prints.  So every git
call the product makes goes through :func:`git`:

- the user's and the system's config are ignored (``GIT_CONFIG_GLOBAL=/dev/null``,
  ``GIT_CONFIG_NOSYSTEM=1``), so results do not depend on who runs them;
- hooks, fsmonitor, external diff drivers, pagers, prompts and lazy fetches are turned
  off on the command line, which outranks the repository's own config;
- paths are never quoted (``core.quotePath=false``); callers that parse paths use
  ``-z`` output anyway;
- stdin is closed unless ``input`` is given, output is captured as bytes.

The user's global config (and so their global identity) is deliberately not read: a
caller that commits passes ``identity=True`` for the harness's fixed identity, unless
the environment or the repository's own config names one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from evolving_agent.errors import EvolvingAgentError
from evolving_agent.records import record

IDENTITY = ("evolving-agent", "evolving-agent@localhost")

# Options that outrank repository config (command-line -c wins over .git/config).
SAFE_OPTIONS: tuple[str, ...] = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.quotePath=false",
    "-c", "core.pager=cat",
    "-c", "core.askPass=",
    "-c", "core.sshCommand=false",
    "-c", "diff.external=",
    "-c", "protocol.allow=never",
    "-c", "protocol.file.allow=always",
    "-c", "credential.helper=",
    "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",
    "-c", "advice.detachedHead=false",
    "-c", "advice.graftFileDeprecated=false",
    "-c", "init.defaultBranch=main",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
)  # fmt: skip

# What every diff command line adds: a textconv or external driver that the repository's
# config and .gitattributes name would run a program (no -c option can turn textconv off).
NO_DIFF_PROGRAMS: tuple[str, ...] = ("--no-ext-diff", "--no-textconv")


class GitError(EvolvingAgentError):
    """A git command the product relies on failed."""

    def __init__(self, args: Sequence[str], code: int, stderr: str) -> None:
        tail = " | ".join(line for line in stderr.strip().splitlines()[-3:] if line.strip())
        super().__init__(f"git {' '.join(args[:2])} failed (exit {code}): {tail}".rstrip(": "))
        self.code = code
        self.stderr = stderr


@record(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def text(self) -> str:
        """stdout decoded, trailing newline stripped."""
        return self.stdout.decode(errors="replace").rstrip("\n")

    def z_items(self) -> list[str]:
        """stdout split on NUL (for ``-z`` output), empty items dropped."""
        return [item.decode(errors="surrogateescape") for item in self.stdout.split(b"\0") if item]


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git child gets."""
    env = {
        key: value
        for key, value in os.environ.items()
        # Variables that would redirect git to another repository or config.
        if not key.startswith("GIT_") or key in _KEPT_GIT_VARS
    }
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
        # .git/info/grafts rewrites parents as 'git replace' does; read the real ones.
        GIT_GRAFT_FILE=os.devnull,
        LC_ALL="C",
    )
    if extra:
        env.update(extra)
    return env


# Identity and date variables a caller (or a test) may legitimately set.
_KEPT_GIT_VARS = frozenset(
    {
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    }
)


def git(
    cwd: Path | str,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    identity: bool = False,
) -> GitResult:
    """Run ``git ARGS`` in ``cwd`` with the hardened options; raise GitError if ``check``."""
    extra = dict(env or {})
    if identity:
        for var, value in (
            ("GIT_AUTHOR_NAME", IDENTITY[0]),
            ("GIT_AUTHOR_EMAIL", IDENTITY[1]),
            ("GIT_COMMITTER_NAME", IDENTITY[0]),
            ("GIT_COMMITTER_EMAIL", IDENTITY[1]),
        ):
            extra.setdefault(var, os.environ.get(var, value))
    proc = subprocess.run(
        ["git", *SAFE_OPTIONS, *args],
        cwd=cwd,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
        capture_output=True,
        env=git_env(extra),
        timeout=timeout,
        check=False,
    )
    result = GitResult(proc.returncode, proc.stdout, proc.stderr.decode(errors="replace"))
    if check and not result.ok:
        raise GitError(args, proc.returncode, result.stderr)
    return result
