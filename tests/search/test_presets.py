"""The policies as reducer presets (``search/presets.py``): each one the flags its
module's table says, and an unknown name refused with the valid ones."""

from __future__ import annotations

import re

import pytest

from evolving_agent.errors import EXIT_USAGE, UsageError
from evolving_agent.search import presets
from evolving_agent.search.presets import PRESETS, preset_for


def _table() -> dict[str, list[str]]:
    """The policy table of the module's docstring, row by row."""
    doc = presets.__doc__ or ""
    rows = [line for line in doc.splitlines() if re.match(r"[a-z][a-z-]+ +(1|N) ", line)]
    # Columns by the rule line's spans: the cells hold spaces ("new sessions").
    rule = next(line for line in doc.splitlines() if line.startswith("==="))
    spans = [m.span() for m in re.finditer(r"=+", rule)]
    spans[-1] = (spans[-1][0], len(max(rows, key=len)))  # the last cell may run past it
    return {
        row[spans[0][0] : spans[0][1]].strip(): [row[a:b].strip() for a, b in spans[1:]]
        for row in rows
    }


def test_the_docstring_table_names_every_policy_in_order() -> None:
    assert list(_table()) == list(PRESETS)
    assert all(name == preset.name for name, preset in PRESETS.items())


@pytest.mark.parametrize("policy", list(PRESETS))
def test_each_preset_is_what_its_row_in_the_table_says(policy: str) -> None:
    agents, share, rounds, sessions, workspace = _table()[policy]
    preset = preset_for(policy)
    assert preset.single_agent == (agents == "1")
    assert preset.share_peers == (share == "yes")
    assert preset.forgets == (rounds == "R")
    assert preset.resets_sessions == (sessions == "new sessions")
    assert preset.fresh_repo == workspace.startswith("new one-commit repository")
    assert preset.keeps_notes == ("shared notes" in workspace)


def test_only_keep_notes_carries_sessions_across_a_boundary() -> None:
    carrying = [p.name for p in PRESETS.values() if p.forgets and not p.resets_sessions]
    assert carrying == ["keep-notes"]
    # Without boundaries there is nothing to reset, whatever the other flags.
    assert not any(p.resets_sessions for p in PRESETS.values() if not p.forgets)


def test_an_unknown_policy_lists_the_valid_ones_and_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as caught:
        preset_for("forget-teams")
    assert str(caught.value) == (
        "unknown policy 'forget-teams'; choose one of: single, parallel, team, forget, "
        "forget-team, fork-and-flush, keep-notes"
    )
    assert caught.value.exit_code == EXIT_USAGE


def test_a_preset_cannot_be_changed_once_made() -> None:
    with pytest.raises(AttributeError):
        preset_for("single").forgets = True  # type: ignore[misc]
    assert preset_for("single").forgets is False
