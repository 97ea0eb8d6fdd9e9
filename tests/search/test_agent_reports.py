"""What the claude and codex adapters make of their CLIs' reports (no CLI needed here;
the real ones run in tests/integrations/test_real_clients.py)."""

from __future__ import annotations

import pytest

from evolving_agent.search.agents.base import is_transient
from evolving_agent.search.agents.claude import denied_error
from evolving_agent.search.agents.codex import sandbox_mode


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        ("turn timed out after 600s (claude)", False),
        # Regression: a timeout that hid a 429 (Claude retrying inside) was never retried.
        ("turn timed out after 600s (claude); claude was retrying rate_limit (HTTP 429)", True),
        ("turn timed out after 60s (codex); codex was retrying after: Reconnecting... 503", True),
        ("turn timed out after 60s (codex); codex was retrying after: invalid prompt", False),
        ("claude reported an error (HTTP 429): API Error: Request rejected", True),
        ("claude denied 2 tool call(s): Bash ×2; ...", False),
    ],
)
def test_which_failures_are_retried(error: str, transient: bool) -> None:
    assert is_transient(error) is transient


def test_denied_error_names_each_tool_once_and_the_flag() -> None:
    assert denied_error(["Bash", "Bash", "WebFetch"]) == (
        "claude denied 3 tool call(s): Bash ×2, WebFetch; the agent could not run its code "
        'or the scorer (allow them with --agent-args "--permission-mode acceptEdits '
        '--allowedTools Bash WebFetch")'
    )


@pytest.mark.parametrize(
    ("args", "mode"),
    [
        ([], "read-only"),
        (["-c", 'sandbox_mode="workspace-write"'], "workspace-write"),
        (["-s", "danger-full-access"], None),
        (["--sandbox=read-only"], "read-only"),
        (["--dangerously-bypass-approvals-and-sandbox"], None),
    ],
)
def test_sandbox_mode_is_what_codex_will_run_commands_in(args: list[str], mode: str | None) -> None:
    assert sandbox_mode(args) == mode
