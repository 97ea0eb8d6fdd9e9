"""The real ``gemini`` (Gemini CLI) and ``opencode`` CLIs, and every client's reflector
run clean and failing with its own words — all against the scripted model server.

As in ``test_real_clients.py`` (whose module fixture and helpers this reuses): each
set-up is used exactly as ``integrations show`` prints it, each search run is the real
``evolving-agent search run`` with the real CLI as its agent, each reflector is the real
``run nightly --reflector NAME``; the CLIs are the pinned versions
``.ci/tools.d/node-clis.sh`` installs, and see only the server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import reflector_fakes as fakes
from tests.helpers.scripted_model import (
    Answer,
    CallTool,
    Fail,
    Say,
    Shell,
    gemini_env,
    last_prompt,
    opencode_env,
)
from tests.integrations.test_real_clients import (
    BIAS,
    DAY,
    INCREMENT,
    TOOLS,
    World,
    claude_world,
    codex_world,
    first_requests,
    frictions,
    nightly,
    reflector_root,
    run,
    search,
    setup,
    verify,
    workspace,
    world,
)

pytestmark = pytest.mark.slow
__all__ = ["world"]  # the module fixture, shared with test_real_clients.py


@pytest.fixture(scope="module", autouse=True)
def _installed() -> None:
    for program in ("gemini", "opencode"):
        assert shutil.which(program), f"{program} is not installed (.ci/tools.sh installs it)"


def gemini_world(world: World, name: str, settings: dict[str, Any] | None = None) -> dict[str, str]:
    env = {**world.env, **gemini_env(world.dir(f"{name}-home"), world.model.url, settings)}
    env["PATH"] = world.env["PATH"]
    return env


def opencode_world(world: World, name: str, extra: dict[str, Any] | None = None) -> dict[str, str]:
    env = {**world.env, **opencode_env(world.dir(f"{name}-home"), world.model.url, extra)}
    env["PATH"] = world.env["PATH"]
    return env


def model_calls(world: World, script: str, api: str) -> list[Any]:
    """The script's requests, without OpenCode's side call that names the session."""
    return [
        r
        for r in world.model.requests(script, api=api)
        if "You are a title generator" not in json.dumps(r.body.get("system"))
    ]


def events(proc: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


# -- the set-ups ------------------------------------------------------------------------------


def test_gemini_settings_as_printed_boot_at_start_tools_allowed_friction_lands(
    world: World,
) -> None:
    printed = json.loads(setup("gemini", "gemini-settings", world.root).text)
    # Absolute paths everywhere: the set-up works from a shell whose PATH lacks it.
    server = printed["mcpServers"]["evolving-agent"]
    assert Path(server["command"]).is_absolute()
    hook = printed["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert Path(shlex.split(hook)[0]).is_absolute()
    env = gemini_world(world, "gemini-setup", printed)
    env["PATH"] = "/usr/bin:/bin"  # no evolving-agent on it
    ws = workspace(world, "gemini-setup-ws")
    text = "gemini: listed four options where one was asked for"
    marker = world.model.script("gemini-setup", [CallTool("friction", {"text": text}), Say("ok")])

    proc = run(["gemini", "--output-format", "json", "--skip-trust", f"--prompt=go {marker}"],
               ws, env)  # fmt: skip

    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout[proc.stdout.index("{") :])["response"] == "ok"
    first, _second = world.model.requests("gemini-setup", api="gemini")
    assert BIAS in first.text()  # the SessionStart hook's boot context reached the model
    assert {n.removeprefix("mcp_evolving-agent_") for n in first.tool_names()} >= TOOLS
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"
    assert verify(world).returncode == 0


def test_gemini_without_the_trust_rule_refuses_the_memory_tools(world: World) -> None:
    printed = json.loads(setup("gemini", "gemini-settings", world.root).text)
    del printed["mcpServers"]["evolving-agent"]["trust"]
    env = gemini_world(world, "gemini-untrusted", printed)
    ws = workspace(world, "gemini-untrusted-ws")
    text = "gemini: this friction is refused"
    marker = world.model.script("gemini-untr", [CallTool("friction", {"text": text}), Say("ok")])

    run(["gemini", "--output-format", "json", "--skip-trust", f"--prompt=go {marker}"], ws, env)

    assert frictions(world.root, text) == []


def test_opencode_config_as_printed_gives_the_tools_and_agents_md_reaches_the_model(
    world: World,
) -> None:
    printed = json.loads(setup("opencode", "opencode-config", world.root).text)
    assert Path(printed["mcp"]["evolving-agent"]["command"][0]).is_absolute()
    env = opencode_world(world, "opencode-setup", {k: printed[k] for k in ("mcp", "permission")})
    env["PATH"] = "/usr/bin:/bin"
    home = Path(env["HOME"])
    agents = setup("opencode", "opencode-agents", world.root).text
    (home / ".config" / "opencode" / "AGENTS.md").write_text(agents + "\n")
    ws = workspace(world, "opencode-setup-ws")
    text = "opencode: answered with a menu"
    marker = world.model.script(
        "opencode-setup", [CallTool("boot"), CallTool("friction", {"text": text}), Say("done")]
    )

    proc = run(["opencode", "run", "--format", "json", "--", f"go {marker}"], ws, env)

    assert proc.returncode == 0, proc.stderr
    # (OpenCode's side call for a session title offers no tools.)
    first, second, _third = [
        r for r in world.model.requests("opencode-setup", api="messages") if r.tool_names()
    ]
    assert {n.removeprefix("evolving-agent_") for n in first.tool_names()} >= TOOLS
    assert "call the evolving-agent `boot` tool" in first.text()  # AGENTS.md arrived
    assert BIAS in second.text()  # the boot tool's answer went back to the model
    used = [e["part"] for e in events(proc) if e["type"] == "tool_use"]
    assert [(p["tool"], p["state"]["status"]) for p in used] == [
        ("evolving-agent_boot", "completed"),
        ("evolving-agent_friction", "completed"),
    ]
    (rec,) = frictions(world.root, text)
    assert rec.actor == "session"


# -- search runs ------------------------------------------------------------------------------


def test_gemini_search_edits_scores_resumes_and_forgets(world: World) -> None:
    env = gemini_world(world, "gemini-search")
    marker = world.model.script("gemini-search", [Shell(INCREMENT), Say("bigger now")])

    yolo = "--approval-mode yolo"
    run_ = search(world, "gemini-search", "gemini", env, marker, "--policy", "forget",
                  "--rounds", "2", "--turns", "4", "--agent-args", yolo, timeout=600)  # fmt: skip

    assert run_.proc.returncode == 0, run_.proc.stderr
    assert [r["score"] for r in run_.rows] == [2, 3, 4, 5]
    assert all(r["error"] is None and r["denied"] == 0 for r in run_.rows)
    s = [r["session"] for r in run_.rows]
    assert s[0] == s[1] != s[2] == s[3]  # resumed within a round, fresh after the forget
    firsts = first_requests(world, "gemini-search", "gemini")
    assert "bigger now" in firsts[1].text() and "bigger now" not in firsts[2].text()
    # Two model calls a turn, 100 in / 10 out each (the call's own stats, not the session's).
    assert [(r["input_tokens"], r["output_tokens"]) for r in run_.rows] == [(200, 20)] * 4
    assert run_.rows[0]["cost_usd"] == pytest.approx((200 * 1.25 + 20 * 10.0) / 1e6)


def test_gemini_search_with_the_shell_refused_fails_the_turn_and_names_it(world: World) -> None:
    env = gemini_world(world, "gemini-denied")
    marker = world.model.script("gemini-denied", [Shell(INCREMENT), Say("could not")])

    run_ = search(world, "gemini-denied", "gemini", env, marker, "--policy", "single",
                  "--turns", "1")  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert row["denied"] == 1 and row["score"] == 1
    assert row["error"].startswith("gemini refused 1 tool call(s): run_shell_command;")
    assert "--approval-mode yolo" in row["error"]


def test_gemini_stopped_while_retrying_a_429_is_retried_like_the_429(world: World) -> None:
    env = gemini_world(world, "gemini-429")
    marker = world.model.script("gemini-429", [Fail(429, "Resource has been exhausted", 0)])

    # Each attempt is stopped at the turn timeout, so it is the test's wall time twice.  It
    # need only outlast Gemini CLI's start and first failed attempt: on a 2-core machine
    # at a load of 10 the first 429 came 5-7 s after the start (one process: gemini_env
    # stops Gemini CLI's relaunch; 8-12 s at a load of 9 with it); 15 s leaves twice that.
    run_ = search(world, "gemini-429", "gemini", env, marker, "--policy", "single", "--turns",
                  "1", "--retries", "1", "--turn-timeout", "15", timeout=400)  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert row["attempts"] == 2  # a timeout, but retried: Gemini CLI was retrying a 429
    assert row["error"] == (
        "turn timed out after 15s (gemini); gemini was retrying an API error (HTTP 429)"
    )
    assert row["retried"] == [row["error"]]  # the first attempt was stopped the same way


def test_opencode_search_edits_scores_resumes_forgets_and_counts_cost(world: World) -> None:
    env = opencode_world(world, "opencode-search")
    marker = world.model.script("opencode-search", [Shell(INCREMENT), Say("bigger now")])

    run_ = search(world, "opencode-search", "opencode", env, marker, "--policy", "forget",
                  "--rounds", "2", "--turns", "4", timeout=600)  # fmt: skip

    assert run_.proc.returncode == 0, run_.proc.stderr
    assert [r["score"] for r in run_.rows] == [2, 3, 4, 5]
    assert all(r["error"] is None and r["denied"] == 0 for r in run_.rows)
    assert all(r["failed_commands"] == 0 for r in run_.rows)
    s = [r["session"] for r in run_.rows]
    assert s[0] == s[1] != s[2] == s[3] and s[0].startswith("ses_")
    firsts = [r for r in first_requests(world, "opencode-search", "messages") if r.tool_names()]
    assert "bigger now" in firsts[1].text() and "bigger now" not in firsts[2].text()
    # OpenCode's own dollars: 2 calls × (100 × $1 + 10 × $10) / 1M.
    assert [(r["input_tokens"], r["output_tokens"]) for r in run_.rows] == [(200, 20)] * 4
    assert run_.rows[0]["cost_usd"] == pytest.approx(0.0004)


def test_opencode_search_with_bash_denied_fails_the_turn_and_names_it(world: World) -> None:
    env = opencode_world(world, "opencode-denied", {"permission": {"bash": "deny"}})
    marker = world.model.script("opencode-denied", [Shell(INCREMENT), Say("could not")])

    run_ = search(world, "opencode-denied", "opencode", env, marker, "--policy", "single",
                  "--turns", "1")  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert row["denied"] == 1 and row["score"] == 1
    assert row["error"].startswith("opencode refused 1 tool call(s): bash;")


def test_opencode_auth_error_is_named_and_not_retried(world: World) -> None:
    env = opencode_world(world, "opencode-401")
    marker = world.model.script("opencode-401", [Fail(401, "invalid x-api-key")])

    run_ = search(world, "opencode-401", "opencode", env, marker, "--policy", "single",
                  "--turns", "1", "--retries", "2")  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert row["error"] == "opencode reported APIError (HTTP 401): invalid x-api-key"
    assert row["attempts"] == 1  # an auth error is not transient


def test_codex_rate_limit_is_named_by_codex_and_retried(world: World) -> None:
    # Regression: the exit status won over codex's own turn.failed ("codex exited 1:
    # Reading additional input from stdin..."), and the 429 was never retried.
    _chome, env = codex_world(world, "codex-429")
    env["TMPDIR"] = str(world.dir("codex-429-tmpdir"))
    env["EA_WORKSPACES"] = str(world.dir("codex-429-ws"))
    marker = world.model.script("codex-429", [Fail(429, "Rate limit reached", retry_after=0)])

    run_ = search(world, "codex-429", "codex", env, marker, "--policy", "single",
                  "--turns", "1", "--retries", "1")  # fmt: skip

    assert run_.proc.returncode == 4
    (row,) = run_.rows
    assert row["attempts"] == 2
    assert row["error"].startswith("codex turn failed: ") and "429" in row["error"]
    assert "Reading additional input" not in row["error"]


# -- reflectors: clean, valid, and failing with the CLI's own words ---------------------------


def reflector_env(world: World, client: str, name: str, root_for_hooks: Path) -> dict[str, str]:
    """A client home with everything the user's own set-up would add: the memory server,
    the SessionStart hook (boot context of ``root_for_hooks``, whose bias is BIAS) and
    instructions — none of which may reach a reflector."""
    if client == "claude":
        home, env = claude_world(world, name)
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(
            setup("claude", "claude-settings", root_for_hooks).text
        )
        (home / ".claude" / "CLAUDE.md").write_text(f"Always mention {BIAS}\n")
        add = run(shlex.split(setup("claude", "claude-mcp-user", root_for_hooks).text), home, env)
        assert add.returncode == 0, add.stderr
        return env
    if client == "codex":
        chome, env = codex_world(world, name, setup("codex", "codex-config", root_for_hooks).text)
        (chome / "AGENTS.md").write_text(f"Always mention {BIAS}\n")
        return env
    if client == "gemini":
        env = gemini_world(
            world, name, json.loads(setup("gemini", "gemini-settings", root_for_hooks).text)
        )
        (Path(env["HOME"]) / ".gemini" / "GEMINI.md").write_text(f"Always mention {BIAS}\n")
        return env
    printed = json.loads(setup("opencode", "opencode-config", root_for_hooks).text)
    env = opencode_world(world, name, {k: printed[k] for k in ("mcp", "permission")})
    agents = Path(env["HOME"]) / ".config" / "opencode" / "AGENTS.md"
    agents.write_text(f"Always mention {BIAS}\n")
    return env


API = {"claude": "messages", "codex": "responses", "gemini": "gemini", "opencode": "messages"}
CLIENTS = ("claude", "codex", "gemini", "opencode")


@pytest.mark.parametrize("client", CLIENTS)
def test_reflector_runs_clean_of_the_users_hooks_servers_and_instructions(
    world: World, tmp_path: Path, client: str
) -> None:
    name = f"refl-clean-{client}"
    marker = world.model.script(name, [Answer(fakes.answer)])
    root = reflector_root(tmp_path, marker)
    env = reflector_env(world, client, name, world.root)

    proc = nightly(root, env, client)

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"nightly {DAY}: done (reflector: {client})"
    (asked,) = model_calls(world, name, API[client])
    if client == "opencode":  # and no side call to name the session
        assert len(world.model.requests(name, api="messages")) == 1
    # The hook's boot context (world.root's bias) and the user's instructions are absent.
    assert BIAS not in asked.text()
    # No MCP tool at all; Claude, Gemini CLI and OpenCode offer no tool whatever.
    assert not [n for n in asked.tool_names() if "evolving" in n or n.startswith("mcp")]
    if client != "codex":
        assert asked.tool_names() == []
    expected = json.loads(fakes.answer(last_prompt(asked.api, asked.body)))["bias"]
    assert (root.today / "bias.md").read_text().strip() == expected.strip()


@pytest.mark.parametrize("client", ["gemini", "opencode"])
def test_new_reflector_presets_retry_an_invalid_answer_then_fall_back_visibly(
    world: World, tmp_path: Path, client: str
) -> None:
    name = f"refl-bad-{client}"
    marker = world.model.script(name, [Say("Sure! The day went well.")])
    root = reflector_root(tmp_path, marker)
    env = gemini_world(world, name) if client == "gemini" else opencode_world(world, name)

    proc = nightly(root, env, client)

    assert proc.returncode == 0, proc.stderr
    status = proc.stdout.splitlines()[0]
    assert status.startswith(f"nightly {DAY}: done (reflector: rules; {client} reflector output ")
    assert "was invalid twice" in status
    first, retry = model_calls(world, name, API[client])
    assert "Your previous answer was refused" in last_prompt(retry.api, retry.body)
    assert "went well" not in (root.today / "bias.md").read_text()


FAILURES = {
    # client: (the scripted failure, what the nightly's status line must quote)
    "claude": (Fail(401, "invalid x-api-key"), "claude: Invalid API key"),
    "codex": (Fail(401, "Incorrect API key provided"), "codex: "),
    "gemini": (Fail(400, "API key not valid. Please pass a valid API key."),
               "gemini: HTTP 400: API key not valid. Please pass a valid API key."),
    "opencode": (Fail(401, "invalid x-api-key"),
                 "opencode: APIError (HTTP 401): invalid x-api-key"),
}  # fmt: skip


@pytest.mark.parametrize("client", CLIENTS)
def test_reflector_auth_failure_is_named_as_the_cli_names_it(
    world: World, tmp_path: Path, client: str
) -> None:
    name = f"refl-auth-{client}"
    step, quoted = FAILURES[client]
    marker = world.model.script(name, [step])
    root = reflector_root(tmp_path, marker)
    env = reflector_env(world, client, name, world.root)

    proc = nightly(root, env, client)

    assert proc.returncode == 0, proc.stderr
    status = proc.stdout.splitlines()[0]
    assert status.startswith(f"nightly {DAY}: done (reflector: rules; ")
    assert quoted in status, status
    assert "exit 1)" not in status.split(quoted)[0]  # the reason, not only an exit status


@pytest.mark.parametrize("client", CLIENTS)
def test_reflector_persistent_429_is_named_as_a_429_within_bounded_retries(
    world: World, tmp_path: Path, client: str
) -> None:
    # Regression: the Claude reflector under a persistent 429 said "timed out after 90s"
    # after 8 requests.
    name = f"refl-429-{client}"
    marker = world.model.script(name, [Fail(429, "rate limited, slow down", retry_after=0)])
    root = reflector_root(tmp_path, marker)
    env = reflector_env(world, client, name, world.root)
    env.pop("CLAUDE_CODE_MAX_RETRIES", None)  # the preset's own cap applies

    proc = nightly(root, env, client)

    assert proc.returncode == 0, proc.stderr
    status = proc.stdout.splitlines()[0]
    assert "429" in status and "timed out" not in status, status
    # Claude's retries capped at 2, Gemini CLI's attempts at 3, Codex's provider at 0 here;
    # OpenCode's own retries are its own (no setting bounds them), ended before the timeout.
    bound = {"claude": 3, "codex": 1, "gemini": 3}
    if client in bound:
        assert len(model_calls(world, name, API[client])) <= bound[client]


# -- the adapters' flags against the real --help -----------------------------------------------


def test_gemini_and_opencode_flags_the_adapters_pass_exist() -> None:
    from evolving_agent.search.agents import gemini as gemini_agent

    gemini_help = run(["gemini", "--help"], Path.cwd(), dict(os.environ)).stdout
    used = [*gemini_agent.OUTPUT_ARGS, *gemini_agent.DEFAULT_ARGS, "--session-id", "--resume",
            "--prompt", "--policy", "--approval-mode"]  # fmt: skip
    for flag in (a for a in used if a.startswith("-")):
        assert re.search(rf"(^|\s){re.escape(flag)}\b", gemini_help), flag
    assert '"stream-json"' in gemini_help and '"auto_edit"' in gemini_help
    shown = run(["opencode", "run", "--help"], Path.cwd(), dict(os.environ))
    run_help = shown.stdout + shown.stderr  # yargs prints help on stderr
    for flag in ("--format", "--session", "--dir", "--pure"):
        assert re.search(rf"(^|\s){flag}\b", run_help), flag
