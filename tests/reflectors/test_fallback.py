"""Issue 11, hole 13: a reflector that fails is visible, and the openai client is sane.

- The result line names the fallback and its cause; ``run --strict`` exits 4; the
  scheduler records ``last_error`` and ``schedule show`` prints it.
- The ``openai`` reflector against a real HTTP server on 127.0.0.1 (stdlib
  ``http.server`` in a thread): 429 with ``Retry-After`` is waited out, 401 and a
  malformed body fall back at once without telling the model its answer was refused,
  JSON mode is asked for and dropped when the server refuses it, and the key only goes
  where the configuration pairs it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from freezegun import freeze_time

from evolving_agent.cli import cli
from evolving_agent.jobs.scheduler import JobScheduler, load_state
from evolving_agent.jobs.settings import ReflectorSettings
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.openai import key_for, origin
from tests.helpers import reflector_fakes as fakes
from tests.helpers import root_with_friction, run_proc, set_reflector
from tests.helpers.chat_server import ChatServer, Reply, error
from tests.helpers.chat_server import completion as chat_completion

DAY = "2026-11-02"


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return root_with_friction(tmp_path / "memory", DAY)


# -- the command reflector's failures ------------------------------------------------------


def test_missing_binary_is_named_on_the_result_line_and_not_retried(root: MemoryRoot) -> None:
    res = CliRunner().invoke(
        cli, ["run", "nightly", "--date", DAY, "--reflector-cmd", "no-such-model-cli -p"]
    )
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == (
        f"nightly {DAY}: done (reflector: rules; command reflector failed "
        "(no-such-model-cli: command not found); fell back to rules)"
    )
    [fb] = [r for r in EvidenceLog(root).iter_all() if r.kind == "reflector-fallback"]
    assert fb.data["requested"] == "command" and "command not found" in fb.text


def test_strict_exits_4_when_the_requested_reflector_was_not_used(root: MemoryRoot) -> None:
    proc = run_proc(
        "run", "nightly", "--date", DAY, "--strict", "--reflector-cmd", "no-such-model-cli"
    )
    assert proc.returncode == 4
    assert proc.stdout.decode().startswith(f"nightly {DAY}: done (reflector: rules; ")
    assert proc.stderr.decode() == (
        "error: --strict: nightly did not use the command reflector: command reflector "
        "failed (no-such-model-cli: command not found); fell back to rules\n"
    )
    # The job itself ran (with rules): --strict reports, it does not undo.
    assert (root.today / "bias.md").exists()
    # --json prints the result and still exits 4.
    again = run_proc("run", "nightly", "--date", DAY, "--strict", "--json")
    assert again.returncode == 4
    assert json.loads(again.stdout)["plan"]["requested"] == "command"


def test_scheduler_records_the_fallback_and_show_prints_it(root: MemoryRoot) -> None:
    set_reflector(root, "\n  name: command\n  command: no-such-model-cli -p\n")
    text = root.schedule_file.read_text().replace("timezone: local", "timezone: UTC")
    root.schedule_file.write_text(text)
    with freeze_time("2026-11-03 03:00:05"):
        JobScheduler([root]).fire(root, "nightly")
    state = load_state(root)
    assert state is not None
    cause = "command reflector failed (no-such-model-cli: command not found); fell back to rules"
    assert state.last_error == {"nightly": cause}
    assert state.last_fallback == {"nightly": cause}
    shown = run_proc("schedule", "show").stdout.decode().splitlines()
    i = next(n for n, line in enumerate(shown) if "  nightly " in line)
    assert "last 2026-11-03 03:00" in shown[i]
    assert shown[i + 1] == f"  last run fell back: {cause}"
    data = json.loads(run_proc("schedule", "show", "--json").stdout)
    assert data[0]["last_error"] == cause and data[1]["last_error"] is None


# -- the openai reflector against a real local server ---------------------------------------


def completion(body: dict[str, Any]) -> Reply:
    return chat_completion(body["model"], fakes.answer(body["messages"][-1]["content"], "ok"))


class Server(ChatServer):
    """Answers from a script of replies (the last one repeats)."""

    def __init__(self, script: list[Callable[[dict[str, Any]], Reply]]) -> None:
        super().__init__(lambda body, n: script[min(n, len(script) - 1)](body))


def use_server(root: MemoryRoot, server: Server, extra: str = "") -> None:
    set_reflector(
        root,
        f"\n  name: openai\n  base_url: {server.base_url}\n  model: test-model\n"
        f"  timeout: 10\n  retries: 2\n{extra}",
    )


def nightly(
    *extra: str, env: dict[str, str] | None = None, day: str = DAY, real: bool = False
) -> tuple[int, list[str], str]:
    """``run nightly`` as a real process (``real``) or in-process (faster: one import)."""
    if real:
        proc = run_proc("run", "nightly", "--date", day, *extra, env=env)
        return proc.returncode, proc.stdout.decode().splitlines(), proc.stderr.decode()
    res = CliRunner().invoke(cli, ["run", "nightly", "--date", day, *extra], env=env)
    return res.exit_code, res.stdout.splitlines(), res.stderr


def test_429_is_retried_after_the_servers_retry_after(root: MemoryRoot) -> None:
    with Server([lambda b: error(429, "slow down", **{"Retry-After": "1"}), completion]) as srv:
        use_server(root, srv)
        code, lines, err = nightly("--strict", real=True)
    assert code == 0, err
    assert lines[0] == f"nightly {DAY}: done (reflector: openai)"
    assert len(srv.requests) == 2
    # The client waited as the server asked (the old urllib code retried after 20 ms).
    assert srv.times[1] - srv.times[0] >= 0.9
    assert srv.requests[0]["response_format"] == {"type": "json_object"}


def test_401_falls_back_at_once_and_the_model_is_not_told_its_answer_was_refused(
    root: MemoryRoot,
) -> None:
    with Server([lambda b: error(401, "Incorrect API key provided")]) as srv:
        use_server(root, srv)
        code, lines, err = nightly()
    assert code == 0, err
    assert lines[0] == (
        f"nightly {DAY}: done (reflector: rules; openai reflector failed (HTTP 401 from "
        f"{srv.base_url}: Incorrect API key provided); fell back to rules)"
    )
    assert len(srv.requests) == 1  # 401 is not retried, and no "answer again" round
    assert all("refused" not in m["content"] for m in srv.requests[0]["messages"])


def test_a_malformed_body_is_a_transport_failure_not_a_bad_answer(root: MemoryRoot) -> None:
    def garbage(body: dict[str, Any]) -> Reply:
        return 200, {"Content-Type": "application/json"}, b'{"choices": [ nope'

    with Server([garbage]) as srv:
        use_server(root, srv)
        code, lines, err = nightly()
    assert code == 0, err
    assert lines[0].startswith(f"nightly {DAY}: done (reflector: rules; openai reflector failed (")
    assert "not a chat completion" in lines[0]
    assert len(srv.requests) == 1


def test_json_mode_is_dropped_when_the_server_refuses_it(root: MemoryRoot) -> None:
    def picky(body: dict[str, Any]) -> Reply:
        if "response_format" in body:
            return error(400, "response_format is not supported by this server")
        return completion(body)

    with Server([picky]) as srv:
        use_server(root, srv)
        code, lines, err = nightly("--strict")
    assert code == 0, err
    assert lines[0] == f"nightly {DAY}: done (reflector: openai)"
    assert ["response_format" in b for b in srv.requests] == [True, False]


def test_openai_api_key_is_never_sent_to_a_local_base_url(root: MemoryRoot) -> None:
    with Server([completion]) as srv:
        use_server(root, srv, "  api_key_env: OPENAI_API_KEY\n")
        code, _lines, err = nightly(env={"OPENAI_API_KEY": "sk-real-openai-key"}, real=True)
    assert code == 0, err
    assert "authorization" not in srv.headers[0]
    assert all("sk-real-openai-key" not in v for v in srv.headers[0].values())
    assert "openai-organization" not in srv.headers[0]


def test_a_key_paired_with_the_base_url_is_sent_there_only(root: MemoryRoot) -> None:
    with Server([completion]) as srv:
        use_server(root, srv, f"  api_key_env: LOCAL_KEY\n  api_key_for: {srv.base_url}\n")
        code, _lines, err = nightly(env={"LOCAL_KEY": "local-secret"})
    assert code == 0, err
    assert srv.headers[0]["authorization"] == "Bearer local-secret"

    # Someone points base_url elsewhere: the key stays home, and a 401 says why.
    with Server([lambda b: error(401, "missing key")]) as other:
        use_server(root, other, "  api_key_env: LOCAL_KEY\n  api_key_for: http://127.0.0.1:1/v1\n")
        code, lines, err = nightly(env={"LOCAL_KEY": "local-secret"}, day="2026-11-03")
    assert code == 0, err
    assert "authorization" not in other.headers[0]
    assert "LOCAL_KEY was not sent to http://127.0.0.1:" in lines[0]


@pytest.mark.parametrize(
    ("env_name", "base_url", "paired", "sent"),
    [
        ("OPENAI_API_KEY", "https://api.openai.com/v1", None, True),
        ("OPENAI_API_KEY", "https://API.openai.com:443/v1/", None, True),
        ("OPENAI_API_KEY", "http://api.openai.com/v1", None, False),  # not over plain http
        ("OPENAI_API_KEY", "http://127.0.0.1:11434/v1", None, False),
        ("OPENAI_API_KEY", "https://api.openai.com.evil.example/v1", None, False),
        ("OPENAI_API_KEY", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000", True),
        ("MY_KEY", "http://gpu-box:8000/v1", None, False),
        ("MY_KEY", "http://gpu-box:8000/v1", "http://gpu-box:8000/anything", True),
        ("MY_KEY", "http://gpu-box:8001/v1", "http://gpu-box:8000", False),
    ],
)
def test_key_rule(env_name: str, base_url: str, paired: str | None, sent: bool) -> None:
    settings = ReflectorSettings(
        name="openai", base_url=base_url, api_key_env=env_name, api_key_for=paired
    )
    key, withheld = key_for(settings, {env_name: "secret"})
    assert (key == "secret") is sent
    assert (withheld is None) is sent
    assert key_for(settings, {}) == (None, None)  # no key set: nothing to send or withhold


def test_origin() -> None:
    assert origin("HTTPS://Api.OpenAI.com:443/v1") == "https://api.openai.com"
    assert origin("http://[::1]:8000/v1") == "http://[::1]:8000"
    assert origin("http://localhost/v1") == "http://localhost"
