"""Applying a Canon diff keeps the human's file: comments, order, quoting, layout."""

from __future__ import annotations

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.canon.canon_diff import CanonDiff, apply_diff
from tests.helpers.review import IDENTITY


def _diff(**fields: str) -> CanonDiff:
    return CanonDiff.model_validate(fields)


def _expect(*edits: tuple[str, str]) -> str:
    text = IDENTITY
    for old, new in edits:
        assert text.count(old) == 1
        text = text.replace(old, new)
    return text


LAST_HABIT = "  - Lead with the answer, then the reasoning.\n"
LAST_VALUE = "  - Answer the question that was asked.  # the one I care about\n"


@pytest.mark.parametrize(
    ("diff", "expected", "removed"),
    [
        pytest.param(
            _diff(section="habits", op="add", text="Ask before offering options."),
            _expect((LAST_HABIT, LAST_HABIT + "  - Ask before offering options.\n")),
            0,
            id="add-before-a-trailing-comment",
        ),
        pytest.param(
            _diff(section="values", op="add", text="Be brief: really."),
            _expect((LAST_VALUE, LAST_VALUE + "  - 'Be brief: really.'\n")),
            0,
            id="add-before-the-next-sections-comment",
        ),
        pytest.param(
            _diff(section="values", op="remove", old_text="Answer the question that was asked."),
            _expect((LAST_VALUE, "")),
            1,
            id="remove-last-keeps-next-sections-comment",
        ),
        pytest.param(
            _diff(
                section="values",
                op="replace",
                old_text="Answer the question that was asked.",
                text="Answer exactly what was asked.",
            ),
            _expect((LAST_VALUE, "  - Answer exactly what was asked.  # the one I care about\n")),
            1,
            id="replace-keeps-end-of-line-comment",
        ),
        pytest.param(
            _diff(
                section="self_understanding",
                op="remove",
                old_text="I tend to offer options the user did not ask for.",
            ),
            _expect(
                (
                    "self_understanding:\n  - I tend to offer options the user did not ask for.\n",
                    "self_understanding: []\n",
                )
            ),
            1,
            id="emptied-list-keeps-following-comment",
        ),
        pytest.param(
            _diff(
                section="habits", op="remove", old_text="Lead with the answer, then the reasoning."
            ),
            _expect(("habits:\n" + LAST_HABIT, "habits: []\n")),
            1,
            id="emptied-last-list-keeps-end-comment",
        ),
    ],
)
def test_diff_changes_only_its_entry(diff: CanonDiff, expected: str, removed: int) -> None:
    applied = apply_diff(IDENTITY, diff)
    assert applied.after == expected
    assert applied.removed == removed
    assert applied.entries_before == 4


def test_unindented_lists_stay_unindented() -> None:
    text = "values:\n- a\n- b  # b!\n\n# habits next\nhabits:\n- h\n"
    applied = apply_diff(text, _diff(section="values", op="add", text="c"))
    assert applied.after == "values:\n- a\n- b  # b!\n- c\n\n# habits next\nhabits:\n- h\n"


def test_adding_to_an_empty_list_makes_it_a_block_list_again() -> None:
    text = "values: []\n\n# next\nhabits:\n  - h\n"
    applied = apply_diff(text, _diff(section="values", op="add", text="v"))
    assert applied.after == "values:\n  - v\n\n# next\nhabits:\n  - h\n"


@pytest.mark.parametrize(
    ("diff", "message"),
    [
        (
            _diff(section="values", op="remove", old_text="Not in Canon."),
            "canon/identity.yaml: values: the entry 'Not in Canon.' is not in Canon",
        ),
        (
            _diff(section="habits", op="add", text="Lead with the answer, then the reasoning."),
            "canon/identity.yaml: habits: 'Lead with the answer, then the reasoning.' is "
            "already in Canon",
        ),
    ],
)
def test_a_diff_that_does_not_apply_is_invalid_input(diff: CanonDiff, message: str) -> None:
    with pytest.raises(InvalidInput) as err:
        apply_diff(IDENTITY, diff)
    assert str(err.value).startswith(message)
