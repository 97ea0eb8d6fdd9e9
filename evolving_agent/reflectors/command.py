"""The ``command`` reflector: pipe the prompt to any CLI, read JSON from its stdout.

Works with ``claude -p``, ``codex exec``, ``ollama run MODEL``, ``llm`` — anything that
reads a prompt on stdin and prints an answer.  The answer's JSON object may be bare,
fenced, or the last line of the output.

The command is code we did not write, run while a job holds write authority, so it
runs *contained* (``evolving_agent.process.run_process``): its own session and process
group, in a fresh scratch directory outside the memory root, killed as a group on
timeout together with any descendant that escaped with ``setsid``.  Around every call
the protected files of the root — Canon, ``schedule.yaml`` (which names this very
command) and the ``crons/`` prompts — are snapshotted; if the command changed any of
them, they are put back byte for byte and :class:`ReflectorTampered` (exit 5) fails the
job before anything is planned or written.  A missing program, a timeout or a non-zero
exit is :class:`ReflectorUnavailable`: the job falls back to rules at once and says why.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

from evolving_agent.errors import EXIT_TAMPERED, EvolvingAgentError, UsageError
from evolving_agent.errortext import first_error_line
from evolving_agent.paths import MemoryRoot
from evolving_agent.process import Completed, run_process
from evolving_agent.reflectors.base import Reflector, ReflectorError, ReflectorUnavailable
from evolving_agent.reflectors.prompt import PromptReflector
from evolving_agent.reflectors.settings import ReflectorSettings


class ReflectorTampered(EvolvingAgentError):
    """A reflector changed files it has no authority over; they were restored."""

    exit_code = EXIT_TAMPERED

    def __init__(self, reflector: str, changed: list[str]) -> None:
        self.reflector = reflector
        self.changed = changed
        shown = ", ".join(changed[:5]) + (
            f" (+{len(changed) - 5} more)" if len(changed) > 5 else ""
        )
        super().__init__(
            f"the {reflector} reflector changed {shown} while it ran; restored to the state "
            "before the run and the job failed (nothing was planned or written)"
        )


# -- what the reflector must leave alone --------------------------------------------------

Entry = tuple[str, int, bytes]  # (kind: file/link/dir, permission bits, content or target)


def protected_paths(root: MemoryRoot) -> list[Path]:
    """Canon, the schedule file (it names the reflector command) and the prompt files."""
    return [root.canon, root.schedule_file, root.path / "crons"]


def snapshot(root: MemoryRoot, extra: Iterable[Path] = ()) -> dict[str, Entry]:
    """Every protected path's type, mode and bytes (links are not followed), and those
    of ``extra`` paths of the root (a probe run also guards Today)."""
    out: dict[str, Entry] = {}
    for top in [*protected_paths(root), *extra]:
        _take(root.path, top, out)
    return out


def _take(base: Path, path: Path, out: dict[str, Entry]) -> None:
    rel = path.relative_to(base).as_posix()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        out[rel] = ("link", mode, os.readlink(path).encode())
    elif stat.S_ISDIR(st.st_mode):
        out[rel] = ("dir", mode, b"")
        for child in sorted(os.listdir(path)):
            _take(base, path / child, out)
    elif stat.S_ISREG(st.st_mode):
        out[rel] = ("file", mode, path.read_bytes())
    else:
        out[rel] = ("other", mode, b"")


def changed_paths(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def restore(root: MemoryRoot, before: dict[str, Entry], after: dict[str, Entry]) -> None:
    """Put the protected paths back exactly as ``before`` (new entries removed)."""
    for rel in sorted(after.keys() - before.keys(), reverse=True):  # children first
        _remove(root.path / rel)
    for rel in sorted(before):  # parents first
        kind, mode, data = before[rel]
        path = root.path / rel
        if after.get(rel) == before[rel]:
            continue
        if kind == "dir":
            if not path.is_dir() or path.is_symlink():
                _remove(path)
                path.mkdir()
            os.chmod(path, mode)
        elif kind == "link":
            _remove(path)
            os.symlink(data.decode(), path)
        elif kind == "file":
            _remove(path)
            tmp = path.with_name(f".{path.name}.restore")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


# -- the reflector ---------------------------------------------------------------------------

# How a preset's answer_of ends its message when the output holds no answer and no error.
NO_ANSWER = "(no answer in its output)"


def first_reason(done: Completed) -> str:
    """The program's first error line (stderr, else stdout) and its exit status, one line:
    ``Not logged in · Please run /login (exit 1)``."""
    code = done.returncode
    status = "command not found (exit 127)" if code == 127 else f"exit {code}"
    if code is not None and code < 0:
        status = f"killed by signal {-code}"
    for text in (done.stderr, done.stdout):
        line = first_error_line(text)
        if line:
            return f"{line} ({status})"
    return status


class CommandReflector(PromptReflector):
    name = "command"

    @classmethod
    def from_settings(
        cls, settings: ReflectorSettings, *, command: str | None, prompts: Callable[[str], str]
    ) -> Reflector:
        cmd = command or settings.command
        if not cmd:
            raise UsageError("the command reflector needs --reflector-cmd (or reflector.command)")
        return cls(cmd, prompts=prompts, timeout=settings.timeout)

    def __init__(
        self,
        command: str,
        *,
        prompts: Callable[[str], str],
        timeout: float = 120,
        root: MemoryRoot | None = None,
    ) -> None:
        super().__init__(prompts)
        self.argv = shlex.split(command)
        if not self.argv:
            raise ReflectorError("the reflector command is empty")
        self.timeout = timeout
        self.root = root  # None: no root to guard (a bare library call)

    def guard(self, root: MemoryRoot) -> CommandReflector:
        """Check ``root``'s Canon, schedule and prompts around every call."""
        self.root = root
        return self

    def complete(self, prompt: str) -> str:
        done = self.call(prompt)
        if not done.ok:
            raise ReflectorUnavailable(self.failure_reason(done))
        return done.stdout

    def call(self, prompt: str) -> Completed:
        """Run the command once, contained, with ``prompt`` on stdin."""
        root = self.root
        before = snapshot(root) if root is not None else None
        with tempfile.TemporaryDirectory(prefix="ea-reflector-") as scratch:
            env = {"EA_REFLECTOR_SCRATCH": scratch, **self.call_env(Path(scratch))}
            done = run_process(
                self.argv, cwd=Path(scratch), timeout=self.timeout, input=prompt, env=env
            )
        if root is not None and before is not None:
            after = snapshot(root)
            changed = changed_paths(before, after)
            if changed:
                restore(root, before, after)
                raise ReflectorTampered(self.name, changed)
        return done

    def call_env(self, scratch: Path) -> dict[str, str]:
        """Extra environment for one call (a preset's empty config home in ``scratch``)."""
        return {}

    def failure_reason(self, done: Completed) -> str:
        """One line: the program and its own first error line (then the exit status)."""
        if done.launch_error:
            return done.launch_error
        if done.timed_out:
            return f"{self.argv[0]}: timed out after {self.timeout:g}s"
        return f"{self.argv[0]}: {first_reason(done)}"


class CliPresetReflector(CommandReflector):
    """A command reflector for a known coding CLI (``claude``, ``codex``): the preset's
    flags follow the program that ``--reflector-cmd`` / ``reflector.command`` name
    (default :attr:`program`), e.g. ``"claude --model sonnet"``."""

    program: ClassVar[str]
    # The preset's flags, after the program and whatever flags the user gave it.
    preset_args: ClassVar[tuple[str, ...]]

    @classmethod
    def from_settings(
        cls, settings: ReflectorSettings, *, command: str | None, prompts: Callable[[str], str]
    ) -> Reflector:
        return cls(command or settings.command, prompts=prompts, timeout=settings.timeout)

    def __init__(
        self,
        command: str | None = None,
        *,
        prompts: Callable[[str], str],
        timeout: float = 120,
        root: MemoryRoot | None = None,
    ) -> None:
        command = command or self.program
        super().__init__(command, prompts=prompts, timeout=timeout, root=root)
        self.base_argv = shlex.split(command)
        self.argv = self.preset_argv()

    def preset_argv(self) -> list[str]:
        """The whole argv of one call (read again before every call)."""
        return [*self.base_argv, *self.preset_args]

    def complete(self, prompt: str) -> str:
        self.argv = self.preset_argv()
        done = self.call(prompt)
        if not done.ok and not done.timed_out and not done.launch_error:
            # The CLI's own JSON error (a 429, "Not logged in") comes before its exit status.
            try:
                self.answer_of(done.stdout)
            except ReflectorUnavailable as exc:
                if not str(exc).endswith(NO_ANSWER):
                    raise
            raise ReflectorUnavailable(self.failure_reason(done))
        if not done.ok:
            raise ReflectorUnavailable(self.failure_reason(done))
        return self.answer_of(done.stdout)

    def answer_of(self, stdout: str) -> str:
        """The model's answer from the CLI's output (ReflectorUnavailable when none)."""
        raise NotImplementedError
