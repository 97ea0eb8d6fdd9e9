"""The real ``claude`` and ``codex`` CLIs, driven against one scripted model server.

Every set-up is used exactly as ``evolving-agent integrations show`` prints it (the
printed text is parsed and pasted into the client's config, or run as a shell line),
and each test checks what reached the model (the scripted server records every
request) and what reached the memory root (Evidence, ``verify``).  The CLIs are the
pinned versions ``.ci/tools.d/node-clis.sh`` installs; they never see the network, only
the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from evolving_agent.integrations.setups import Setup
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from evolving_agent.search.agents import claude as claude_agent
from evolving_agent.search.agents import codex as codex_agent
from tests.helpers import reflector_fakes as fakes
from tests.helpers import run_cli
from tests.helpers.fixtures import isolated_env
from tests.helpers.ramdisk import DISK_TEMP
from tests.helpers.roots import fresh_root
from tests.helpers.scripted_model import (
    Answer,
    CallTool,
    Fail,
    Say,
    ScriptedModel,
    Shell,
    WriteFile,
    claude_env,
    codex_env,
    codex_home,
    deferred_tools,
    last_prompt,
)

pytestmark = pytest.mark.slow

BIAS = "When about to offer a menu of options, stop: did the user ask for options?"
TOOLS = {"boot", "friction", "hypotheses", "hypothesis_add", "hypothesis_propose", "live_set"}
BIN = Path(sys.executable).parent  # the venv's bin: holds `evolving-agent`


@dataclass
class World:
    model: ScriptedModel
    root: MemoryRoot
    tmp: Path
    env: dict[str, str]  # the test environment (git identity, PATH with evolving-agent)

    def dir(self, name: str) -> Path:
        path = self.tmp / name
        path.mkdir(parents=True)
        return path


@pytest.fixture(scope="module")
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    for program in ("claude", "codex"):
        assert shutil.which(program), f"{program} is not installed (.ci/tools.sh installs it)"
    # On the disk: codex's bwrap sandbox mounts its own /dev, where a CODEX_HOME on the
    # suite's /dev/shm would vanish (tests/helpers/ramdisk.py)
    tmp = Path(tempfile.mkdtemp(prefix="ea-real-clients-", dir=DISK_TEMP))
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    env = {**os.environ, **isolated_env(tmp)}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("EVOLVING_AGENT_ROOT")  # the set-ups must carry the root themselves
    with pytest.MonkeyPatch.context() as mp:
        for name, value in isolated_env(tmp).items():
            mp.setenv(name, value)
        root = fresh_root(tmp / "memory")
        Writer(root, "human").write("today", "bias.md", BIAS + "\n")
    with ScriptedModel() as model:
        yield World(model, root, tmp, env)


def setup(client: str, key: str, root: MemoryRoot | Path) -> Setup:
    """The set-up ``key`` exactly as ``integrations show CLIENT --root R`` prints it."""
    path = root.path if isinstance(root, MemoryRoot) else root
    shown = run_cli("integrations", "show", client, "--root", str(path), "--json")
    assert shown.exit_code == 0, shown.output
    (found,) = [Setup(**s) for s in json.loads(shown.stdout) if s["key"] == key]
    return found


def frictions(root: MemoryRoot, text: str) -> list[Any]:
    return [r for r in EvidenceLog(root).iter_all() if r.kind == "friction" and r.text == text]


def verify(world: World) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "evolving-agent"), "--root", str(world.root.path), "verify"],
        env=world.env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run a client in ``cwd`` as a shell started there would: with ``PWD`` set to it.

    OpenCode takes its folder from ``$PWD``, not the process's cwd: with the suite's own
    ``PWD`` it would work in (and snapshot) this repository, not the test's workspace."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env={**env, "PWD": str(cwd)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def workspace(world: World, name: str) -> Path:
    ws = world.dir(name)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


# -- Claude Code -------------------------------------------------------------------------------


def claude_world(world: World, name: str) -> tuple[Path, dict[str, str]]:
    home = world.dir(f"{name}-home")
    env = {**world.env, **claude_env(home, world.model.url)}
    env["PATH"] = world.env["PATH"]
    return home, env


def claude_result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_claude_user_setup_as_printed_reaches_the_model_and_lands_friction(world: World) -> None:
    home, env = claude_world(world, "claude-user")
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        setup("claude", "claude-settings", world.root).text
    )
    add = run(shlex.split(setup("claude", "claude-mcp-user", world.root).text), home, env)
    assert add.returncode == 0, add.stderr
    ws = workspace(world, "claude-user-ws")
    text = "claude: answered with four options where one was asked for"
    marker = world.model.script("claude-user", [CallTool("friction", {"text": text}), Say("ok")])

    result = claude_result(
        run(["claude", "-p", "--output-format", "json", "--", f"go {marker}"], ws, env)
    )

    assert result["permission_denials"] == [] and result["is_error"] is False
    first, *rest = world.model.requests("claude-user", api="messages")
    # The SessionStart hook's boot context reached the model's first request.
    assert BIAS in first.text()
    # Claude Code lists MCP tools by name and loads them on demand, once the server has
    # connected: on a busy machine that may be after the first request.  All six are there.
    listed = {n for r in (first, *rest) for n in deferred_tools(r.body)}
    assert {n.removeprefix("mcp__evolving-agent__") for n in listed} >= TOOLS
    assert any("mcp__evolving-agent__friction" in r.tool_names() for r in rest)
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"
    assert verify(world).returncode == 0


def test_claude_denies_the_tools_without_the_printed_allow_rule(world: World) -> None:
    # Regression: the old docs' set-up left `claude -p` denying every memory tool call.
    home, env = claude_world(world, "claude-deny")
    add = run(shlex.split(setup("claude", "claude-mcp-user", world.root).text), home, env)
    assert add.returncode == 0, add.stderr
    ws = workspace(world, "claude-deny-ws")
    text = "claude: this friction is denied"
    marker = world.model.script("claude-deny", [CallTool("friction", {"text": text}), Say("ok")])

    result = claude_result(
        run(["claude", "-p", "--output-format", "json", "--", f"go {marker}"], ws, env)
    )

    assert [d["tool_name"] for d in result["permission_denials"]] == [
        "mcp__evolving-agent__friction"
    ]
    assert frictions(world.root, text) == []


def test_claude_old_documented_e_flag_order_is_refused(world: World) -> None:
    # Regression: `-e KEY=V` before the name swallowed it; the printed line never uses -e.
    home, env = claude_world(world, "claude-e")
    old = [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        "-e",
        "EVOLVING_AGENT_ROOT=/x",
        "evolving-agent",
        "--",
        "evolving-agent",
        "mcp",
    ]
    assert run(old, home, env).returncode != 0
    assert "-e" not in shlex.split(setup("claude", "claude-mcp-user", world.root).text)


def test_claude_project_setup_as_printed_lands_friction(world: World) -> None:
    home, env = claude_world(world, "claude-project")
    ws = workspace(world, "claude-project-ws")
    (ws / ".mcp.json").write_text(setup("claude", "claude-mcp-project", world.root).text)
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(
        setup("claude", "claude-project-settings", world.root).text
    )
    # What accepting the trust dialog once records (the printed note says to).
    (home / ".claude.json").write_text(
        json.dumps({"projects": {str(ws): {"hasTrustDialogAccepted": True}}})
    )
    text = "claude: project-scoped friction"
    marker = world.model.script("claude-proj", [CallTool("friction", {"text": text}), Say("ok")])

    result = claude_result(
        run(["claude", "-p", "--output-format", "json", "--", f"go {marker}"], ws, env)
    )

    assert result["permission_denials"] == []
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"


# -- Codex ---------------------------------------------------------------------------------


def codex_world(world: World, name: str, extra_toml: str = "") -> tuple[Path, dict[str, str]]:
    home = world.dir(f"{name}-home")
    chome = codex_home(home / ".codex", world.model.url, extra_toml)
    env = {**world.env, **codex_env(home, chome)}
    env["PATH"] = world.env["PATH"]
    return chome, env


def codex_events(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def mcp_items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        e["item"]
        for e in events
        if e.get("type") == "item.completed" and e["item"].get("type") == "mcp_tool_call"
    ]


def test_codex_config_as_printed_gives_the_model_tools_and_lands_friction(world: World) -> None:
    _chome, env = codex_world(
        world, "codex-config", setup("codex", "codex-config", world.root).text
    )
    ws = workspace(world, "codex-config-ws")
    (ws / "AGENTS.md").write_text(setup("codex", "codex-agents", world.root).text + "\n")
    text = "codex: listed four libraries where one was asked for"
    marker = world.model.script(
        "codex-config", [CallTool("boot"), CallTool("friction", {"text": text}), Say("done")]
    )

    proc = run(["codex", "exec", "--json", "--", f"go {marker}"], ws, env)

    assert proc.returncode == 0, proc.stderr
    first, second, _third = world.model.requests("codex-config", api="responses")
    # The tools are in the very first request (required = true waits for the server).
    assert {n.removeprefix("mcp__evolving_agent") for n in first.tool_names()} >= TOOLS
    assert "call the evolving-agent `boot` tool" in first.text()  # AGENTS.md arrived
    # The boot tool's answer (with today's bias) went back to the model.
    outputs = [i for i in second.body["input"] if i.get("type") == "function_call_output"]
    assert BIAS in json.dumps(outputs)
    assert [(i["tool"], i["status"]) for i in mcp_items(codex_events(proc))] == [
        ("boot", "completed"),
        ("friction", "completed"),
    ]
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"
    assert verify(world).returncode == 0


def test_codex_mcp_add_as_printed_is_callable_by_annotations_alone(world: World) -> None:
    # Regression: tools without annotations were rejected ("approval policy is never").
    chome, env = codex_world(world, "codex-add")
    add = run(shlex.split(setup("codex", "codex-mcp-add", world.root).text), chome, env)
    assert add.returncode == 0, add.stderr
    table = tomllib.loads((chome / "config.toml").read_text())["mcp_servers"]["evolving-agent"]
    assert table["args"] == ["--root", str(world.root.path), "mcp"]
    assert "default_tools_approval_mode" not in table
    ws = workspace(world, "codex-add-ws")
    text = "codex: friction through codex mcp add"
    marker = world.model.script("codex-add", [CallTool("friction", {"text": text}), Say("ok")])

    proc = run(["codex", "exec", "--json", "--", f"go {marker}"], ws, env)

    assert proc.returncode == 0, proc.stderr
    assert [i["status"] for i in mcp_items(codex_events(proc))] == ["completed"]
    assert len(frictions(world.root, text)) == 1


def test_codex_with_a_wrong_root_fails_loudly_not_silently(world: World) -> None:
    # Regression: a server that could not start left Codex running without memory, silently.
    missing = world.tmp / "no-such-root"
    _chome, env = codex_world(world, "codex-bad", setup("codex", "codex-config", missing).text)
    ws = workspace(world, "codex-bad-ws")
    marker = world.model.script("codex-bad", [Say("should not be asked")])

    proc = run(["codex", "exec", "--json", "--", f"go {marker}"], ws, env)

    assert proc.returncode != 0
    assert "required MCP servers failed to initialize: evolving-agent" in proc.stderr
    assert world.model.requests("codex-bad") == []


# -- search runs -----------------------------------------------------------------------------

INCREMENT = (
    "python3 -c \"import pathlib; p = pathlib.Path('value.txt'); "
    'p.write_text(str(int(p.read_text()) + 1))"'
)


@dataclass
class SearchRun:
    proc: subprocess.CompletedProcess[str]
    summary: dict[str, Any]
    rows: list[dict[str, Any]]


def search(
    world: World,
    name: str,
    agent: str,
    env: dict[str, str],
    marker: str,
    *args: str,
    timeout: float = 180,
) -> SearchRun:
    """``evolving-agent search run --json`` on the toy task: make value.txt larger."""
    base = world.dir(f"{name}-search")
    (base / "candidate").mkdir()
    (base / "candidate" / "value.txt").write_text("1")
    (base / "task.md").write_text(f"Make the number in value.txt larger. {marker}\n")
    (base / "score.py").write_text(
        "import os, pathlib\n"
        "print(int((pathlib.Path(os.environ['EA_CANDIDATE']) / 'value.txt').read_text()))\n"
    )
    out = base / "run"
    argv = [
        str(BIN / "evolving-agent"), "search", "run",
        "--candidate", str(base / "candidate"), "--task", str(base / "task.md"),
        "--score", f"{sys.executable} {base / 'score.py'}",
        "--agent", agent, "--out", str(out), "--json", "--quiet", "--retry-backoff", "0",
        "--turn-timeout", "120", *args,
    ]  # fmt: skip
    proc = run(argv, base, env, timeout)
    summary = json.loads(proc.stdout) if proc.stdout.strip() else {}
    log = out / "log.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return SearchRun(proc, summary, sorted(rows, key=lambda r: (r["round"], r["turn"])))


def first_requests(world: World, script: str, api: str) -> list[Any]:
    """The first request of each CLI call of a script (a new prompt, no tool results)."""
    return [r for r in world.model.requests(script, api=api) if r.step == 0]


def test_claude_search_edits_scores_resumes_and_forgets(world: World) -> None:
    _home, env = claude_world(world, "claude-search")
    marker = world.model.script("claude-search", [Shell(INCREMENT), Say("bigger now")])
    allow = "--permission-mode acceptEdits --allowedTools Bash"

    run_ = search(
        world, "claude-search", "claude", env, marker,
        "--policy", "forget", "--rounds", "2", "--turns", "4", "--agent-args", allow,
    )  # fmt: skip

    assert run_.proc.returncode == 0, run_.proc.stderr
    assert [r["score"] for r in run_.rows] == [2, 3, 4, 5]
    assert all(r["error"] is None and r["denied"] == 0 for r in run_.rows)
    s = [r["session"] for r in run_.rows]
    assert s[0] == s[1] != s[2] == s[3]  # resumed within a round, fresh after the forget
    firsts = first_requests(world, "claude-search", "messages")
    # The resumed turn's model call carried the earlier conversation; the fresh one did not.
    assert "bigger now" in firsts[1].text() and "bigger now" not in firsts[2].text()
    assert run_.summary["best_score"] == 5 and run_.summary["failed_turns"] == 0


def test_claude_search_with_bash_denied_fails_every_turn_and_still_prints_json(
    world: World,
) -> None:
    # Regression: acceptEdits denied every Bash call, yet turns showed `error: null`, and
    # `search run --json` printed nothing once every turn had failed.
    _home, env = claude_world(world, "claude-denied")
    marker = world.model.script("claude-denied", [Shell(INCREMENT), Say("could not")])

    run_ = search(world, "claude-denied", "claude", env, marker, "--policy", "single",
                  "--turns", "2")  # fmt: skip

    assert run_.proc.returncode == 4
    assert "every turn failed" in run_.proc.stderr and "claude denied" in run_.proc.stderr
    assert run_.summary["failed_turns"] == run_.summary["turns"] == 2
    for row in run_.rows:
        assert row["denied"] == 1 and row["score"] == 1
        assert row["error"].startswith("claude denied 1 tool call(s): Bash;")
        # The suggestion keeps Bash inside Claude Code's sandbox (followed in a test below).
        assert "autoAllowBashIfSandboxed" in row["error"] and "allowedTools" not in row["error"]


def test_claude_rate_limit_names_the_status_and_is_retried(world: World) -> None:
    _home, env = claude_world(world, "claude-429")
    del env["CLAUDE_CODE_MAX_RETRIES"]  # the adapter's own default (2) applies
    marker = world.model.script("claude-429", [Fail(429, "slow down", retry_after=0)])

    run_ = search(world, "claude-429", "claude", env, marker, "--policy", "single",
                  "--turns", "1", "--retries", "1")  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert row["attempts"] == 2 and "429" in row["error"]
    # Claude's own retries were capped at 2: three requests per attempt, not eleven.
    assert len(world.model.requests("claude-429", api="messages")) == 6


def test_claude_timeout_while_retrying_a_429_is_retried_like_the_429(world: World) -> None:
    # Regression: past --turn-timeout a persistent 429 became "timed out", not retried,
    # and the 429 was hidden.
    _home, env = claude_world(world, "claude-slow429")
    # Claude's own ten retries wait 0.5 s, 1 s, 2 s, … : well past the turn timeout.
    env["CLAUDE_CODE_MAX_RETRIES"] = "10"
    marker = world.model.script("claude-slow429", [Fail(429, "slow down", retry_after=1)])

    # Each attempt waits out the turn timeout: it need only outlast Claude's start and
    # first 429 (5 s after the start at a load of 10 on 2 cores, 2-3 s when quieter).
    run_ = search(world, "claude-slow429", "claude", env, marker, "--policy", "single",
                  "--turns", "1", "--retries", "1", "--turn-timeout", "10")  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert row["attempts"] == 2
    assert row["error"].startswith("turn timed out after 10s (claude); claude was retrying")
    assert "(HTTP 429)" in row["error"]
    assert row["retried"] == [row["error"]]  # the first attempt was stopped the same way


def codex_search_env(world: World, name: str) -> dict[str, str]:
    """Codex with a working sandbox: its CODEX_HOME outside $TMPDIR (see the next test)."""
    _chome, env = codex_world(world, name)
    env["TMPDIR"] = str(world.dir(f"{name}-tmpdir"))
    # The agents' private workspaces outside $TMPDIR too: Codex's sandboxes let a command
    # write under $TMPDIR, so a read-only sandbox would not refuse an edit made there.
    env["EA_WORKSPACES"] = str(world.dir(f"{name}-workspaces"))
    return env


def test_codex_search_edits_scores_resumes_and_forgets(world: World) -> None:
    env = codex_search_env(world, "codex-search")
    marker = world.model.script("codex-search", [Shell(INCREMENT), Say("bigger now")])

    run_ = search(world, "codex-search", "codex", env, marker,
                  "--policy", "forget", "--rounds", "2", "--turns", "4")  # fmt: skip

    assert run_.proc.returncode == 0, run_.proc.stderr
    assert [r["score"] for r in run_.rows] == [2, 3, 4, 5]
    assert all(r["error"] is None and r["failed_commands"] == 0 for r in run_.rows)
    s = [r["session"] for r in run_.rows]
    assert s[0] == s[1] != s[2] == s[3]
    firsts = first_requests(world, "codex-search", "responses")
    assert "bigger now" in firsts[1].text() and "bigger now" not in firsts[2].text()
    # Codex reports running totals; the adapter records each turn's own tokens.
    assert [r["output_tokens"] for r in run_.rows] == [20, 20, 20, 20]


def test_codex_sandbox_that_runs_nothing_is_refused_before_the_run(world: World) -> None:
    # Regression: where the system bwrap (Debian's bubblewrap) meets a CODEX_HOME under
    # $TMPDIR, codex makes no codex-linux-sandbox helper for bwrap to start, and every
    # command exits 1 without a command_execution event: the turns looked merely empty.
    assert shutil.which("bwrap"), "bwrap is not installed (.ci/tools.d/bwrap.sh installs it)"
    _chome, env = codex_world(world, "codex-nohelper")
    env["TMPDIR"] = str(world.tmp)  # CODEX_HOME is below it
    marker = world.model.script("codex-nohelper", [Shell(INCREMENT), Say("done")])

    run_ = search(world, "codex-nohelper", "codex", env, marker, "--policy", "single",
                  "--turns", "1")  # fmt: skip

    assert run_.proc.returncode == 4
    assert "codex's workspace-write sandbox cannot run a command on this machine" in (
        run_.proc.stderr
    )
    # The reason is codex's own words: bwrap found no helper to start.
    assert "bwrap: execvp codex-linux-sandbox: No such file or directory" in run_.proc.stderr
    assert "CODEX_HOME outside $TMPDIR" in run_.proc.stderr
    assert run_.rows == [] and world.model.requests("codex-nohelper") == []


def test_codex_read_only_sandbox_refusals_fail_the_turn(world: World) -> None:
    # Regression: a sandbox that blocked every write showed as "5 (empty)", no error; and
    # commands codex refuses before they start print no item in `exec --json` at all.
    env = codex_search_env(world, "codex-ro")
    # The write is refused by the sandbox (shown as a command_execution item only when it
    # outlives codex's first 150 ms); the model then asks to run it unsandboxed, which
    # approval policy "never" refuses without any item.  Both must count.
    marker = world.model.script(
        "codex-ro", [Shell(INCREMENT), Shell(INCREMENT, escalate=True), Say("could not")]
    )

    run_ = search(world, "codex-ro", "codex", env, marker, "--policy", "single", "--turns",
                  "1", "--agent-args", '-c sandbox_mode="read-only"')  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert (row["denied"], row["failed_commands"], row["empty"]) == (2, 2, True)
    assert row["error"].startswith("codex's sandbox (read-only) refused all 2 command(s)")
    assert (
        "Read-only file system" in row["error"] and 'sandbox_mode="workspace-write"' in row["error"]
    )
    told = [
        i["output"]
        for r in world.model.requests("codex-ro", api="responses")
        for i in r.body["input"]
        if i.get("type") == "function_call_output"
    ]
    # What the model was told: the sandbox's refusal, then the approval policy's.
    assert "Read-only file system" in told[0] and "approval policy is Never" in told[-1]
    assert run_.summary["failed_turns"] == 1


# -- the adapters' flag lists against the real --help ------------------------------------------

_OPTION = re.compile(r"^\s{1,6}(?:(-\w), )?(--[\w-]+)((?: <[^>]+>)?)", re.MULTILINE)


def help_options(argv: list[str]) -> dict[str, bool]:
    """Every option a ``--help`` lists, each spelling, with whether it takes a value."""
    proc = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, bool] = {}
    for short, long, value in _OPTION.findall(proc.stdout):
        for name in (short, long):
            if name:
                out[name] = bool(value.strip())
    return out


def test_codex_resume_flags_are_the_ones_both_commands_take() -> None:
    # Regression: --not-so-yolo was passed on though codex rejects it, while --enable,
    # --strict-config, -i and --output-schema were refused though codex takes them.
    exec_ = help_options(["codex", "exec"])
    resume = help_options(["codex", "exec", "resume"])
    both = {k: v for k, v in resume.items() if k in exec_ and k not in ("-h", "--help")}
    assert both == codex_agent._RESUME_OK
    for flag in ("-s", "--sandbox"):  # exec-only: the adapter turns them into -c
        assert flag in exec_ and flag not in resume


def test_claude_flags_the_adapters_pass_exist() -> None:
    flags = help_options(["claude"])
    used = [*claude_agent.OUTPUT_ARGS, *claude_agent.DEFAULT_ARGS, "--session-id", "--resume"]
    for flag in (a for a in used if a.startswith("-")):
        assert flag in flags, flag
    # What a denied turn's message tells the user to pass.
    assert "--allowedTools" in flags and "--settings" in flags
    helptext = subprocess.run(["claude", "--help"], capture_output=True, text=True).stdout
    assert '"stream-json"' in helptext and '"acceptEdits"' in helptext
    add = help_options(["claude", "mcp", "add"])
    assert add["--scope"] is True and "-e" in add  # the printed line uses --scope, never -e


# -- the user's own CLI as the reflector -------------------------------------------------------

DAY = "2026-11-02"


def reflector_root(tmp_path: Path, marker: str) -> MemoryRoot:
    """A root with one hypothesis and one day of friction naming the model's script."""
    root = fresh_root(tmp_path / "memory")
    with freeze_time(f"{DAY} 09:00:00"):
        hid = run_cli("hypothesis", "add", "give one answer, not a menu").output.split()[0]
    with freeze_time(f"{DAY} 10:00:00"):
        done = run_cli("friction", f"listed options again {marker}", "--supports", hid)
        assert done.exit_code == 0
    return root


def nightly(
    root: MemoryRoot, env: dict[str, str], reflector: str
) -> subprocess.CompletedProcess[str]:
    argv = [str(BIN / "evolving-agent"), "--root", str(root.path), "run", "nightly",
            "--date", DAY, "--reflector", reflector]  # fmt: skip
    return run(argv, root.path.parent, env)


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_reflector_preset_writes_the_models_valid_answer(
    world: World, tmp_path: Path, client: str
) -> None:
    name = f"refl-ok-{client}"
    marker = world.model.script(name, [Answer(fakes.answer)])
    root = reflector_root(tmp_path, marker)
    if client == "claude":
        _home, env = claude_world(world, name)
        # Its own memory server configured for the user: the reflector must not get it.
        add = run(shlex.split(setup("claude", "claude-mcp-user", root).text), tmp_path, env)
        assert add.returncode == 0, add.stderr
    else:
        _chome, env = codex_world(world, name, setup("codex", "codex-config", root).text)

    proc = nightly(root, env, client)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"nightly {DAY}: done (reflector: {client})"
    (asked,) = world.model.requests(name, api="messages" if client == "claude" else "responses")
    # No tool that writes: Claude gets no tools at all, Codex no MCP tools.
    if client == "claude":
        assert asked.tool_names() == [] and deferred_tools(asked.body) == []
    else:
        assert not [n for n in asked.tool_names() if n.startswith("mcp__")]
    expected = json.loads(fakes.answer(last_prompt(asked.api, asked.body)))["bias"]
    assert (root.today / "bias.md").read_text().strip() == expected.strip()


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_reflector_preset_retries_an_invalid_answer_then_falls_back_visibly(
    world: World, tmp_path: Path, client: str
) -> None:
    name = f"refl-bad-{client}"
    marker = world.model.script(name, [Say("Sure! The day went well.")])
    root = reflector_root(tmp_path, marker)
    if client == "claude":
        _home, env = claude_world(world, name)
    else:
        _chome, env = codex_world(world, name)

    proc = nightly(root, env, client)

    assert proc.returncode == 0, proc.stderr
    status = proc.stdout.splitlines()[0]
    assert status.startswith(f"nightly {DAY}: done (reflector: rules; {client} reflector output ")
    assert "was invalid twice" in status and status.endswith("fell back to rules)")
    first, retry = world.model.requests(name, api="messages" if client == "claude" else "responses")
    assert "Your previous answer was refused" in last_prompt(retry.api, retry.body)
    assert "Your previous answer was refused" not in last_prompt(first.api, first.body)
    assert (root.today / "bias.md").exists()  # written by rules, never the bad text
    assert "went well" not in (root.today / "bias.md").read_text()


def test_claude_md_import_fallback_from_the_docs_reaches_the_model(world: World) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "integrations.md").read_text()
    (claude_md,) = [b for b in re.findall(r"```markdown\n(.*?)```", page, re.S) if "\n@" in b]
    _home, env = claude_world(world, "claude-import")
    ws = workspace(world, "claude-import-ws")
    (ws / "CLAUDE.md").write_text(claude_md)
    (imported,) = re.findall(r"^@(\S+)$", claude_md, re.M)
    wrote = run([str(BIN / "evolving-agent"), "--root", str(world.root.path), "boot",
                 "--write-file", imported], ws, env)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    marker = world.model.script("claude-import", [Say("ok")])

    claude_result(run(["claude", "-p", "--output-format", "json", "--", f"hi {marker}"], ws, env))

    (first,) = world.model.requests("claude-import", api="messages")
    assert BIAS in first.text()  # the imported boot file, with no hook at all


# -- the product's advice keeps the agent inside a sandbox ------------------------------------

_UNSANDBOXING = ("danger-full-access", "dangerously-bypass", "bypassPermissions")


def _outside_every_writable_root() -> Path:
    """A folder outside the workspace, $TMPDIR and /tmp (codex's workspace-write roots)."""
    base = Path("/var/tmp")
    if not base.is_dir() or not os.access(base, os.W_OK):
        pytest.skip("no writable /var/tmp to try an escape into")
    return Path(tempfile.mkdtemp(prefix="ea-escape-", dir=base))


def test_codex_preflight_advice_followed_keeps_the_agent_confined(world: World) -> None:
    # Regression: the preflight suggested --sandbox bwrap plus sandbox_mode=
    # "danger-full-access"; the harness's bwrap never wraps codex, and the agent wrote
    # a file outside its workspace.  Follow every suggestion it prints now.
    _chome, env = codex_world(world, "codex-advice")
    env["TMPDIR"] = str(world.tmp)  # CODEX_HOME below it: the preflight refuses
    marker = world.model.script("codex-advice", [Say("never reached")])
    refused = search(world, "codex-advice", "codex", env, marker, "--policy", "single",
                     "--turns", "1", "--sandbox", "bwrap")  # fmt: skip
    assert refused.proc.returncode == 4
    advice = refused.proc.stderr
    assert "CODEX_HOME outside $TMPDIR" in advice
    assert not any(flag in advice for flag in _UNSANDBOXING), advice
    assert "--agent-args" not in advice  # the only suggestion is where CODEX_HOME lives

    # Follow it: CODEX_HOME outside $TMPDIR.  The agent tries to write outside its
    # workspace, then does the task.
    escape = _outside_every_writable_root()
    try:
        target = escape / "escaped.txt"
        env = codex_search_env(world, "codex-advice-followed")
        marker = world.model.script(
            "codex-advice-followed",
            [Shell(f"echo escaped > {target}"), Shell(INCREMENT), Say("done")],
        )
        run_ = search(world, "codex-advice-followed", "codex", env, marker, "--policy",
                      "single", "--turns", "1", "--sandbox", "bwrap")  # fmt: skip
        assert run_.proc.returncode == 0, run_.proc.stderr
        (row,) = run_.rows
        assert row["score"] == 2 and row["denied"] == 1  # the escape was refused ...
        assert not target.exists()  # ... and nothing landed outside the workspace
        # The old advice, for contrast: the same agent, unsandboxed, escapes.
        marker = world.model.script(
            "codex-old-advice", [Shell(f"echo escaped > {target}"), Say("done")]
        )
        old = search(world, "codex-old-advice", "codex", codex_search_env(world, "codex-old"),
                     marker, "--policy", "single", "--turns", "1", "--sandbox", "bwrap",
                     "--agent-args", '-c sandbox_mode="danger-full-access"')  # fmt: skip
        assert old.proc.returncode == 0, old.proc.stderr
        assert target.read_text() == "escaped\n"  # it wrote outside its workspace
    finally:
        shutil.rmtree(escape, ignore_errors=True)


def test_claude_denial_advice_followed_runs_the_code_but_cannot_write_outside(
    world: World,
) -> None:
    # A denied Bash prints the flags that allow it; follow them exactly.  They keep
    # Bash inside Claude Code's own sandbox (bubblewrap): the harness's bwrap does not
    # wrap claude, so a bare --allowedTools Bash (the old advice) ran it unconfined.
    assert shutil.which("socat"), "socat is not installed (Claude Code's sandbox needs it)"
    _home, env = claude_world(world, "claude-advice")
    marker = world.model.script("claude-advice", [Shell(INCREMENT), Say("could not")])
    denied = search(world, "claude-advice", "claude", env, marker, "--policy", "single",
                    "--turns", "1")  # fmt: skip
    (row,) = denied.rows
    printed = re.search(r'--agent-args ("(?:[^"\\]|\\.)*")', row["error"])
    assert printed, row["error"]
    (advice,) = shlex.split(printed.group(1))
    assert not any(flag in advice for flag in _UNSANDBOXING) and "allowedTools" not in advice
    escape = _outside_every_writable_root()
    try:
        target = escape / "escaped.txt"
        _home, env = claude_world(world, "claude-sandboxed")
        # Claude's sandbox mounts its own /dev: workspaces on the suite's /dev/shm vanish.
        env["EA_WORKSPACES"] = str(world.dir("claude-sandboxed-workspaces"))
        marker = world.model.script(
            "claude-sandboxed",
            [Shell(f"echo escaped > {target}"), Shell(INCREMENT), Say("done")],
        )
        run_ = search(world, "claude-sandboxed", "claude", env, marker, "--policy", "single",
                      "--turns", "1", "--agent-args", advice)  # fmt: skip
        (row,) = run_.rows
        assert row["score"] == 2, (row, run_.proc.stderr)  # Bash ran: the code ran
        assert not target.exists()  # and could not write outside its workspace
    finally:
        shutil.rmtree(escape, ignore_errors=True)


def test_claude_turn_that_improved_despite_a_denied_bash_is_a_result(world: World) -> None:
    # Regression: a Claude turn whose only problem was one denied Bash call improved
    # the score, yet the run exited 4 ("every turn failed"), and report.md's failed
    # column read 0 while summary.json said 1.
    _home, env = claude_world(world, "claude-half-denied")
    marker = world.model.script(
        "claude-half-denied", [WriteFile("value.txt", "5"), Shell(INCREMENT), Say("wrote 5")]
    )
    run_ = search(world, "claude-half-denied", "claude", env, marker, "--policy", "single",
                  "--turns", "1")  # fmt: skip
    assert run_.proc.returncode == 0, run_.proc.stderr
    (row,) = run_.rows
    assert (row["score"], row["improved"], row["denied"]) == (5, True, 1)
    assert row["error"].startswith("claude denied 1 tool call(s): Bash;")  # flagged
    s = run_.summary
    assert (s["failed_turns"], s["improved_flagged"], s["denied_calls"]) == (1, 1, 1)
    run_dir = Path(s["run_dir"])
    report = run([str(BIN / "evolving-agent"), "search", "report", str(run_dir)], run_dir, env)
    assert report.returncode == 0, report.stderr
    md = (run_dir / "report.md").read_text()
    # round | turns | empty | failed | unscored | denied | failed commands | ...
    assert "| 1 | 1 | 0 | 1 | 0 | 1 | 0 | 1 | 5 |" in md
    # agent | turns | improved | improved, flagged | failed | unscored | denied | failed commands
    assert "| 1 | 1 | 1 | 1 | 1 | 0 | 1 | 0 |" in md
