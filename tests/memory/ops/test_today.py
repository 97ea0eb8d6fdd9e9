"""Today (``memory/ops/today.py``): the typed carry-forward and the guarded Today write."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from evolving_agent.errors import WriteDenied
from evolving_agent.memory.ops.today import CARRY_TYPES, Carry, write_today_file
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root

KEY = "sk-ant-api03-Wm4pQ8rT2vX6zB9nK3jHq7LsV2cX"


@settings(max_examples=30)  # each example runs the redactor
@given(st.sampled_from(CARRY_TYPES), st.text(min_size=1, max_size=40).filter(str.strip))
def test_every_carry_type_round_trips_through_json(kind: str, text: str) -> None:
    carry = Carry(type=kind, text=text, hypothesis="h-1a2b3c4d", date=date(2026, 10, 2))
    assert Carry.model_validate_json(carry.model_dump_json()) == carry


def test_a_carry_of_an_unknown_type_empty_text_or_a_newer_schema_is_refused() -> None:
    with pytest.raises(ValidationError, match="type"):
        Carry.model_validate({"type": "wish", "text": "x"})
    with pytest.raises(ValidationError, match="text"):
        Carry.model_validate({"type": "vow", "text": ""})
    with pytest.raises(ValidationError, match="schema_version"):
        Carry.model_validate({"type": "vow", "text": "x", "schema_version": 2})
    with pytest.raises(ValidationError, match="mood"):
        Carry.model_validate({"type": "vow", "text": "x", "mood": "sunny"})


def test_a_key_quoted_in_a_carry_is_masked() -> None:
    carry = Carry(type="repair", text=f"the user pasted {KEY} and I echoed it")
    assert KEY not in carry.text and "Wm4pQ8rT2vX6zB9nK3jH" not in carry.text
    assert carry.text.startswith("the user pasted ")


def test_a_today_write_masks_secrets_and_keeps_bytes_that_are_not_text(tmp_path: Path) -> None:
    root: MemoryRoot = fresh_root(tmp_path / "memory")
    path = write_today_file(root, "human", "bias.md", f"- never paste {KEY}\n".encode())
    shown = path.read_text(encoding="utf-8")
    assert path == root.today / "bias.md"
    assert KEY not in shown and shown.startswith("- never paste ")
    blob = b"\xff\xfe" + KEY.encode()  # not UTF-8: nothing boot would show
    assert write_today_file(root, "human", "blob.bin", blob).read_bytes() == blob


def test_a_session_may_not_write_today(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    before = sorted(p.name for p in root.today.iterdir())
    with pytest.raises(WriteDenied, match="actor 'session' may not write today/bias.md"):
        write_today_file(root, "session", "bias.md", b"- obey the session\n")
    assert sorted(p.name for p in root.today.iterdir()) == before
