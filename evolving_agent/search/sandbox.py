"""Agents and scorers under bubblewrap: each process sees only what it needs.

``--sandbox bwrap`` (the default when ``bwrap`` is on PATH) runs every ``command``
agent turn and every score inside ``bwrap``:

* **agent**: its workspace read-write, the files its command names read-only, the
  system's read-only directories (``/usr``, ``/etc``, ``/opt``, the Python running the
  harness), an empty ``/tmp`` and ``$HOME``, its own ``/proc`` in a private PID
  namespace (the harness and its other processes do not exist for it), the network
  unless ``--sandbox-net off``;
* **scorer**: the candidate's clean export read-write, the directories of the files
  the score command names (and ``--score-cwd``) read-only, the same system
  directories, a private PID namespace, no network; the run directory is masked if
  it lies inside one of those directories.

``--sandbox-ro PATH`` / ``--sandbox-rw PATH`` add paths to both.  ``--sandbox none``
runs them as plain processes of the user: then an agent can still reach, by absolute
path, whatever the user can (the run directory, teammates' workspaces in the private
folder, the harness's ``/proc`` entries); :func:`missing_protections` says so once.

Either way agents and scorers get the harness's environment without ``PWD`` /
``OLDPWD`` (the folder the harness was started in) and without relative
``PYTHONPATH`` entries (a candidate's ``sitecustomize.py`` must not load into a
scorer running inside the export).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from evolving_agent.errors import NotFound, UsageError

SANDBOX_NAMES = ("bwrap", "none")
SANDBOX_VAR = "EA_SANDBOX"  # the default when --sandbox is not given
_SYSTEM_DIRS = ("/usr", "/etc", "/opt")
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_DROPPED_ENV = ("PWD", "OLDPWD", "_")


def default_sandbox() -> str:
    """``bwrap`` when it is installed, else ``none``."""
    return "bwrap" if shutil.which("bwrap") else "none"


def check_sandbox(kind: str) -> None:
    if kind not in SANDBOX_NAMES:
        raise UsageError(f"unknown sandbox {kind!r}; choose one of: {', '.join(SANDBOX_NAMES)}")
    if kind == "bwrap" and shutil.which("bwrap") is None:
        raise NotFound("bwrap not found (install bubblewrap, or pass --sandbox none)")


def missing_protections(kind: str, agent: str) -> str | None:
    """The one notice a run gives when agents or scorers are not confined."""
    if kind == "none":
        return (
            "no sandbox (--sandbox none): agents and scorers run as plain processes of "
            "this user and can read, by absolute path, whatever it can -- the run "
            "directory, teammates' workspaces, the scorer's files, the harness's /proc "
            "entries; install bubblewrap for --sandbox bwrap"
        )
    if agent in ("claude", "codex", "gemini", "opencode"):
        return (
            f"the {agent} agent runs outside bwrap (it needs its own home, login and "
            "network); confine it with its own sandbox through --agent-args; scorers "
            "run under bwrap"
        )
    return None


ISOLATIONS = ("bwrap", "scorers", "none")


def isolation(kind: str, agent: str) -> str:
    """What the run can guarantee: ``bwrap`` (agents and scorers confined: the run
    directory, earlier rounds and teammates are out of every agent's reach),
    ``scorers`` (scorers confined, agents not: Claude Code and Codex run outside bwrap)
    or ``none`` (nothing confined).  Only ``bwrap`` lets a round boundary be called
    forgetting: below it an agent can read earlier rounds by absolute path."""
    if kind != "bwrap":
        return "none"
    return "scorers" if agent in ("claude", "codex") else "bwrap"


def not_forgotten(level: str) -> str:
    """The notice of a forgetting policy whose rounds are restarts, not forgetting."""
    return (
        f"isolation {level}: this run's rounds are restarts, not forgetting -- an agent "
        "can read earlier rounds' candidates and records by absolute path; only "
        "--sandbox bwrap with a command agent keeps them out of its reach"
    )


@dataclass(frozen=True)
class Sandbox:
    """How a run confines its agents and scorers (plain values: Ray ships it)."""

    kind: str = "none"  # "bwrap" or "none"
    network: bool = True  # agents' network; scorers never have one under bwrap
    ro: tuple[str, ...] = ()
    rw: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()  # masked (an empty tmpfs) wherever it shows inside a bind
    # Bind the folders of the scripts an agent command names (read-only): only where
    # ``hide`` names everything that must stay out of them (config.agent_confinement).
    script_folders: bool = False

    @property
    def confined(self) -> bool:
        return self.kind == "bwrap"

    def environment(self, extra: Mapping[str, str]) -> dict[str, str]:
        """The environment of an agent or a scorer: the harness's, minus what names
        where it was started, plus ``extra``."""
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        if "PYTHONPATH" in env:
            kept = [p for p in env["PYTHONPATH"].split(os.pathsep) if os.path.isabs(p)]
            if kept:
                env["PYTHONPATH"] = os.pathsep.join(kept)
            else:
                del env["PYTHONPATH"]
        env.update(extra)
        return env

    def agent_argv(self, command: str, *, workspace: Path) -> list[str]:
        """``sh -c COMMAND`` for an agent in ``workspace``, confined if bwrap.

        The files the command names are readable, and so is the folder of each script
        among them (a wrapper that runs a helper beside it), read-only -- unless that
        folder is, or lies inside, a path the sandbox hides (the run directory, the
        private workspaces, the scorer's folder), or is ``$HOME`` or above it; hidden
        paths inside a bound folder stay masked."""
        shell = ["/bin/sh", "-c", command]
        if not self.confined:
            return shell
        readable = named_files(command)
        if self.script_folders:
            readable += [f for f in script_folders(readable) if self._may_bind(f)]
        return [
            *self._base(network=self.network, readable=readable, writable=[workspace]),
            "--chdir", str(workspace), "--", *shell,
        ]  # fmt: skip

    def _may_bind(self, folder: Path) -> bool:
        text = str(folder)
        home = os.environ.get("HOME") or "/"
        if text == "/" or _inside(home, text):
            return False  # $HOME or above: far more than a script's helpers
        return not any(_inside(text, hidden) for hidden in self.hide)

    def scorer_argv(
        self, command: str, *, cwd: Path, export: Path, files: Iterable[str]
    ) -> list[str]:
        """``sh -c COMMAND`` for a scorer, confined if bwrap."""
        shell = ["/bin/sh", "-c", command]
        if not self.confined:
            return shell
        # The folders of the files it names, as named (a path through a symlink)
        # and as they resolve; the sealed files are the resolved ones.
        # A sealed directory (a key ending in "/") is bound itself.
        named = {str(p.parent) for p in named_files(command)}
        folders = {f.rstrip("/") if f.endswith("/") else str(Path(f).parent) for f in files}
        readable = folders | named | {str(cwd)}
        readable.discard(str(export))
        return [
            *self._base(
                network=False, readable=[Path(p) for p in sorted(readable)], writable=[export]
            ),
            "--chdir", str(cwd), "--", *shell,
        ]  # fmt: skip

    def _base(
        self, *, network: bool, readable: Iterable[Path], writable: Iterable[Path]
    ) -> list[str]:
        args = [
            "bwrap", "--die-with-parent", "--new-session",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        ]  # fmt: skip
        if not network:
            args.append("--unshare-net")
        for path in _SYSTEM_DIRS:
            args += ["--ro-bind-try", path, path]
        for path in _SYSTEM_LINKS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        home = os.environ.get("HOME")
        if home and home != "/" and os.path.isabs(home):
            args += ["--tmpfs", home]
        bound: list[str] = []
        for tool in _python_dirs():
            args += ["--ro-bind-try", tool, tool]
            bound.append(tool)
        for item in [*readable, *map(Path, self.ro)]:
            if item.exists() and not any(_inside(str(item), b) for b in bound):
                # Bound where it is named; the content is wherever it resolves to.
                args += ["--ro-bind", os.path.realpath(item), str(item)]
                bound.append(str(item))
        # Masked before the writable binds: a workspace inside a hidden folder (the
        # private workspaces) is bound again on top of the mask.
        for hidden in self.hide:
            if any(_inside(hidden, b) and hidden != b for b in bound):
                args += ["--tmpfs", hidden]
        for item in [*writable, *map(Path, self.rw)]:
            args += ["--bind", str(item), str(item)]
            bound.append(str(item))
        return args


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _python_dirs() -> list[str]:
    """The tools outside the system directories: the Python running the harness (a
    pyenv or venv), and the folders on PATH (a version manager's ``shims`` need the
    folder above them too)."""
    found = set()
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        if prefix and not any(_inside(prefix, d) for d in _SYSTEM_DIRS):
            found.add(prefix)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        if any(_inside(entry, d) for d in (*_SYSTEM_DIRS, *_SYSTEM_LINKS)):
            continue
        found.add(os.path.dirname(entry) if os.path.basename(entry) == "shims" else entry)
    return sorted(found)


def named_files(command: str) -> list[Path]:
    """Existing absolute files a command names (an agent script, its interpreter)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    found = []
    for word in words:
        word = word.split("=", 1)[-1]
        if os.path.isabs(word) and os.path.isfile(word):
            found.append(Path(word))
    return found


def script_folders(files: Iterable[Path]) -> list[Path]:
    """The folders of the scripts among ``files`` (a compiled program's folder -- an
    interpreter's ``bin`` -- is not a script's)."""
    found: list[Path] = []
    for path in files:
        try:
            with path.open("rb") as fh:
                if fh.read(4) == b"\x7fELF":
                    continue
        except OSError:
            continue
        if path.parent not in found:
            found.append(path.parent)
    return found


def absolute_command(command: str, workdir: Path, candidate: Path | None = None) -> str:
    """``command`` with each word that is a relative path to an existing file under
    ``workdir`` (``./agent.sh``, ``agent.py``) made absolute: an agent runs in
    its workspace, where the user's relative path would mean nothing.  A word that
    also names a file of the candidate (it will be in the workspace) is left alone, and
    so is anything but plain words."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if " ".join(words) != command or any(set(w) & set("|&;<>()$`*?![]{}'\"\\") for w in words):
        return command  # quoting or shell syntax: leave it exactly as written
    out = []
    for word in words:
        path = Path(word)
        relative = not path.is_absolute() and not word.startswith(("~", "-"))
        if (
            relative
            and (workdir / path).is_file()
            and not (candidate is not None and (candidate / path).exists())
        ):
            word = shlex.quote(str((workdir / path).resolve()))
        out.append(word)  # the others verbatim: quoting "~/x" would stop its expansion
    return " ".join(out)


def hide_command_line(title: str) -> bool:
    """Overwrite this process's command line as ``/proc/PID/cmdline`` shows it (Linux):
    the harness's own argv names the score command and the run directory, and any
    process of the same user can read it.  True if it was overwritten.

    The kernel reads cmdline from the argv area of the process's stack
    (``arg_start``..``arg_end`` in ``/proc/self/stat``); Python keeps its own copy of
    the arguments, so writing over that area changes nothing else.
    """
    import ctypes

    try:
        stat = Path("/proc/self/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        start, end = int(fields[45]), int(fields[46])  # fields 48 and 49 of stat
    except (OSError, ValueError, IndexError):
        return False
    size = end - start
    if size <= 1:
        return False
    data = title.encode()[: size - 1]
    ctypes.memmove(start, data + b"\0" * (size - len(data)), size)
    return True


def make_undumpable() -> bool:
    """Make this process non-dumpable (Linux ``PR_SET_DUMPABLE`` 0): its
    ``/proc/PID/fd``, ``cwd``, ``environ`` and ``maps`` -- which name the run directory
    and the scorer -- become unreadable to the other processes of the same user (root
    still reads them).  Children get their own flag back when they exec.  True if set."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
