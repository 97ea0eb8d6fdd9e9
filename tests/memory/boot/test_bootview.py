"""Boot's view: reading Today safely, telling a stale carry, and the hook's JSON envelope."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time
from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.memory.boot.bootview import (
    TODAY_FILE_BYTES,
    _clip,
    _epoch,
    _one_line,
    claude_hook_json,
    iso_day,
    read_today,
    stale_date,
    updated_order,
)
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_a_today_file_boot_cannot_use_is_a_warning_never_an_error(root: MemoryRoot) -> None:
    warnings: list[str] = []
    (root.today / "bias.md").write_text("keep answers short\n")
    assert read_today(root, "bias.md", warnings) == "keep answers short\n"
    assert read_today(root, "absent.md", warnings) is None and warnings == []
    (root.today / "big.md").write_bytes(b"x" * (TODAY_FILE_BYTES + 1))
    (root.today / "latin1.md").write_bytes(b"caf\xe9\n")
    (root.today / "link.md").symlink_to(root.today / "bias.md")
    for name in ("big.md", "latin1.md", "link.md"):
        assert read_today(root, name, warnings) is None
    assert [w.split(": ", 1)[1] for w in warnings] == [
        f"{TODAY_FILE_BYTES + 1:,} bytes is too large for Today; skipped",
        "not UTF-8 text; skipped",
        "not a regular file (a symlink?); skipped",
    ]


@freeze_time("2026-12-01 09:00:00")
def test_a_carry_written_for_an_earlier_morning_is_stale(root: MemoryRoot) -> None:
    warnings: list[str] = []
    assert stale_date(root, "2026-11-30", warnings) == "2026-11-30"
    assert stale_date(root, "2026-12-01", warnings) is None  # no nightly record: fresh
    (root.today / "nightly.json").write_text(json.dumps({"last_date": "2026-12-01"}))
    assert stale_date(root, "2026-12-01", warnings) == "2026-12-01"  # reflected since
    (root.today / "nightly.json").write_text(json.dumps({"last_date": "2026-11-30"}))
    assert stale_date(root, "2026-12-01", warnings) is None
    for bad in (None, "", "yesterday", 20261130):
        assert stale_date(root, bad, warnings) is None
    assert warnings == []


def test_the_hook_envelope_is_ascii_json_carrying_the_markdown_exactly() -> None:
    markdown = "# Boot\n\nnaïve — 日本 \u2028 `code`\n"
    out = claude_hook_json(markdown)
    assert out.isascii()
    assert json.loads(out) == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": markdown}
    }


@given(st.text(max_size=200), st.integers(min_value=2, max_value=120))
def test_clip_keeps_short_text_and_says_how_much_it_cut(text: str, limit: int) -> None:
    clipped = _clip(text, limit)
    if len(text) <= limit:
        assert clipped == text
    else:
        assert clipped.startswith(text[: limit - 1].rstrip())
        assert clipped.endswith(f"… ({len(text) - limit + 1:,} more characters)")


@given(st.text(max_size=200))
def test_one_line_is_one_line_and_stable(text: str) -> None:
    line = _one_line(text)
    assert "\n" not in line and "\r" not in line
    assert line == line.strip() and "  " not in line
    assert _one_line(line) == line


# -- days and times by hand (boot imports no datetime) ----------------------------------


def _fromisoformat_day(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text) is not None


@given(
    st.one_of(
        st.dates().map(date.isoformat),
        st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True),
        st.text(alphabet="0123456789-T :W+", max_size=12),
    )
)
def test_iso_day_accepts_exactly_the_real_days_of_that_shape(text: str) -> None:
    assert iso_day(text) is _fromisoformat_day(text)


@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.timezones()
    ),
    st.sampled_from(["auto", "seconds", "microseconds"]),
)
def test_a_writers_timestamp_sorts_by_the_same_seconds_as_datetime_gives(
    when: datetime, spec: str
) -> None:
    text = when.isoformat(timespec=spec)
    want = datetime.fromisoformat(text).timestamp()
    assert updated_order(text, "k") == (want, "k")
    got = _epoch(text)
    assert got is None or got == want  # None: a shape left to datetime (a named zone's seconds)


@given(st.text(alphabet="0123456789-T:.+Z ", min_size=19, max_size=33))
def test_a_near_miss_is_left_to_datetime_or_read_as_it_reads_it(text: str) -> None:
    got = _epoch(text)
    if got is not None:
        assert got == datetime.fromisoformat(text).timestamp()
    try:
        want = datetime.fromisoformat(text).timestamp()
    except (ValueError, OverflowError):
        want = 0.0
    assert updated_order(text, "k") == (want, "k")


def test_the_stale_check_reads_an_unusual_day_as_date_fromisoformat_does(root: MemoryRoot) -> None:
    warnings: list[str] = []
    with freeze_time("2026-12-01 09:00:00"):
        assert stale_date(root, "20261130", warnings) == "20261130"  # read by datetime
        (root.today / "nightly.json").write_text('{"last_date": "20261201"}')
        assert stale_date(root, "2026-12-01", warnings) == "2026-12-01"
        (root.today / "nightly.json").write_text('{"last_date": 20261201}')
        assert stale_date(root, "2026-12-01", warnings) is None
    assert warnings == []


@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from("\t\n\r\x00\x1b\x7f\x85\u00a0\u200b\u202e\u2028\u2029\ue000 “ü"),
            st.characters(),
        )
    ),
    st.booleans(),
)
def test_printable_text_takes_the_short_way_to_the_same_result(text: str, keep: bool) -> None:
    from evolving_agent.memory.boot.bootview import _printable, _printable_by_category

    assert _printable(text, keep_newlines=keep) == _printable_by_category(text, keep)
    plain = text.translate({ord("\t"): None, ord("\n"): None})
    if plain.isprintable():  # the short way is sound: no character the loop would drop
        assert _printable_by_category(plain, keep) == plain


def test_str_isprintable_refuses_every_category_boot_drops() -> None:
    # What the short way in _printable stands on ("Other" and "Separator" are not
    # printable, Python's documentation says); checked over all of Unicode.
    import unicodedata

    drop = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
    wrong = [
        c for c in map(chr, range(0x110000)) if c.isprintable() and unicodedata.category(c) in drop
    ]
    assert wrong == []
