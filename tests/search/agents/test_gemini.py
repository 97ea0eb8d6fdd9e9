"""Gemini CLI's output read as the search agent reads it (``search/agents/gemini.py``): its
errors named in one line, its retries, its refusals.  Runs of a fake gemini CLI are in
tests/search/test_agent_reports_gemini_opencode.py."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.agents.gemini import (
    DEFAULT_ARGS,
    GeminiAgent,
    denied_error,
    json_lines,
    last_retry,
    obj,
    result_error,
    stream_error,
)


def test_the_default_approval_mode_unless_the_user_chose_one() -> None:
    assert GeminiAgent().with_defaults(["-m", "pro"]) == [*DEFAULT_ARGS, "-m", "pro"]
    for chosen in (["--approval-mode", "yolo"], ["--approval-mode=yolo"], ["-y"], ["--yolo"]):
        assert GeminiAgent().with_defaults(chosen) == chosen


def test_an_api_error_becomes_its_status_and_message() -> None:
    raw = '[API Error: {"error":{"code":429,"message":"Resource exhausted"}}]'
    assert result_error({"status": "error", "error": {"message": raw}}) == (
        "gemini reported an error: HTTP 429: Resource exhausted"
    )
    assert result_error({"status": "success"}) is None


def test_a_fatal_stream_error_counts_only_without_a_result() -> None:
    fatal = {"type": "error", "severity": "error", "message": "quota"}
    assert stream_error([fatal]) == "gemini reported an error: quota"
    assert stream_error([fatal, {"type": "result"}]) is None
    assert stream_error([{"type": "error", "severity": "warning", "message": "m"}]) is None


def test_the_last_retry_names_its_status() -> None:
    assert last_retry("Attempt 1 failed with status 500.\nAttempt 2 failed with status 429.") == (
        "an API error (HTTP 429)"
    )
    assert last_retry("Attempt 3 failed.") == "an API error"
    assert last_retry("all fine") is None


def test_refusals_are_counted_per_tool_with_the_way_to_allow_them() -> None:
    text = denied_error(["run_shell_command", "run_shell_command", "write_file"])
    assert text.startswith("gemini refused 3 tool call(s): run_shell_command ×2, write_file;")
    assert '--agent-args "--approval-mode yolo"' in text


@settings(max_examples=30)
@given(
    st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3), max_size=5),
    st.lists(st.text(max_size=20), max_size=5),
)
def test_json_lines_keeps_every_object_line_and_nothing_else(
    objects: list[dict[str, int]], noise: list[str]
) -> None:
    noise = [n for n in noise if not n.strip().startswith("{")]
    lines = [json.dumps(o) for o in objects] + noise
    assert json_lines("\n".join(lines)) == objects
    assert obj(objects[0] if objects else [1]) == (objects[0] if objects else {})
