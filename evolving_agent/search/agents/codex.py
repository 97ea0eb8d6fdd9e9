"""The ``codex`` agent: Codex CLI in exec mode with JSONL events.

New session::

    codex exec --json [NEW ARGS] -- PROMPT

continued session::

    codex exec resume --json [RESUME ARGS] THREAD_ID -- PROMPT

``codex exec resume`` takes far fewer options than ``codex exec``: only the global
ones (``-c key=value``, ``-m``, ``--json``, ``--skip-git-repo-check``, ``--ephemeral``,
``-o``, ``--dangerously-bypass-approvals-and-sandbox``, ...), not ``-s/--sandbox``,
``-C``, ``--add-dir``, ``-p/--profile`` or ``--oss``.  So the two turns get separate
argument lists:

* ``NEW ARGS`` default to ``-c sandbox_mode="workspace-write"`` (codex's default
  sandbox is read-only: it would edit nothing); the user's ``--agent-args`` are kept
  as given (``--full-auto``, which current codex rejects, becomes that same ``-c``),
  with the default added unless they choose a sandbox themselves;
* ``RESUME ARGS`` are ``--agent-resume-args`` if given, else derived from the new
  ones: ``-s/--sandbox MODE`` and ``--full-auto`` become ``-c sandbox_mode="MODE"``,
  global options are kept, and any other option is refused before the run starts.

The prompt comes after ``--``, so a task starting with ``---`` is not an option.

The thread id comes from the ``thread.started`` event, tokens from ``turn.completed``
``usage`` (``input_tokens``, ``cached_input_tokens``, ``output_tokens``, and
``reasoning_output_tokens`` where reported), errors from ``turn.failed`` and
``error`` events.

Current codex reports the *thread's running total* in ``turn.completed``
(openai/codex#17539), older versions each turn's own usage; the adapter keeps the last
total it saw per thread (under the run's ``agent-state/codex``) and records per-turn
deltas: usage is taken as a running total while it never decreases and its input
grows; a thread whose usage ever shrinks or stands still is known to report per turn
and is summed from then on.  (An old codex whose per-turn usage happens to grow on a
thread's second turn is undercounted on that turn.)

The commands the agent ran, and which failed or were refused, come from the thread's
session file (``$CODEX_HOME/sessions/Y/M/D/rollout-…-THREAD.jsonl``: each shell tool
call and the text the model got back), because ``exec --json`` leaves some out: a
command codex refuses before it starts prints no ``command_execution`` item at all.
That is always so for an escalation the approval policy forbids, and, in codex's
unified exec, for a command that fails with a sandbox message within its first 150 ms
(a slower one shows as an item with its exit code), so the same refused write was
counted or not by timing.  Without a session file (``--ephemeral``) the items are all
there is.

Codex reports no dollars, so the cost is priced from a token table (USD per million
tokens; override with ``token_prices`` / ``--token-prices``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.process import Completed, run_process
from evolving_agent.search.agents.base import (
    RETRYING,
    CliAgent,
    TurnRequest,
    TurnResult,
    as_int,
    continued_session,
    failure,
    json_lines,
)

# USD per million tokens; cached input is part of input_tokens and billed at its rate.
DEFAULT_PRICES = {"input": 1.25, "cached_input": 0.125, "output": 10.0}
SANDBOX_DEFAULT = ("-c", 'sandbox_mode="workspace-write"')
USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")

# Options both `codex exec` and `codex exec resume` take (codex 0.169), with whether
# each takes a value: what resumed turns may inherit from new ones.  Tested against the
# real `--help` of the pinned codex (tests/search/test_codex_flags.py).
_RESUME_OK = {
    "-c": True,
    "--config": True,
    "--enable": True,
    "--disable": True,
    "--strict-config": False,
    "-i": True,
    "--image": True,
    "-m": True,
    "--model": True,
    "--dangerously-bypass-approvals-and-sandbox": False,
    "--dangerously-bypass-hook-trust": False,
    "--worktree": False,
    "--thread-source": True,
    "--cyber-access-program": True,
    "--skip-git-repo-check": False,
    "--trust": False,
    "--ephemeral": False,
    "--ignore-user-config": False,
    "--ignore-rules": False,
    "--output-schema": True,
    "--json": False,
    "-o": True,
    "--output-last-message": True,
}
# What a sandbox says when it blocks a command (Linux bubblewrap/Landlock, macOS Seatbelt),
# and what codex tells the model when its approval policy refuses to run one unsandboxed.
_REFUSED = re.compile(
    r"read-only file system|operation not permitted|permission denied|bwrap:|"
    r"sandbox(-exec)?: |landlock|approval policy is never",
    re.IGNORECASE,
)
# Codex's shell tools (unified exec's `exec_command`, the classic ones) as the model
# calls them; `write_stdin` only polls a command already counted.
_SHELL_TOOLS = ("exec_command", "shell", "shell_command", "local_shell", "container.exec")
# How a shell tool's answer to the model states the exit code (unified exec; classic).
_EXIT = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)$", re.MULTILINE)
_STILL_RUNNING = "Process running with session ID"
# Codex's warning when its CODEX_HOME sits under the temporary directory: it then makes
# no codex-linux-sandbox helper, and every sandboxed command fails (exit 1).
_NO_HELPER = "could not create PATH aliases"
_UNSANDBOXED = ("danger-full-access",)
_SANDBOX_FLAGS = ("-s", "--sandbox")


def _chooses_sandbox(args: list[str]) -> bool:
    for i, arg in enumerate(args):
        if arg in _SANDBOX_FLAGS or arg.startswith("--sandbox=") or arg == "--full-auto":
            return True
        if arg.startswith("--dangerously-bypass-approvals"):
            return True
        value = args[i + 1] if arg in ("-c", "--config") and i + 1 < len(args) else ""
        if arg.startswith("--config="):
            value = arg.split("=", 1)[1]
        if value.replace(" ", "").startswith("sandbox_mode="):
            return True
    return False


def new_args(args: list[str]) -> list[str]:
    """The arguments of a new turn: the user's, plus a writable sandbox unless chosen.

    ``--full-auto`` (removed from current codex) becomes its exact equivalent.
    """
    args = [part for a in args for part in (SANDBOX_DEFAULT if a == "--full-auto" else (a,))]
    return args if _chooses_sandbox(args) else [*SANDBOX_DEFAULT, *args]


def derive_resume_args(args: list[str]) -> list[str]:
    """Resume arguments from new-session ones, or UsageError naming what resume rejects."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, inline = arg.partition("=")
        if arg == "--full-auto":
            out += ["-c", 'sandbox_mode="workspace-write"']
        elif name in _SANDBOX_FLAGS:
            mode = inline if eq else (args[i + 1] if i + 1 < len(args) else "")
            i += 0 if eq else 1
            out += ["-c", f'sandbox_mode="{mode}"']
        elif name in _RESUME_OK:
            out.append(arg)
            if _RESUME_OK[name] and not eq:
                if i + 1 < len(args):
                    out.append(args[i + 1])
                i += 1
        elif arg.startswith("-"):
            raise UsageError(
                f"codex exec resume does not take {name}; give the arguments for "
                "resumed turns with --agent-resume-args"
            )
        else:
            out.append(arg)
        i += 1
    return out


class CodexAgent(CliAgent):
    name = program = "codex"
    install_hint = "install the Codex CLI or name it with --agent-cmd"
    default_prices = DEFAULT_PRICES

    def with_defaults(self, args: list[str]) -> list[str]:
        return new_args(args)

    def resume_defaults(self, args: list[str]) -> list[str]:
        return args  # resume arguments the user gave are used as they are

    def resumed(self, new_args: list[str]) -> list[str]:
        return derive_resume_args(new_args)

    def check(self) -> None:
        super().check()
        mode = sandbox_mode(self.new_args)
        if mode is None:
            return
        # Codex's own sandbox may be unable to run anything here (no helper binary, no
        # user namespaces); then every turn would run no command and score as empty.
        with tempfile.TemporaryDirectory(prefix="ea-codex-check-") as scratch:
            done = run_process(
                [*self.argv0, "sandbox", "-c", f'sandbox_mode="{mode}"', "--", "true"],
                cwd=Path(scratch),
                timeout=60,
            )
        if not done.ok:
            raise InvalidInput(sandbox_broken(mode, done))

    def argv(self, request: TurnRequest) -> list[str]:
        if request.new_session:
            return [*self.argv0, "exec", "--json", *self.new_args, "--", request.prompt]
        return [
            *self.argv0,
            "exec",
            "resume",
            "--json",
            *self.resume_args,
            request.session_id,
            "--",
            request.prompt,
        ]

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        args = self.new_args if request.new_session else self.resume_args
        started = time.time()
        done = run_process(
            self.argv(request), cwd=request.workspace, timeout=request.timeout, env=request.env
        )
        thread_id: str | None = None
        reports: list[dict[str, int]] = []
        message = ""
        failed: str | None = None
        retrying: str | None = None
        commands: list[dict[str, Any]] = []
        for event in _events(done.stdout):
            kind = event.get("type")
            if kind == "thread.started":
                thread_id = str(event.get("thread_id") or "") or None
            elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
                reports.append({k: as_int(event["usage"].get(k)) or 0 for k in USAGE_KEYS})
            elif kind == "turn.failed":
                error = event.get("error")
                text = error.get("message") if isinstance(error, dict) else None
                failed = f"codex turn failed: {str(text or 'no message')[:300]}"
            elif kind == "error":
                retrying = str(event.get("message", ""))[:300]
                if failed is None:
                    failed = f"codex error: {retrying}"
            elif kind == "item.completed":
                item = event.get("item") or {}
                if item.get("type") == "agent_message":
                    message = str(item.get("text", ""))
                elif item.get("type") == "command_execution":
                    commands.append(item)
        ran = session_commands(request, thread_id, since=started)
        if ran is None:  # no session file: what exec --json printed
            ran = [Command(str(c.get("aggregated_output") or ""), _failed(c)) for c in commands]
        bad = [c for c in ran if c.failed]
        refused = [c for c in bad if _REFUSED.search(c.output)]
        # Codex's own words first: a 429 or 5xx it gave up on (``turn.failed``) exits 1
        # too, and the exit status alone would hide the status that makes it transient.
        error = failure(done, "codex", request.timeout)
        if error is not None and done.timed_out and retrying:
            error = f"{error}; codex{RETRYING}after: {retrying}"
        elif failed is not None:
            error = failed
        mode = sandbox_mode(args)
        if error is None and mode is not None and _NO_HELPER in done.stderr:
            error = (
                "codex ran without its sandbox helper (its CODEX_HOME is under the "
                "temporary directory), so every command it ran failed: " + _SANDBOX_FIX
            )
        elif error is None and ran and len(refused) == len(ran):
            sample = refused[0].output.strip().splitlines()
            fix = _READ_ONLY_FIX if mode == "read-only" else _SANDBOX_FIX
            error = (
                f"codex's sandbox ({mode or 'default'}) refused all {len(ran)} "
                f"command(s) ({sample[-1][:120] if sample else 'no output'}): " + fix
            )
        session = thread_id or (
            None if request.new_session else continued_session(request.session_id, error)
        )
        if not reports:
            return TurnResult(
                session_id=session,
                message=message[-2000:],
                error=error,
                denied=len(refused),
                failed_commands=len(bad),
            )
        used = self._deltas(request, session, reports)
        cost = self.priced(
            used["input_tokens"], used["cached_input_tokens"], used["output_tokens"]
        )
        return TurnResult(
            session_id=session,
            input_tokens=used["input_tokens"],
            output_tokens=used["output_tokens"],
            reasoning_tokens=used["reasoning_output_tokens"],
            cost_usd=cost,
            message=message[-2000:],
            error=error,
            denied=len(refused),
            failed_commands=len(bad),
        )

    def _deltas(
        self, request: TurnRequest, thread: str | None, reports: list[dict[str, int]]
    ) -> dict[str, int]:
        """This turn's own usage from the ``turn.completed`` reports (see module doc)."""
        path = _state_path(request.state_dir, thread)
        state = _load(path) if path is not None and not request.new_session else {}
        last = state.get("total")
        per_turn = bool(state.get("per_turn"))
        used = dict.fromkeys(USAGE_KEYS, 0)
        for report in reports:
            if last is not None and not per_turn and _not_a_running_total(last, report):
                per_turn = True
            for key in USAGE_KEYS:
                before = 0 if per_turn or last is None else last[key]
                used[key] += max(0, report[key] - before)
            last = report
        if path is not None and last is not None:
            _save(path, {"total": last, "per_turn": per_turn})
        return used


# The only fix offered keeps codex inside its own sandbox: the harness's bwrap never
# confines the codex agent, so "danger-full-access" would leave it unconfined.
_SANDBOX_FIX = (
    "give codex a CODEX_HOME outside $TMPDIR (e.g. CODEX_HOME=$HOME/.codex), where it "
    "can create the codex-linux-sandbox helper its sandbox starts"
)


_READ_ONLY_FIX = (
    "a read-only sandbox lets the agent change nothing; leave sandbox_mode out of "
    '--agent-args (the adapter then passes -c sandbox_mode="workspace-write")'
)


@dataclass(frozen=True)
class Command:
    """One shell command of the turn: what the model was told, and whether it failed."""

    output: str
    failed: bool


def session_commands(
    request: TurnRequest, thread: str | None, since: float = 0.0
) -> list[Command] | None:
    """This turn's shell commands from the thread's session file; None if there is none
    (or it was last written before ``since``, the turn's start: not this turn's)."""
    path = _session_file(request, thread)
    try:
        if path is None or path.stat().st_mtime < since:
            return None
        text = path.read_text(errors="replace")
    except OSError:
        return None
    calls: dict[str, None] = {}  # call ids of shell tool calls, in order
    told: dict[str, str] = {}
    for record in _events(text):
        payload = record.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        if record.get("type") == "event_msg" and kind == "task_started":
            calls, told = {}, {}  # a new turn: only the last one is this turn's
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(payload.get("name") or "local_shell")
            if name in _SHELL_TOOLS and payload.get("call_id"):
                calls[str(payload["call_id"])] = None
        elif kind in ("function_call_output", "custom_tool_call_output"):
            told[str(payload.get("call_id"))] = _output_text(payload.get("output"))
    return [_command(told.get(call, "")) for call in calls]


def _command(output: str) -> Command:
    """A shell tool's answer: an exit code, still running, or refused before it ran."""
    if _STILL_RUNNING in output:
        return Command(output, failed=False)
    code = _EXIT.search(output)
    return Command(output, failed=code is None or int(code.group(1)) != 0)


def _output_text(value: object) -> str:
    if isinstance(value, str):
        try:  # the classic shell tool answers {"output": ..., "metadata": {"exit_code": N}}
            data = json.loads(value)
        except json.JSONDecodeError:
            return value
        if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
            code = data["metadata"].get("exit_code")
            return f"Exit code: {code}\n{data.get('output', '')}"
        return value
    if isinstance(value, dict):
        return _output_text(value.get("content") or value.get("output") or "")
    if isinstance(value, list):
        return "\n".join(str(v.get("text", "")) for v in value if isinstance(v, dict))
    return ""


def _session_file(request: TurnRequest, thread: str | None) -> Path | None:
    """Where codex kept the thread (``$CODEX_HOME/sessions/Y/M/D/rollout-…-ID.jsonl``)."""
    if not thread or not re.fullmatch(r"[0-9A-Za-z-]+", thread):
        return None
    env = {**os.environ, **request.env}
    home = env.get("CODEX_HOME") or str(Path(env.get("HOME") or Path.home()) / ".codex")
    found = sorted(Path(home).glob(f"sessions/*/*/*/rollout-*-{thread}.jsonl"))
    return found[-1] if found else None


def sandbox_mode(args: list[str]) -> str | None:
    """The sandbox codex will run commands in (None: none, danger-full-access/bypass)."""
    mode = "read-only"  # codex's own default
    for i, arg in enumerate(args):
        if arg.startswith("--dangerously-bypass-approvals"):
            return None
        takes = arg in ("-c", "--config", "-s", "--sandbox") and i + 1 < len(args)
        value = args[i + 1] if takes else ""
        if arg.startswith(("--config=", "--sandbox=")):
            value = arg.split("=", 1)[1]
        if arg in ("-s", "--sandbox") or arg.startswith("--sandbox="):
            mode = value
        elif value.replace(" ", "").startswith("sandbox_mode="):
            mode = value.split("=", 1)[1].strip().strip("'\"")
    return None if mode in _UNSANDBOXED else mode


def sandbox_broken(mode: str, done: Completed) -> str:
    """Why a run is refused: codex's own sandbox cannot run a command on this machine."""
    tail = done.stderr_tail(2) or done.describe_failure()
    return (
        f"codex's {mode} sandbox cannot run a command on this machine "
        f"('codex sandbox -- true' failed: {tail}); every turn would run nothing. "
        + _SANDBOX_FIX[0].upper()
        + _SANDBOX_FIX[1:]
    )


def _failed(item: dict[str, Any]) -> bool:
    code = item.get("exit_code")
    return item.get("status") in ("failed", "declined") or (isinstance(code, int) and code != 0)


def _not_a_running_total(last: dict[str, int], report: dict[str, int]) -> bool:
    """A running total never shrinks, and its input grows with every model call."""
    shrank = any(report[k] < last[k] for k in USAGE_KEYS)
    return shrank or report["input_tokens"] <= last["input_tokens"]


def _state_path(state_dir: Path | None, thread: str | None) -> Path | None:
    if state_dir is None or not thread or "/" in thread or thread.startswith("."):
        return None
    return state_dir / "codex" / f"{thread}.json"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("total"), dict):
        return {}
    total = {k: as_int(data["total"].get(k)) or 0 for k in USAGE_KEYS}
    return {"total": total, "per_turn": bool(data.get("per_turn"))}


def _save(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


def _events(stdout: str) -> list[dict[str, Any]]:
    return json_lines(stdout)
