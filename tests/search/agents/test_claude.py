"""Claude Code's stream read as the search agent reads it (``search/agents/claude.py``):
its permission default, its refusals and retries, its JSON lines."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.agents.claude import (
    DEFAULT_ARGS,
    SANDBOXED_BASH,
    ClaudeAgent,
    _json_lines,
    _last_retry,
    _result_object,
    denied_error,
)


def test_the_default_permission_mode_unless_the_user_chose_one() -> None:
    assert ClaudeAgent().with_defaults(["--model", "opus"]) == [*DEFAULT_ARGS, "--model", "opus"]
    for chosen in (
        ["--permission-mode", "plan"],
        ["--permission-mode=plan"],
        ["--dangerously-skip-permissions"],
    ):
        assert ClaudeAgent().with_defaults(chosen) == chosen


def test_a_denied_bash_points_at_claudes_own_sandbox_and_other_tools_are_listed() -> None:
    text = denied_error(["Bash", "Bash", "WebFetch"])
    assert text.startswith("claude denied 3 tool call(s): Bash ×2, WebFetch;")
    assert f"--permission-mode acceptEdits {SANDBOXED_BASH} --allowedTools WebFetch" in text
    assert text.endswith("; Bash then runs inside Claude Code's sandbox)")
    assert "sandbox" not in denied_error(["Edit"]).split("(allow", 1)[1]


def test_the_last_api_retry_is_what_was_being_retried() -> None:
    events = [
        {"type": "system", "subtype": "api_retry", "error": "overloaded", "error_status": 529},
        {"type": "system", "subtype": "api_retry", "error": "rate_limit", "error_status": 429},
        {"type": "assistant"},
    ]
    assert _last_retry(events) == "rate_limit (HTTP 429)"
    assert _last_retry([{"type": "system", "subtype": "api_retry"}]) == "an API error"
    assert _last_retry([{"type": "result"}]) is None


def test_a_single_pretty_printed_result_counts_as_the_stream() -> None:
    pretty = json.dumps({"type": "result", "session_id": "s-1"}, indent=2)
    assert _json_lines(pretty) == [{"type": "result", "session_id": "s-1"}]
    assert _result_object("log line\n" + json.dumps({"a": 1})) == {"a": 1}
    assert _result_object("no json here") == {}


@settings(max_examples=30)
@given(
    st.lists(
        st.dictionaries(st.text(max_size=5), st.integers(), min_size=1, max_size=3),
        min_size=1,
        max_size=5,
    )
)
def test_every_object_line_of_the_stream_is_kept_in_order(objects: list[dict[str, int]]) -> None:
    stream = "\n".join(["starting…", *(json.dumps(o) for o in objects), "[1, 2]", "{bad"])
    assert _json_lines(stream) == objects
