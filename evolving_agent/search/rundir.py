"""The run directory: the single source of truth of a search run.

Layout::

    run.json        the SearchConfig (+ schema version); ``search resume`` reads only this
    seed.json       the seed commit, its repeated scores and the noise floor
    judge/          read-only: ``seal.json`` (the resolved score command, the SHA-256
                    of every file the judge trusts, of run.json and seed.json) and
                    ``task.md`` (the task text every prompt is built from); resume
                    refuses a run whose sealed files changed
    log.jsonl       one TurnRecord per finished turn, appended and fsynced
    best/           the files of the best candidate so far (replaced atomically)
    summary.json    written at the end of the run (and again by resume)
    rounds/rNN/     the round's repository and one git worktree per agent;
                    ``ready`` once set up, ``closed.json`` once the round is over
    agent-state/    private state of agent backends (the tsp-example agent's sessions,
                    codex's last reported usage per thread)
    .lock           held (flock) by the one harness process working on the run

A turn exists once its record is in ``log.jsonl`` and not before: a crash mid-turn
loses that turn's work, and resume runs it again.  A torn last line (SIGKILL during
a write) is cut off on load.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, get_args

import pydantic

from evolving_agent.errors import InvalidInput, NotFound, first_error
from evolving_agent.fsio import write_atomic
from evolving_agent.search.config import SearchConfig

SCHEMA_VERSION = 1


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# Why a run stopped: every planned turn ran, the money ran out first, every turn so far
# failed (the run stopped early), or the judge refused to score (a sealed file changed).
StopReason = Literal["turns", "budget", "failed", "judge-tampered"]
# The stop reason, and the prefix of a turn's error, when the judge refused to score.
TAMPERED: Final = "judge-tampered"
# Why a round ended: its fixed boundary, a plateau, shrinking edits, or its budget share.
ForgetReason = Literal["rounds", "plateau", "shrinking", "budget"]


def forget_reason(value: str) -> ForgetReason:
    """``value`` as a :data:`ForgetReason`; a ValueError names anything else (a bug)."""
    for reason in get_args(ForgetReason):
        if value == reason:
            return reason
    raise ValueError(f"not a reason to end a round: {value!r}")


class TurnRecord(pydantic.BaseModel, extra="forbid"):
    """One line of ``log.jsonl``: what one agent turn produced and cost."""

    schema_version: int = SCHEMA_VERSION
    seq: int  # the record's place in the log, 1-based: the schedule's order (schedule.py)
    # The round's logical clock (schedule.py): the step this turn ran in; it saw every
    # record of earlier steps and none of its own.  None: a log from before steps.
    step: int | None = None
    round: int
    agent: int  # 1-based agent number
    turn: int  # the agent's own turn number over the whole run, 1-based
    round_turn: int  # the agent's turn number within this round, 1-based
    session: str | None
    new_session: bool
    base_commit: str
    commit: str
    score: float | None  # None: failed candidate (crash, timeout, no number)
    scores: list[float] = []
    feedback: str = ""
    empty: bool
    lines_changed: int
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    wall_s: float
    agent_s: float = 0.0
    judge_s: float = 0.0
    # Seconds per phase: setup, agent, commit, judge (= export + score), tag.
    timing: dict[str, float] = {}
    ts: str
    improved: bool = False
    forget: ForgetReason | None = None  # on a round's first record: why the last one ended
    visible: int = 0  # how many candidates the reducer let this turn see
    # The teammates' bests among them, as ``rR-aA-tT`` (round, agent, turn).
    peers: list[str] = []
    # Why the turn failed, after its retries: the agent could not start, exited
    # non-zero, timed out or reported an error; or "judge-tampered: ..." when the
    # judge refused to score.  Whatever the agent left is still judged.
    error: str | None = None
    tampered: bool = False  # the judge refused to score: the turn was never judged
    attempts: int = 1  # agent calls this turn took (retries of transient errors)
    node: str | None = None  # the Ray node the turn ran on (None: on the driver)
    # The errors of the attempts that were retried (a rate limit, a lost Ray worker):
    # a turn that succeeded on its second attempt still says what its first hit.
    retried: list[str] = []
    # Tool calls the agent's CLI refused (Claude's permission denials, commands Codex's
    # sandbox blocked) and shell commands that failed; None: the agent does not say.
    denied: int | None = None
    failed_commands: int | None = None

    @pydantic.model_validator(mode="after")
    def _tampered_from_old_logs(self) -> TurnRecord:
        # Logs written before the flag said so only by the error's prefix; read them as
        # flagged, so nothing past loading needs to look at the message.
        if not self.tampered and (self.error or "").startswith(TAMPERED):
            self.tampered = True
        return self

    @property
    def tokens(self) -> int:
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    @property
    def ok_score(self) -> float | None:
        """The score, or None for a failed candidate (null or not finite)."""
        if self.score is None or not math.isfinite(self.score):
            return None
        return self.score


class SeedInfo(pydantic.BaseModel, extra="forbid"):
    schema_version: int = SCHEMA_VERSION
    commit: str
    scores: list[float]
    score: float
    noise_floor: float
    feedback: str = ""


class SearchSummary(pydantic.BaseModel, extra="forbid"):
    """Mirrors ``summary.json``."""

    schema_version: int = SCHEMA_VERSION
    run_dir: Path
    policy: str
    agent: str
    direction: str
    best_score: float
    best_commit: str
    best_round: int | None
    best_agent: int | None
    # The final best scored again after the search (``score_repeats`` times, median):
    # free of the selection that made it the best.  None if that scoring failed.
    best_rescored: float | None = None
    best_rescores: list[float] = []
    seed_score: float
    noise_floor: float
    turns: int
    planned_turns: int
    rounds: int
    agents: int
    cost_usd: float
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    empty_turns: int  # turns that changed nothing, failed ones not included
    failed_turns: int  # turns whose agent failed (``error`` set), after retries
    # Turns that improved the best while a call was denied or the agent reported an
    # error: recorded as improved, flagged here; they keep the run from exiting 4.
    improved_flagged: int = 0
    denied_calls: int = 0  # tool calls the agents' CLIs refused, over all turns
    failed_commands: int = 0  # shell commands that failed, over all turns
    complete: bool  # the run ended by plan
    stopped: StopReason
    unscored_turns: int = 0  # the agent did not fail but the scorer gave no number
    first_error: str | None = None  # the first failed turn's error
    # Protections this run lacks (a forgeable score channel, no sandbox), said once.
    notices: list[str] = []
    # What the run could guarantee (sandbox.isolation): "bwrap", "scorers" or "none";
    # None in summaries written before it was recorded.
    isolation: str | None = None
    # A forgetting policy's rounds were forgotten (isolation bwrap), or only restarted;
    # None for a policy that never forgets.
    forgotten: bool | None = None
    # Canary rounds (certify.py): the verdict and every canary found; None: not probed.
    certify: dict[str, Any] | None = None


def check_version(
    data: dict[str, Any], file: Path, *, line: int | None = None, reader: str = "tool"
) -> None:
    """Refuse a record written by a newer evolving-agent (``reader`` names who refuses)."""
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise InvalidInput(
            f"schema_version {version!r} is newer than this {reader} understands "
            f"({SCHEMA_VERSION}); upgrade evolving-agent",
            file=file,
            line=line,
        )


def read_records(path: Path, *, reader: str = "tool") -> list[TurnRecord]:
    """The one reader of ``log.jsonl`` (the runner, resume, plateau and the reports).

    A torn final line (no newline: the runner died while appending) is dropped; any
    other bad line is an ``InvalidInput`` naming the file and line.  Older logs load:
    every field added since the first runner has a default.
    """
    return _parse_records(path, path.read_bytes(), reader)[0]


def recover_records(path: Path) -> list[TurnRecord]:
    """:func:`read_records`, then cut a torn final line from the file, so the runner's
    next append starts on a line of its own (resume, under the run's lock)."""
    raw = path.read_bytes()
    records, good_end = _parse_records(path, raw, "tool")
    if good_end < len(raw):
        with path.open("r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return records


def _parse_records(path: Path, raw: bytes, reader: str) -> tuple[list[TurnRecord], int]:
    """The records of ``raw`` (read from ``path``), and where the last good line ends."""
    records: list[TurnRecord] = []
    good_end = 0
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        is_last = number == len(lines)
        if not line.strip():
            if not is_last:
                good_end += len(line) + 1
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            if is_last:  # torn write: the turn never finished
                break
            why = (
                f"not valid JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else str(exc)
            )
            raise InvalidInput(why, file=path, line=number) from None
        if not isinstance(data, dict):
            if is_last:
                break
            raise InvalidInput("expected a JSON object", file=path, line=number)
        check_version(data, path, line=number, reader=reader)
        try:
            record = TurnRecord.model_validate(data)
        except pydantic.ValidationError as exc:
            if is_last:
                break
            raise InvalidInput(
                f"bad record: {first_error(exc, whole='(record)')}", file=path, line=number
            ) from None
        if is_last:  # valid JSON but no newline: also torn
            break
        records.append(record)
        good_end += len(line) + 1
    return records, good_end


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON atomically and durably (``fsio.write_atomic``), so readers never see
    half a file and a finished rename survives a crash."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    write_atomic(path, text.encode("utf-8"))


class RunDir:
    """Paths and persistence of one run directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    run_json = property(lambda self: self.path / "run.json")
    seed_json = property(lambda self: self.path / "seed.json")
    log = property(lambda self: self.path / "log.jsonl")
    best = property(lambda self: self.path / "best")
    summary_json = property(lambda self: self.path / "summary.json")
    agent_state = property(lambda self: self.path / "agent-state")
    judge_dir = property(lambda self: self.path / "judge")
    seal_json = property(lambda self: self.path / "judge" / "seal.json")
    task_copy = property(lambda self: self.path / "judge" / "task.md")

    def round_dir(self, number: int) -> Path:
        return self.path / "rounds" / f"r{number:02d}"

    # -- config and seed ---------------------------------------------------------

    def write_config(self, config: SearchConfig) -> None:
        data = {"schema_version": SCHEMA_VERSION, **config.model_dump(mode="json")}
        write_json_atomic(self.run_json, data)

    def read_config(self) -> SearchConfig:
        if not self.run_json.is_file():
            raise NotFound(f"not a search run directory (no run.json): {self.path}")
        data = self._read_json(self.run_json)
        data.pop("schema_version", None)
        try:
            return SearchConfig.model_validate(data)
        except pydantic.ValidationError as exc:
            raise InvalidInput(first_error(exc, whole="(top)"), file=self.run_json) from None

    def write_seed(self, seed: SeedInfo) -> None:
        write_json_atomic(self.seed_json, seed.model_dump(mode="json"))

    def read_seed(self) -> SeedInfo | None:
        if not self.seed_json.is_file():
            return None
        try:
            return SeedInfo.model_validate(self._read_json(self.seed_json))
        except pydantic.ValidationError as exc:
            raise InvalidInput(first_error(exc, whole="(top)"), file=self.seed_json) from None

    def _read_json(self, path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"not JSON: {exc.msg}", file=path, line=exc.lineno) from None
        if not isinstance(data, dict):
            raise InvalidInput("expected a JSON object", file=path)
        check_version(data, path)
        return data

    # -- the seal ----------------------------------------------------------------

    def write_seal(
        self, score_cmd: str, files: dict[str, str], task: str, *, channel: str = "auto"
    ) -> None:
        """Seal the run: the judge's files, the task text, run.json and seed.json, and
        the score channel the scorer used on the seed (``fd`` or ``stdout``)."""
        self.judge_dir.mkdir(exist_ok=True)
        _write_readonly(self.task_copy, task.encode())
        seal = {
            "schema_version": SCHEMA_VERSION,
            "score_cmd": score_cmd,
            "files": files,
            "channel": channel,
            "sealed": {
                name: sha256_of(self.path / name)
                for name in ("run.json", "seed.json", "judge/task.md")
            },
        }
        _write_readonly(self.seal_json, (json.dumps(seal, indent=2) + "\n").encode())

    def read_seal(self) -> dict[str, Any] | None:
        """The seal, or None for a run that never got one (stopped before its seed)."""
        if not self.seal_json.is_file():
            return None
        data = self._read_json(self.seal_json)
        if not isinstance(data.get("files"), dict) or not isinstance(data.get("sealed"), dict):
            raise InvalidInput("not a seal (files, sealed)", file=self.seal_json)
        return data

    def changed_since_seal(self, seal: dict[str, Any]) -> list[str]:
        """Run files whose content differs from the seal (run.json, seed.json, task)."""
        return [
            name for name, digest in seal["sealed"].items() if sha256_of(self.path / name) != digest
        ]

    def lock(self, *, grace: float = 2.0) -> int:
        """Hold the run's lock for this process's lifetime (one harness per run).

        A harness killed a moment ago can hold it a little longer: a child it was
        starting keeps a copy of the descriptor until that child execs or dies, after
        the harness itself is gone.  So a busy lock is tried again for ``grace``
        seconds before it is called another process's (a working harness holds it
        for as long as the run lasts).
        """
        fd = os.open(self.path / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + grace
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise InvalidInput(
                            "another evolving-agent process is working on this run",
                            file=self.path,
                        ) from None
                    time.sleep(0.05)
        except BaseException:  # refused, interrupted, or flock failed: the fd goes too
            os.close(fd)
            raise

    # -- the log -----------------------------------------------------------------

    def append(self, record: TurnRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self.log.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def read_log(self) -> list[TurnRecord]:
        """All records.  A torn final line is dropped."""
        return read_records(self.log) if self.log.is_file() else []

    def recover_log(self) -> list[TurnRecord]:
        """All records, a torn final line cut from the file (the runner, before appending)."""
        return recover_records(self.log) if self.log.is_file() else []

    # -- best/ and summary -------------------------------------------------------

    def replace_best(self, files_dir: Path) -> None:
        """Make ``best/`` hold exactly the files in ``files_dir`` (which is consumed)."""
        old = self.path / ".best.old"
        shutil.rmtree(old, ignore_errors=True)
        if self.best.exists():
            self.best.rename(old)
        files_dir.rename(self.best)
        shutil.rmtree(old, ignore_errors=True)

    def write_summary(self, summary: SearchSummary) -> None:
        write_json_atomic(self.summary_json, summary.model_dump(mode="json"))


def sha256_of(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _write_readonly(path: Path, data: bytes) -> None:
    """Write atomically, then drop write permission (a speed bump, not a wall)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
