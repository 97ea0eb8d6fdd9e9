"""One agent turn as a plain function (``search/turn.py``): retries by one rule, every
attempt from the same base, and the work committed - on a real git workspace with an
in-process agent."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.search.agents.base import TurnRequest, TurnResult
from evolving_agent.search.turn import TurnJob, execute_turn, fresh_attempt, retry_delay
from tests.helpers.turn_agents import Scripted, git_in, git_workspace

RATE_LIMIT = "HTTP 429: rate limit exceeded"


def _job(ws: Path, base: str, *, retries: int = 0, new: bool = True) -> TurnJob:
    request = TurnRequest(
        workspace=ws,
        prompt="p",
        session_id="s-1",
        new_session=new,
        round=1,
        agent=1,
        turn=1,
        timeout=60,
    )
    return TurnJob(request=request, base=base, message="turn 1", retries=retries, retry_backoff=0.5)


@given(st.integers(0, 5), st.integers(1, 8), st.floats(0, 10))
def test_a_transient_error_waits_doubling_until_the_retries_are_spent(
    retries: int, attempts: int, backoff: float
) -> None:
    job = TurnJob(request=None, base="b", message="m", retries=retries, retry_backoff=backoff)  # type: ignore[arg-type]
    delay = retry_delay(job, attempts, RATE_LIMIT)
    assert delay == (backoff * 2 ** (attempts - 1) if attempts <= retries else None)
    assert retry_delay(job, attempts, None) is None
    assert retry_delay(job, attempts, "SyntaxError in solve.py") is None  # not transient


def test_a_new_session_is_retried_as_a_new_session_and_a_continued_one_continues(
    tmp_path: Path,
) -> None:
    job = _job(tmp_path, "b")
    assert fresh_attempt(job.request).session_id != "s-1"
    cont = _job(tmp_path, "b", new=False).request
    assert fresh_attempt(cont) is cont


def test_every_attempt_starts_from_the_base_and_the_last_ones_work_is_committed(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    base = git_workspace(ws)
    agent = Scripted([RATE_LIMIT, RATE_LIMIT], value="3\n")
    waits: list[float] = []
    outcome = execute_turn(agent, _job(ws, base, retries=2), sleep=waits.append)
    assert outcome.attempts == 3 and outcome.retried == (RATE_LIMIT, RATE_LIMIT)
    assert waits == [0.5, 1.0]
    assert [text for _sid, text in agent.seen] == ["1\n", "1\n", "1\n"]  # reset each time
    assert len({sid for sid, _text in agent.seen}) == 3  # a new session each attempt
    assert outcome.result.error is None and not outcome.change.empty
    assert git_in(ws, "show", f"{outcome.change.commit}:value.txt") == "3"
    assert git_in(ws, "rev-parse", f"{outcome.change.commit}^") == base


def test_a_failure_past_the_retries_is_the_turns_error_and_its_edit_still_commits(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    base = git_workspace(ws)
    outcome = execute_turn(
        Scripted([RATE_LIMIT, RATE_LIMIT]), _job(ws, base, retries=1), sleep=lambda _s: None
    )
    assert outcome.attempts == 2 and outcome.result.error == RATE_LIMIT
    assert git_in(ws, "show", f"{outcome.change.commit}:value.txt") == "half-done"


def test_an_agent_that_replaced_its_repository_fails_the_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    base = git_workspace(ws)

    class Vandal(Scripted):
        def run_turn(self, *, request: TurnRequest) -> TurnResult:
            subprocess.run(["rm", "-rf", str(request.workspace / ".git")], check=True)
            (request.workspace / ".git").write_text("gitdir: /elsewhere\n")
            return TurnResult(session_id=request.session_id)

    outcome = execute_turn(Vandal([]), _job(ws, base))
    assert outcome.result.error == "the agent broke its workspace: its .git was replaced"
    assert outcome.change.commit == base and outcome.change.empty
