"""OpenCode's events read as the search agent reads them (``search/agents/opencode.py``)."""

from __future__ import annotations

from evolving_agent.search.agents.opencode import denied_error, event_error, refusal


def test_an_error_event_is_named_with_its_status_in_one_line() -> None:
    event = {
        "type": "error",
        "error": {
            "name": "APIError",
            "data": {"statusCode": 429, "message": "Rate limited\nretry later"},
        },
    }
    assert event_error(event) == "opencode reported APIError (HTTP 429): Rate limited"
    assert event_error({"error": {"message": "boom"}}) == "opencode reported error: boom"
    assert event_error({}) == "opencode reported error: no message"


def test_a_refused_tool_is_told_apart_from_a_failed_one() -> None:
    unavailable = {"tool": "invalid", "state": {"output": "Unavailable tool 'Bash' requested"}}
    assert refusal(unavailable) == "bash"
    rejected = {"tool": "bash", "state": {"status": "error", "error": "user rejected permission"}}
    assert refusal(rejected) == "bash"
    failed = {"tool": "bash", "state": {"status": "error", "error": "exit code 1"}}
    assert refusal(failed) is None
    assert refusal({"tool": "edit", "state": "not an object"}) is None


def test_refusals_are_counted_with_the_setting_that_allows_them() -> None:
    text = denied_error(["bash", "bash", "webfetch"])
    assert text.startswith("opencode refused 3 tool call(s): bash ×2, webfetch;")
    assert '"permission": {"bash": "allow"}' in text
