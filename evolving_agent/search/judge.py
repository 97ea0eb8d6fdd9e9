"""The judge: scores a commit on a clean export, with a scorer the agents cannot reach.

The commit is exported with ``git archive`` (committed, non-ignored files only) into
a fresh temporary directory outside the run directory.  The score command runs, as in
the reference harness, *inside that export* (or in ``score_cwd`` if one is given),
gets the export's path as ``$EA_CANDIDATE`` (and in place of ``{candidate}``), runs
in its own session and is killed with every descendant on timeout.  Its last stdout
line must be a number; the lines before it are feedback.  A crash (non-zero exit),
timeout or unparsable output is a failed candidate, never an exception; the message
carries the scorer's stderr tail (and says "command not found" for exit 127).

**The seal.**  When a run starts, :func:`seal_command` finds the files the score
command names (a word that is a path to an existing file, relative to the directory
the run was started from, or absolute), rewrites relative ones to absolute paths (so
``python examples/tsp/score.py`` still means that file from inside the export) and
records each file's SHA-256.  Before every score the judge checks those files (a
``stat`` first; the hash again only if size, mtime or ctime moved) and refuses to
score -- the verdict is ``judge-tampered`` -- if any of them changed.

**The reach.**  The seal also covers what the scorer loads without naming it
(:func:`seal_reach`): every file in the folder of each script the command names (data
and helpers beside it), and -- from one run of the scorer on the seed with
``PYTHONVERBOSE=2`` -- every module file a Python scorer loaded (its imports, the
``.pth`` files of its site) and the listing of every directory the import system
searched (so a module or a ``.pth`` dropped there later is seen too).  A directory is
sealed as a key ending in ``/`` whose digest covers its sorted entry names.  Scorers
run with ``PYTHONNOUSERSITE=1`` (a ``.pth`` dropped in the user's site never loads) and
``PYTHONDONTWRITEBYTECODE=1`` (a scorer never changes its own sealed folders).  What the
seal cannot cover: files a non-Python scorer reads outside its folder; and an agent
running as the same user can still change a file between the check and the score --
only ``--sandbox bwrap`` makes the scorer's files unwritable to confined agents.

With ``repeats`` > 1 the command runs that many times and the median counts.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolving_agent.errors import EXIT_TAMPERED, EvolvingAgentError, InvalidInput
from evolving_agent.process import Completed, run_process
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.rundir import TAMPERED
from evolving_agent.search.sandbox import Sandbox
from evolving_agent.search.workspace import export_commit

FEEDBACK_CHARS = 2000
_SIMPLE_WORD = re.compile(r"[A-Za-z0-9_./~+,:@%=-]+")
# One shell word made of quoted and plain path characters, e.g. 'my judge'/score.py
_QUOTED_WORD = re.compile(r"(?:'[^']*'|\"[^\"$`\\]*\"|[A-Za-z0-9_./~+,:@%=-])+")


class JudgeTampered(EvolvingAgentError):
    """A file the judge trusts changed during the run (exit 5, like ``verify``)."""

    exit_code = EXIT_TAMPERED


class SealChanged(JudgeTampered):
    """Sealed files changed before the run was picked up again (resumed, measured)."""

    def __init__(self, changed: list[str], then: str) -> None:
        names = ", ".join(changed)
        super().__init__(f"{TAMPERED}: {names} changed since the run was sealed; " + then)
        self.changed = changed


@dataclass(frozen=True)
class Verdict:
    score: float | None  # None: failed
    scores: list[float] = field(default_factory=list)
    feedback: str = ""
    export_s: float = 0.0
    score_s: float = 0.0
    tampered: bool = False  # the judge refused: a sealed file changed
    channel: str | None = None  # where the score came from: "fd" or "stdout"

    @property
    def failed(self) -> bool:
        return self.score is None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _as_file(word: str, base: Path) -> Path | None:
    if not word or word.startswith("-") or "{candidate}" in word:
        return None
    path = Path(os.path.expanduser(word))
    path = path if path.is_absolute() else base / path
    try:
        return path.resolve() if path.is_file() else None
    except OSError:
        return None


def seal_command(score_cmd: str, workdir: Path) -> tuple[str, dict[str, str]]:
    """The score command with relative file paths made absolute, and the sealed files.

    Returns ``(command, {absolute path: sha256})``.  Only plain or quoted words (no
    other shell syntax) are rewritten.
    """
    files: dict[str, str] = {}

    def note(word: str) -> Path | None:
        found = _as_file(word, workdir)
        if found is not None:
            files[str(found)] = file_sha256(found)
        return found

    try:
        tokens = shlex.split(score_cmd)
    except ValueError:
        tokens = score_cmd.split()
    for token in tokens:
        note(token)
        if "=" in token:
            note(token.split("=", 1)[1])

    def rewrite(match: re.Match[str]) -> str:
        word = match.group(0)
        if not _SIMPLE_WORD.fullmatch(word):
            if not _QUOTED_WORD.fullmatch(word):
                return word
            target = shlex.split(word)[0]  # a quoted path: 'my judge/score.py'
            found = None if os.path.isabs(target) else _as_file(target, workdir)
            return word if found is None else shlex.quote(str(found))
        prefix, target = "", word
        if "=" in word:
            head, target = word.split("=", 1)
            prefix = head + "="
        if os.path.isabs(os.path.expanduser(target)):
            return word
        found = _as_file(target, workdir)
        return word if found is None else prefix + shlex.quote(str(found))

    return re.sub(r"(?:'[^']*'|\"[^\"$`\\]*\"|[^\s'\"])+", rewrite, score_cmd), files


# Every scorer's environment: it never loads the user's site (a candidate running as
# the same user could drop a .pth there) and never writes bytecode into its sealed
# folders (a scorer would otherwise change what the seal covers).
SCORER_ENV = {"PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
FOLDER_LIMIT = 5000  # files sealed per named script's folder; beyond it, a notice
# What PYTHONVERBOSE=2 says a Python process loaded, and where its imports looked.
_LOADED = (
    re.compile(r"^# code object from '?(/[^']+?)'?$"),
    re.compile(r"^# extension module '[^']*' (?:loaded|executed) from '(/[^']+)'$"),
    re.compile(r"^Processing \.pth file: '(/[^']+)'$"),
    re.compile(r"^# (/\S+) matches (/\S+)$"),
)
_TRYING = re.compile(r"^# trying (/.+)$")
_SITE = re.compile(r"^Adding directory: '(/[^']+)'$")
_ABSENT = "absent"
_RULE = "rule:"  # a sealed directory's value: what must stay absent, its .pth files


def listing_digest(path: Path) -> str:
    """The SHA-256 of a directory's sorted entry names (``absent`` if it is missing)."""
    try:
        names = sorted(os.listdir(path))
    except FileNotFoundError:
        return _ABSENT
    except OSError:
        return "unreadable"
    return hashlib.sha256("\0".join(names).encode(errors="surrogateescape")).hexdigest()


def _dir_rule(absent: Iterable[str] = (), pth: Iterable[str] | None = None) -> str:
    return _RULE + json.dumps(
        {"absent": sorted(set(absent)), "pth": None if pth is None else sorted(pth)}
    )


def dir_changed(path: str | Path, rule: str) -> str | None:
    """Why a sealed directory no longer matches its rule (None: it does).

    A rule names entries that must stay absent (shell globs: a module or ``.pyc`` an
    import would find first) and, for a site directory, its exact ``.pth`` files."""
    exact, pattern, sealed_pth = _compiled_rule(rule)
    try:
        names = os.listdir(path)
    except OSError:
        names = []
    found = sorted(n for n in names if n in exact or (pattern and pattern.match(n)))
    if found:
        return "new " + ", ".join(found)
    if sealed_pth is not None:
        pth = sorted(n for n in names if n.endswith(".pth"))
        if pth != sealed_pth:
            added = sorted(set(pth) - set(sealed_pth)) or sorted(set(sealed_pth) - set(pth))
            return ".pth files differ: " + ", ".join(added)
    return None


@functools.lru_cache(maxsize=4096)
def _compiled_rule(rule: str) -> tuple[frozenset[str], re.Pattern[str] | None, list[str] | None]:
    """A directory rule parsed once: exact names, one regex for the globs, its .pth."""
    data = json.loads(rule[len(_RULE) :])
    exact, globs = set(), []
    for glob in data["absent"]:
        plain = re.sub(r"\[(.)\]", r"\1", glob)
        if any(c in re.sub(r"\[.\]", "", glob) for c in "*?["):
            globs.append(fnmatch.translate(glob))
        else:
            exact.add(plain)
    pattern = re.compile("|".join(globs)) if globs else None
    return frozenset(exact), pattern, data["pth"]


def _inside_any(path: str, parents: Iterable[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in parents)


def _is_program(path: Path) -> bool:
    """A compiled executable (an interpreter): its folder is not the scorer's folder."""
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return True


def seal_reach(
    named: Iterable[str], verbose_stderr: str, *, exclude: Iterable[Path] = ()
) -> dict[str, str]:
    """The seal of what a scorer loads without naming it: ``{path: sha256}`` for files,
    ``{dir/: rule}`` for directories (see :func:`dir_changed`).

    ``named`` are the files the score command names: every file in each script's
    folder (``.git`` left out; the first ``FOLDER_LIMIT``) is sealed.
    ``verbose_stderr`` is the scorer's stderr under ``PYTHONVERBOSE=2``: the module
    files, extension modules and ``.pth`` files it loaded are sealed; every name its
    imports tried and did not find must stay absent (with a package folder of that
    name, and a ``.pyc`` for a source it compiled); a site directory keeps exactly its
    ``.pth`` files.  Nothing under ``exclude`` (the export, the run directory) counts.
    """
    skip = sorted({os.path.realpath(p) for p in exclude} | {str(p) for p in exclude})
    files: set[str] = set()
    absent: dict[str, set[str]] = {}
    sites: set[str] = set()
    for line in verbose_stderr.splitlines():
        for pattern in _LOADED:
            match = pattern.match(line)
            if match:
                files.update(g for g in match.groups() if g)
        site = _SITE.match(line)
        if site:
            sites.add(site.group(1))
        trying = _TRYING.match(line)
        if trying and not os.path.lexists(trying.group(1)):
            folder, name = os.path.split(trying.group(1))
            absent.setdefault(folder, set()).add(glob_escape(name))
            stem = name.split(".", 1)[0]
            if not os.path.lexists(os.path.join(folder, stem)):
                absent[folder].add(glob_escape(stem))  # a package of that name
    for name in list(files):
        folder, base = os.path.split(name)
        if base.endswith(".py") and os.path.basename(folder) != "__pycache__":
            stem = glob_escape(base[: -len(".py")])
            cache = os.path.join(folder, "__pycache__")
            if not any(f.startswith(cache + "/" + base[:-3] + ".") for f in files):
                absent.setdefault(cache, set()).add(stem + ".*")
    for name in named:
        script = Path(name)
        if name.endswith("/") or _is_program(script):
            continue
        count = 0
        for root, subdirs, names in os.walk(script.parent):
            subdirs[:] = sorted(
                d for d in subdirs
                if d != ".git" and not _inside_any(os.path.join(root, d), skip)
            )  # fmt: skip
            for entry in sorted(names):
                count += 1
                if count <= FOLDER_LIMIT:
                    files.add(os.path.join(root, entry))
    sealed: dict[str, str] = {}
    for name in sorted(files):
        path = Path(name)
        if _inside_any(name, skip) or not path.is_file():
            continue
        try:
            sealed[name] = file_sha256(path)
        except OSError:
            continue
    for folder in sorted(set(absent) | sites):
        if not folder or _inside_any(folder, skip):
            continue
        pth = None
        if folder in sites:
            try:
                pth = [n for n in os.listdir(folder) if n.endswith(".pth")]
            except OSError:
                pth = []
        sealed[folder.rstrip("/") + "/"] = _dir_rule(absent.get(folder, ()), pth)
    return sealed


def glob_escape(name: str) -> str:
    """``name`` as a glob that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


class Seal:
    """The sealed files and their last seen ``stat``, shared by the judge's threads."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = dict(files)
        self._stats: dict[str, tuple[int, ...]] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, str]:
        return self.files  # picklable (an executor may ship the judge): no lock, no stats

    def __setstate__(self, files: dict[str, str]) -> None:
        self.__init__(files)  # type: ignore[misc]

    def changed(self) -> list[str]:
        """The sealed files that are missing or whose content differs from the seal
        (and the sealed directories whose entries differ, named with what changed)."""
        bad = []
        with self._lock:
            for name, digest in self.files.items():
                if name.endswith("/"):
                    why = (
                        dir_changed(name, digest)
                        if digest.startswith(_RULE)
                        else (None if listing_digest(Path(name)) == digest else "entries differ")
                    )
                    if why:
                        bad.append(f"{name} ({why})")
                    continue
                try:
                    st = os.stat(name)  # (no Path objects: hundreds of files per score)
                except OSError:
                    bad.append(name)
                    continue
                key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                if self._stats.get(name) == key:
                    continue
                if file_sha256(Path(name)) != digest:
                    bad.append(name)
                    continue
                self._stats[name] = key
        return bad


@dataclass(frozen=True)
class Judge:
    score_cmd: str
    workdir: Path  # where relative paths in the command were resolved
    timeout: float
    repeats: int = 1
    cwd: Path | None = None  # None: inside the candidate's export
    seal: Seal | None = None
    # "auto" (the seed: the scorer shows which it uses), "fd" (it wrote $EA_SCORE_FD
    # at the seed: nothing else counts) or "stdout" (the forgeable last line).
    channel: str = "auto"
    sandbox: Sandbox | None = None  # None or kind "none": the scorer runs unconfined

    def judge(self, repo_dir: Path, commit: str) -> Verdict:
        """Export ``commit`` from ``repo_dir`` and score it ``repeats`` times."""
        started = time.perf_counter()
        if self.seal is not None:
            changed = self.seal.changed()
            if changed:
                names = ", ".join(changed)
                return Verdict(
                    None, [], f"{TAMPERED}: the scorer changed since the run began: {names}",
                    tampered=True,
                )  # fmt: skip
        tmp = Path(tempfile.mkdtemp(prefix="ea-judge-"))
        try:
            candidate = tmp / "candidate"
            try:
                export_commit(repo_dir, commit, candidate)
            except InvalidInput as exc:
                return Verdict(None, [], _tail(str(exc)), time.perf_counter() - started)
            exported = time.perf_counter()
            scores: list[float] = []
            feedback = ""
            channel: str | None = None
            for _ in range(self.repeats):
                score, feedback, channel = self.score_channel(candidate)
                if score is None:
                    return Verdict(
                        None, scores, feedback, exported - started,
                        time.perf_counter() - exported, channel=channel,
                    )  # fmt: skip
                scores.append(score)
            return Verdict(
                statistics.median(scores),
                scores,
                feedback,
                exported - started,
                time.perf_counter() - exported,
                channel=channel,
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def score_once(self, candidate: Path) -> tuple[float | None, str]:
        """Run the score command once on an exported candidate: (score or None, feedback)."""
        score, feedback, _channel = self.score_channel(candidate)
        return score, feedback

    def _launch(
        self, candidate: Path, extra_env: dict[str, str] | None
    ) -> tuple[Completed, list[bytes]]:
        """Run the score command once on ``candidate``: the process and its channel."""
        cmd = self.score_cmd.replace("{candidate}", shlex.quote(str(candidate)))
        # The verdict channel: one end of a socket pair, kept open in the scorer only.
        # A socket cannot be opened through /proc/PID/fd (unlike the scorer's stdout),
        # and every write is one message, so a candidate that reaches it anyway adds a
        # message of its own -- which fails the score -- and cannot alter the scorer's.
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        cwd = self.cwd or candidate
        env = {
            "EA_CANDIDATE": str(candidate),
            SCORE_FD_VAR: str(theirs.fileno()),
            **SCORER_ENV,
            **(extra_env or {}),
        }
        sandbox = self.sandbox or Sandbox("none")
        argv = sandbox.scorer_argv(
            cmd, cwd=cwd, export=candidate, files=self.seal.files if self.seal else {}
        )
        try:
            done = run_process(
                argv,
                cwd=cwd,
                timeout=self.timeout,
                env=sandbox.environment(env),
                replace_env=True,
                pass_fds=(theirs.fileno(),),
            )
            theirs.close()
            messages = _messages(mine)
        finally:
            theirs.close()
            mine.close()
        return done, messages

    def reach(self, repo_dir: Path, commit: str, *, exclude: Iterable[Path] = ()) -> dict[str, str]:
        """What the scorer loads on ``commit`` beyond the files it names, sealed (see
        :func:`seal_reach`); the scorer runs once more, verbosely, on a fresh export."""
        tmp = Path(tempfile.mkdtemp(prefix="ea-judge-"))
        try:
            candidate = tmp / "candidate"
            try:
                export_commit(repo_dir, commit, candidate)
            except InvalidInput:
                return {}
            done, _messages_ = self._launch(candidate, {"PYTHONVERBOSE": "2"})
            named = self.seal.files if self.seal else {}
            return seal_reach(named, done.stderr, exclude=[tmp, *exclude])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def score_channel(
        self, candidate: Path, *, extra_env: dict[str, str] | None = None
    ) -> tuple[float | None, str, str | None]:
        """Run the score command once: (score or None, feedback, channel used)."""
        done, messages = self._launch(candidate, extra_env)
        if done.launch_error:
            return None, _tail(f"score command could not start: {done.launch_error}"), None
        if done.returncode is None:
            why = f"score command timed out after {self.timeout:g}s\n" + done.stderr
            return None, _tail(why), None
        lines = [line for line in done.stdout.splitlines() if line.strip()]
        before = "\n".join(lines[:-1])
        err = done.stderr_tail(3)
        if done.returncode != 0:
            head = (
                "score command not found (exit 127)"
                if done.returncode == 127
                else f"score command failed (exit {done.returncode})"
            )
            if err:
                head += f": {err}"
            elif lines:
                head += f": {lines[-1].strip()[:300]}"
            text = f"{head}\n{done.stdout.strip()}\n{done.stderr.strip()}".strip()
            return None, _tail(text), None
        if messages or self.channel == "fd":
            return self._from_channel(messages, done.stdout)
        if not lines:
            why = "score command printed nothing" + (f" (stderr: {err})" if err else "")
            return None, _tail(why), None
        value, why = parse_score(lines[-1])
        if value is None:
            why += f" (stderr: {err})" if err and why.startswith("last line") else ""
            return None, _tail(f"{why}\n{before}"), None
        return value, _tail(before), "stdout"

    def _from_channel(
        self, messages: list[bytes], stdout: str
    ) -> tuple[float | None, str, str | None]:
        feedback = stdout.strip()
        if self.channel == "stdout":
            # The scorer never used the channel (at the seed): candidate code wrote it.
            why = f"{FORGED}: something other than the scorer wrote to ${SCORE_FD_VAR}"
            return None, _tail(f"{why}\n{feedback}"), "fd"
        if len(messages) != 1:
            why = (
                f"{FORGED}: the score channel got {len(messages)} messages; the scorer "
                f"writes one (candidate code may have written to it)"
                if messages
                else f"the scorer wrote no score to ${SCORE_FD_VAR} (it did at the seed)"
            )
            return None, _tail(f"{why}\n{feedback}"), "fd"
        text = messages[0].decode(errors="replace").strip()
        value, why = parse_score(text)
        if value is None:
            return None, _tail(f"${SCORE_FD_VAR}: {why}\n{feedback}"), "fd"
        return value, _tail(feedback), "fd"


SCORE_FD_VAR = "EA_SCORE_FD"
FORGED = "score channel forged"


def sealed_judge(
    config: SearchConfig, seal: dict[str, Any], *, channel: str | None = None
) -> Judge:
    """The judge a run's ``seal`` names (its score command and files, and the channel the
    seed showed; "auto" before the seed), confined like the run's scorer and blind to the
    run's output folder: the runner's, plateau-test's and the holdout's judge alike.
    ``channel`` overrides the seal's: the holdout's is always "auto", whatever its seal
    file holds."""
    assert config.workdir is not None and config.out is not None
    return Judge(
        seal["score_cmd"],
        config.workdir,
        config.score_timeout,
        config.score_repeats,
        cwd=config.score_cwd,
        seal=Seal(seal["files"]),
        channel=channel or seal.get("channel", "auto"),
        sandbox=config.confinement(hide=(str(config.out.resolve()),)),
    )


def _messages(sock: socket.socket, limit: int = 64) -> list[bytes]:
    """Every message waiting on the harness's end (the scorer has exited and its
    process tree was swept, so nothing more can come)."""
    sock.setblocking(False)
    found: list[bytes] = []
    while len(found) < limit:
        try:
            data = sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            break
        except OSError:
            break
        if not data:
            break
        if data.strip():
            found.append(data)
    return found


def parse_score(line: str) -> tuple[float | None, str]:
    """A finite number from one line, or (None, why not)."""
    text = line.strip()
    try:
        value = float(text)
    except ValueError:
        return None, f"last line is not a number: {text!r}"
    if value != value or value in (float("inf"), float("-inf")):
        return None, f"score is not finite: {text}"
    return value, ""


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= FEEDBACK_CHARS else "..." + text[-FEEDBACK_CHARS:]
