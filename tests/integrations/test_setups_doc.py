"""docs/integrations.md shows each set-up exactly as ``integrations show`` prints it
(the printed ones are the ones test_real_clients.py runs against the real CLIs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.integrations.setups import CLIENTS, setups_for

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
ROOT = "/home/me/assistant-memory"
# The page shows Gemini CLI's and OpenCode's set-ups (printed with the absolute path of
# the running evolving-agent) for this one.
PROGRAM = {
    "gemini": "/home/me/.venv/bin/evolving-agent",
    "opencode": "/home/me/.venv/bin/evolving-agent",
}


@pytest.mark.parametrize("client", CLIENTS)
def test_every_printed_setup_is_on_the_page_verbatim(client: str) -> None:
    # Regression: the page's set-ups had drifted from what works (a `-e` that swallowed
    # the server name, no root for Codex, no allow rule).
    page = DOC.read_text(encoding="utf-8")
    program = PROGRAM.get(client)
    for setup in setups_for(client, ROOT, program) if program else setups_for(client, ROOT):
        block = f"```{setup.lang}\n{setup.text}\n```"
        assert block in page, f"{setup.key} is not on docs/integrations.md as printed"
        if setup.where != "shell":
            assert f"In `{setup.where}`:\n\n{block}" in page


def test_the_page_has_no_env_flag_before_a_name() -> None:
    page = DOC.read_text(encoding="utf-8")
    assert "claude mcp add --scope user -e" not in page
