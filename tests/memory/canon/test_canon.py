"""Canon's files (``memory/canon/canon.py``): the identity model, the templates, and the one
validator every Canon write goes through."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.yamlio import parse_yaml
from evolving_agent.memory.canon.canon import (
    IDENTITY_FILE,
    IDENTITY_TEMPLATE,
    POLICY_TEMPLATE,
    Identity,
    check_canon_text,
)
from evolving_agent.memory.canon.probe_file import PROBES_TEMPLATE
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_the_templates_are_valid_canon_and_init_writes_them(root: MemoryRoot) -> None:
    identity = Identity.model_validate(parse_yaml(IDENTITY_TEMPLATE, file="t"))
    assert identity.entries() == 4 and identity.name == "Assistant"
    check_canon_text(root, IDENTITY_FILE, IDENTITY_TEMPLATE)
    check_canon_text(root, "policy.yaml", POLICY_TEMPLATE)
    assert (root.canon / IDENTITY_FILE).read_text(encoding="utf-8") == IDENTITY_TEMPLATE


def test_entries_counts_values_self_understanding_and_habits() -> None:
    identity = Identity(values=["a", "b"], self_understanding=["c"], habits=["d", "e", "f"])
    assert identity.entries() == 6 and Identity().entries() == 0


def test_an_unknown_field_in_identity_is_named_with_its_file_and_line(root: MemoryRoot) -> None:
    text = IDENTITY_TEMPLATE + "mood: sunny\n"
    with pytest.raises(InvalidInput) as info:
        check_canon_text(root, IDENTITY_FILE, text)
    assert str(info.value).startswith(str(root.canon / IDENTITY_FILE))
    assert "mood" in str(info.value)


def test_a_newer_identity_schema_is_refused(root: MemoryRoot) -> None:
    text = IDENTITY_TEMPLATE.replace("schema_version: 1", "schema_version: 2")
    with pytest.raises(InvalidInput, match="schema_version"):
        check_canon_text(root, IDENTITY_FILE, text)


def test_a_policy_that_would_break_every_write_is_refused(root: MemoryRoot) -> None:
    with pytest.raises(InvalidInput, match=r"policy\.yaml"):
        check_canon_text(root, "policy.yaml", "schema_version: 1\nwrite:\n  canon: [session]\n")


def test_bytes_must_be_utf8_and_other_yaml_must_parse_markdown_is_free(root: MemoryRoot) -> None:
    with pytest.raises(InvalidInput, match="not UTF-8 text"):
        check_canon_text(root, "notes.md", b"\xff\xfe")
    with pytest.raises(InvalidInput, match=r"extra\.yaml"):
        check_canon_text(root, "extra.yaml", "a: [unclosed\n")
    check_canon_text(root, "notes.md", "a: [unclosed\n")  # Markdown is the human's own
    check_canon_text(root, "extra.yml", b"a: 1\n")


def test_probes_must_name_entries_the_identity_on_disk_holds(root: MemoryRoot) -> None:
    check_canon_text(root, "probes.yaml", PROBES_TEMPLATE)  # names the template's entries
    gone = PROBES_TEMPLATE.replace("habits: Lead with the answer", "habits: Never lead")
    with pytest.raises(InvalidInput) as info:
        check_canon_text(root, "probes.yaml", gone)
    assert str(info.value).startswith(f"{root.canon / 'probes.yaml'}:")
    assert "no entry of habits starts with 'Never lead'" in str(info.value)
    # With identity.yaml broken, its own check reports it: probes are only parsed.
    (root.canon / IDENTITY_FILE).write_text("mood: [\n")
    check_canon_text(root, "probes.yaml", gone)
