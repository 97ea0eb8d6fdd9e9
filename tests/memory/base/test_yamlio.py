"""Round-trip YAML reading (``memory/base/yamlio.py``): parsed documents are shared by text,
never by object."""

from __future__ import annotations

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.yamlio import dump_yaml, line_of, parse_yaml

TEXT = "# the human's comment\nname: Assistant\nvalues:\n  - careful\n  - direct\n"


def test_a_caller_that_changes_its_document_changes_nobody_elses() -> None:
    first = parse_yaml(TEXT, file="a.yaml")
    first["values"].append("loud")
    first["name"] = "Other"
    second = parse_yaml(TEXT, file="a.yaml")
    assert second["name"] == "Assistant" and list(second["values"]) == ["careful", "direct"]
    assert dump_yaml(second) == TEXT  # comments and layout survive the copy


def test_a_copy_keeps_the_line_numbers_errors_are_reported_with() -> None:
    parse_yaml(TEXT, file="a.yaml")
    again = parse_yaml(TEXT, file="a.yaml")
    assert line_of(again, ("values", 1)) == 5


@pytest.mark.parametrize("attempt", [1, 2])
def test_malformed_text_names_its_file_and_line_every_time(attempt: int) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_yaml("name: [a, b\nvalues: x\n", file=f"bad{attempt}.yaml")
    assert err.value.file == f"bad{attempt}.yaml" and err.value.line == 2


def test_a_merge_key_is_written_back_as_the_human_wrote_it() -> None:
    text = "base: &b {name: Bot}\nidentity:\n  <<: *b\n  values:\n    - a\n"
    for _ in range(2):  # the second parse must not come from a copy that spelled it out
        data = parse_yaml(text, file="m.yaml")
        data["identity"]["values"].append("b")
        assert dump_yaml(data) == text.replace("    - a\n", "    - a\n    - b\n")
