"""Fake ``claude`` and ``codex`` executables that parse their arguments like the real ones.

Both reject an option they do not know (Claude Code: ``error: unknown option``; Codex,
a clap program: ``error: unexpected argument``), and both know which options a new
and a resumed turn take: ``codex exec resume`` rejects ``-s/--sandbox``, ``-C`` and
the other exec-only options, as current Codex does.  They edit ``value.txt`` only when
their permission mode / sandbox allows edits, keep sessions under ``$FAKE_STATE`` (a
resume of an unknown session fails), log every call to ``$FAKE_AGENT_LOG`` and can
be told to fail:

* ``$FAKE_FAIL_FIRST=N``: the first N calls fail with an API 529 "overloaded" error;
* ``$FAKE_CODEX_USAGE=cumulative|per-turn``: whether codex's ``turn.completed`` usage
  is the thread's running total (current codex) or the turn's own (older codex).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

PY = sys.executable

COMMON = r'''
import json, os, pathlib, sys, uuid
LOG = pathlib.Path(os.environ["FAKE_AGENT_LOG"])
STATE = pathlib.Path(os.environ["FAKE_STATE"])
STATE.mkdir(parents=True, exist_ok=True)

def log(**kw):
    closed = os.path.samestat(os.fstat(0), os.stat(os.devnull))
    with LOG.open("a") as fh:
        fh.write(json.dumps({"argv": sys.argv[1:], "stdin_closed": closed, **kw}) + "\n")

def bump():
    p = pathlib.Path("value.txt")
    p.write_text(str(float(p.read_text()) + 1) + "\n")

def parse(args, known, unknown_message, code):
    """Options (name -> value or True) and positionals; unknown options are fatal."""
    opts, pos, i = {}, [], 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            pos += args[i + 1:]
            break
        if arg.startswith("-") and arg != "-":
            name, eq, inline = arg.partition("=")
            if name not in known:
                print(unknown_message.format(name), file=sys.stderr)
                sys.exit(code)
            if known[name]:
                if eq:
                    value = inline
                else:
                    i += 1
                    if i >= len(args):
                        print(f"error: option {name} needs a value", file=sys.stderr)
                        sys.exit(code)
                    value = args[i]
                opts.setdefault(name, []).append(value)
            else:
                opts[name] = True
        else:
            pos.append(arg)
        i += 1
    return opts, pos

def should_fail():
    """The first $FAKE_FAIL_FIRST calls fail (a counter under $FAKE_STATE)."""
    counter = STATE / "calls"
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    return n < int(os.environ.get("FAKE_FAIL_FIRST", "0"))
'''

CLAUDE = r"""
KNOWN = {"-p": False, "--print": False, "--output-format": True, "--session-id": True,
         "--resume": True, "-r": True, "--permission-mode": True, "--model": True,
         "--dangerously-skip-permissions": False, "--max-turns": True, "--verbose": False,
         "--allowedTools": True, "--append-system-prompt": True}
opts, pos = parse(sys.argv[1:], KNOWN, "error: unknown option '{}'", 1)
if "-p" not in opts or opts.get("--output-format") not in (["json"], ["stream-json"]) \
        or len(pos) != 1:
    print("error: expected -p --output-format json|stream-json and one prompt", file=sys.stderr)
    sys.exit(1)
if opts.get("--output-format") == ["stream-json"] and "--verbose" not in opts:
    # What the real one says: print mode streams JSON only with --verbose.
    print("Error: When using --print, --output-format=stream-json requires --verbose",
          file=sys.stderr)
    sys.exit(1)
mode = (opts.get("--permission-mode") or ["default"])[-1]
if mode not in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"):
    print(f"error: option '--permission-mode' argument '{mode}' is invalid", file=sys.stderr)
    sys.exit(1)
prompt = pos[0]
log(prompt=prompt, mode=mode)
if should_fail():
    print(json.dumps({"type": "result", "subtype": "success", "is_error": True,
                      "result": 'API Error: 529 {"type":"error","error":{"type":'
                                '"overloaded_error","message":"Overloaded"}}'}))
    sys.exit(1)
if "--session-id" in opts:
    sid = opts["--session-id"][-1]
    if (STATE / f"claude-{sid}").exists():
        print(f"Error: Session ID {sid} is already in use.", file=sys.stderr)
        sys.exit(1)
else:
    sid = (opts.get("--resume") or opts.get("-r"))[-1]
    if not (STATE / f"claude-{sid}").exists():
        print(f"No conversation found with session ID: {sid}", file=sys.stderr)
        sys.exit(1)
(STATE / f"claude-{sid}").write_text("x")
if mode in ("acceptEdits", "bypassPermissions") or "--dangerously-skip-permissions" in opts:
    bump()
print(json.dumps({
    "type": "result", "subtype": "success", "is_error": False, "duration_ms": 1200,
    "num_turns": 3, "result": "Made the number bigger.", "session_id": sid,
    "total_cost_usd": 0.0123,
    "usage": {"input_tokens": 100, "cache_creation_input_tokens": 10,
              "cache_read_input_tokens": 50, "output_tokens": 20},
}))
"""

CODEX = r"""
GLOBAL = {"-c": True, "--config": True, "-m": True, "--model": True, "--json": False,
          "--skip-git-repo-check": False, "--ephemeral": False, "-o": True,
          "--output-last-message": True, "--dangerously-bypass-approvals-and-sandbox": False,
          "--yolo": False}
EXEC = {**GLOBAL, "-s": True, "--sandbox": True, "-C": True, "--cd": True,
        "--add-dir": True, "-p": True, "--profile": True, "--oss": False, "-i": True,
        "--color": True, "--output-schema": True}
RESUME = {**GLOBAL, "--last": False, "--all": False, "-i": True}
args = sys.argv[1:]
if args and args[0] == "sandbox" and "--" in args:
    # `codex sandbox [-c ...] -- CMD`: the adapter's check that the sandbox runs anything.
    import subprocess
    sys.exit(subprocess.call(args[args.index("--") + 1:]))
if not args or args[0] != "exec":
    print("error: expected exec", file=sys.stderr)
    sys.exit(2)
resume = len(args) > 1 and args[1] == "resume"
message = "error: unexpected argument '{}' found"
opts, pos = parse(args[2:] if resume else args[1:], RESUME if resume else EXEC, message, 2)
if len(pos) != (2 if resume else 1) or "--json" not in opts:
    print(f"error: bad positionals {pos}", file=sys.stderr)
    sys.exit(2)
sandbox = (opts.get("-s") or opts.get("--sandbox") or ["read-only"])[-1]
for item in opts.get("-c", []) + opts.get("--config", []):
    key, _, value = item.partition("=")
    if key.strip() == "sandbox_mode":
        sandbox = value.strip().strip('"')
prompt = pos[-1]
log(prompt=prompt, sandbox=sandbox)
if should_fail():
    print(json.dumps({"type": "error", "message": "stream error: 529 Overloaded; retry later"}))
    print(json.dumps({"type": "turn.failed", "error": {"message": "529 Overloaded"}}))
    sys.exit(1)
if resume:
    thread = pos[0]
    if not (STATE / f"codex-{thread}.json").exists():
        print(f"Error: no rollout found for thread id {thread}", file=sys.stderr)
        sys.exit(1)
else:
    thread = "thread-" + uuid.uuid4().hex[:8]
    (STATE / f"codex-{thread}.json").write_text(json.dumps(
        {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
         "reasoning_output_tokens": 0}))
if sandbox in ("workspace-write", "danger-full-access"):
    bump()
turn = {"input_tokens": 1000, "cached_input_tokens": 400, "output_tokens": 200,
        "reasoning_output_tokens": 50}
path = STATE / f"codex-{thread}.json"
total = {k: v + turn[k] for k, v in json.loads(path.read_text()).items()}
path.write_text(json.dumps(total))
shape = os.environ.get("FAKE_CODEX_USAGE", "cumulative")
for event in (
    {"type": "thread.started", "thread_id": thread},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                       "text": "Bumped it."}},
    {"type": "turn.completed", "usage": total if shape == "cumulative" else turn},
):
    print(json.dumps(event))
"""


GEMINI = r"""
# Gemini CLI 0.61: headless with --prompt, stream-json events, --session-id / --resume.
KNOWN = {"--output-format": True, "-o": True, "--skip-trust": False, "--session-id": True,
         "--resume": True, "-r": True, "--approval-mode": True, "--prompt": True, "-p": True,
         "-m": True, "--model": True, "-y": False, "--yolo": False, "--policy": True}
opts, pos = parse(sys.argv[1:], KNOWN, "Unknown argument: {}", 42)
prompt = (opts.get("--prompt") or opts.get("-p") or [""])[-1]
log(prompt=prompt)
if "--skip-trust" not in opts:
    print("Gemini CLI is not running in a trusted directory.", file=sys.stderr)
    sys.exit(55)
if "--session-id" in opts:
    sid = opts["--session-id"][-1]
else:
    sid = (opts.get("--resume") or opts.get("-r"))[-1]
    if not (STATE / f"gemini-{sid}").exists():
        print(f"Error resuming session: Invalid session identifier \"{sid}\".", file=sys.stderr)
        sys.exit(42)
(STATE / f"gemini-{sid}").write_text("x")
if (opts.get("--approval-mode") or ["default"])[-1] in ("auto_edit", "yolo"):
    bump()
for event in (
    {"type": "init", "session_id": sid, "model": "gemini-2.5-flash"},
    {"type": "message", "role": "assistant", "content": "Bumped it.", "delta": True},
    {"type": "result", "status": "success",
     "stats": {"input_tokens": 1000, "cached": 400, "output_tokens": 200}},
):
    print(json.dumps(event))
"""

OPENCODE = r"""
# OpenCode 1.18: `run --format json [--session ID] [--dir D] -- PROMPT`, its own session ids.
if sys.argv[1:2] != ["run"]:
    print("unknown command", file=sys.stderr)
    sys.exit(1)
KNOWN = {"--format": True, "--session": True, "-s": True, "--dir": True, "-m": True,
         "--model": True, "--agent": True, "--pure": False}
opts, pos = parse(sys.argv[2:], KNOWN, "Unknown argument: {}", 1)
log(prompt=" ".join(pos))
if "--session" in opts:
    sid = opts["--session"][-1]
    if not (STATE / f"opencode-{sid}").exists():
        print("Error: Session not found", file=sys.stderr)
        sys.exit(1)
else:
    sid = "ses_" + uuid.uuid4().hex[:20]
(STATE / f"opencode-{sid}").write_text("x")
os.chdir((opts.get("--dir") or ["."])[-1])
bump()
tokens = {"total": 1200, "input": 800, "output": 200, "reasoning": 0,
          "cache": {"read": 200, "write": 0}}
for event in (
    {"type": "step_start", "sessionID": sid, "part": {"type": "step-start"}},
    {"type": "text", "sessionID": sid, "part": {"type": "text", "text": "Bumped it."}},
    {"type": "step_finish", "sessionID": sid,
     "part": {"type": "step-finish", "tokens": tokens, "cost": 0.004}},
):
    print(json.dumps(event))
"""


def install_fakes(tmp: Path) -> tuple[Path, Path]:
    """Write ``claude``, ``codex``, ``gemini`` and ``opencode`` into ``tmp/bin``; returns
    (bin dir, call log)."""
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    for name, body in (
        ("claude", CLAUDE),
        ("codex", CODEX),
        ("gemini", GEMINI),
        ("opencode", OPENCODE),
    ):
        exe = bindir / name
        exe.write_text(f"#!{PY}\n{textwrap.dedent(COMMON)}\n{textwrap.dedent(body)}")
        exe.chmod(0o755)
    return bindir, tmp / "fake.log"


def fake_env(tmp: Path) -> dict[str, str]:
    bindir, log = install_fakes(tmp)
    return {
        "PATH": f"{bindir}:{Path(PY).parent}:/usr/bin:/bin",
        "FAKE_AGENT_LOG": str(log),
        "FAKE_STATE": str(tmp / "fake-state"),
    }


def calls(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
