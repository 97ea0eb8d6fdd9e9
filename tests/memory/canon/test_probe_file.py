"""canon/probes.yaml: validated like every Canon file, entries checked against Canon."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.yamlio import parse_yaml
from evolving_agent.memory.canon.canon import IDENTITY_TEMPLATE, check_canon_text
from evolving_agent.memory.canon.probe_file import PROBES_TEMPLATE, ProbesFile, resolve_entry
from evolving_agent.memory.ops.canon_edit import EditRefused, save_canon
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_init_writes_the_two_commented_examples(root: MemoryRoot) -> None:
    text = (root.canon / "probes.yaml").read_text()
    assert text == PROBES_TEMPLATE
    model = ProbesFile.model_validate(parse_yaml(text, file="probes.yaml"))
    assert [p.key for p in model.probes] == ["shell-flag", "unclear-cleanup"]
    identity = parse_yaml(IDENTITY_TEMPLATE, file="identity.yaml")
    assert [resolve_entry(identity, p.entry) for p in model.probes] == [
        "Lead with the answer, then the reasoning.",
        "Answer the question that was asked.",
    ]


def test_an_unknown_field_is_refused_naming_file_and_line(root: MemoryRoot) -> None:
    bad = PROBES_TEMPLATE.replace("    implies: asks", "    mood: sunny\n    implies: asks")
    with pytest.raises(InvalidInput) as caught:
        check_canon_text(root, "probes.yaml", bad)
    line = bad.splitlines().index("    mood: sunny") + 1
    assert str(caught.value) == (
        f"{root.canon / 'probes.yaml'}:{line}: probes.1.mood: Extra inputs are not permitted"
    )


def test_an_entry_that_is_not_in_canon_is_refused_and_the_edit_kept(root: MemoryRoot) -> None:
    bad = PROBES_TEMPLATE.replace("habits: Lead with the answer", "habits: Be terse")
    before = (root.canon / "probes.yaml").read_bytes()
    with pytest.raises(EditRefused) as caught:
        save_canon(root, "probes.yaml", bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "Be terse" in ln)
    assert caught.value.line == line
    assert "no entry of habits starts with 'Be terse'" in str(caught.value)
    assert (root.canon / "probes.yaml").read_bytes() == before
    assert caught.value.kept.read_text() == bad


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("Lead with the answer", "must be 'SECTION: start of the entry'"),
        ("moods: happy", "must be 'SECTION: start of the entry'"),
        ("values: ", "must be 'SECTION: start of the entry'"),
    ],
)
def test_malformed_references(ref: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_entry({}, ref)


def test_a_reference_must_name_one_entry() -> None:
    identity = {"values": ["Be kind.", "Be kind to strangers."]}
    assert resolve_entry(identity, "values:  be KIND to") == "Be kind to strangers."
    with pytest.raises(ValueError, match="2 entries of values start with 'Be kind'"):
        resolve_entry(identity, "values: Be kind")


def test_keys_are_unique_and_a_human_edit_commits(root: MemoryRoot) -> None:
    twice = PROBES_TEMPLATE.replace("key: unclear-cleanup", "key: shell-flag")
    with pytest.raises(InvalidInput, match="probe key 'shell-flag' is used twice"):
        check_canon_text(root, "probes.yaml", twice)
    retired = PROBES_TEMPLATE.replace(
        "      max_chars: 600\n", "      max_chars: 600\n    retired: true\n"
    )
    assert save_canon(root, "probes.yaml", retired) is True
    model = ProbesFile.model_validate(parse_yaml(retired, file="probes.yaml"))
    assert [p.key for p in model.active()] == ["shell-flag"]
