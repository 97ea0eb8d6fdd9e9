"""docs/integrations.md shows each set-up exactly as ``integrations show`` prints it
(the printed ones are the ones test_real_clients.py runs against the real CLIs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.integrations.setups import CLIENTS, setups_for

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def on_the_page(text: str) -> str:
    """A set-up as the page shows it: `<PROGRAM>` and `<ROOT>` where the command prints
    the absolute path of the program and the reader's root (the page's runner fills
    them in when it runs a shell line)."""
    return text.replace("/PROGRAM", "<PROGRAM>").replace("/ROOT", "<ROOT>")


@pytest.mark.parametrize("client", CLIENTS)
def test_every_printed_setup_is_on_the_page_verbatim(client: str) -> None:
    # Regression: the page's set-ups had drifted from what works (a `-e` that swallowed
    # the server name, no root for Codex, no allow rule).
    page = DOC.read_text(encoding="utf-8")
    for setup in setups_for(client, "/ROOT", "/PROGRAM"):
        block = f"```{setup.lang}\n{on_the_page(setup.text)}\n```"
        assert block in page, f"{setup.key} is not on docs/integrations.md as printed"
        if setup.where != "shell":
            assert f"In `{setup.where}`:\n\n{block}" in page


def test_the_page_has_no_env_flag_before_a_name() -> None:
    page = DOC.read_text(encoding="utf-8")
    assert "claude mcp add --scope user -e" not in page


def test_the_page_names_no_machine_of_its_own() -> None:
    # A newcomer registered `/home/me/assistant-memory` verbatim from the page.
    assert "/home/me" not in DOC.read_text(encoding="utf-8")
