"""The Live Bus listing: newest first by mtime, *.json only, stopped one past the limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evolving_agent.memory.base.live_listing import (
    LIVE_MAX_KEYS,
    list_live,
    live_key_ok,
    over_limit_warning,
)


def _touch(path: Path, mtime_ns: int) -> None:
    path.write_text("{}")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_names_come_newest_first_and_only_json_counts(tmp_path: Path) -> None:
    for i, name in enumerate(["old.json", "mid.json", "new.json"]):
        _touch(tmp_path / name, 1_000_000_000 * (i + 1))
    _touch(tmp_path / "notes.txt", 9_000_000_000)  # not a Live Bus entry
    listing = list_live(tmp_path)
    assert listing.newest == ["new.json", "mid.json", "old.json"]
    assert (listing.total, listing.over_limit) == (3, False)


def test_an_empty_bus_lists_nothing(tmp_path: Path) -> None:
    listing = list_live(tmp_path)
    assert (listing.newest, listing.total, listing.over_limit) == ([], 0, False)


def test_the_listing_stops_one_past_the_limit(tmp_path: Path) -> None:
    for i in range(LIVE_MAX_KEYS + 5):
        (tmp_path / f"k{i}.json").write_text("{}")
    listing = list_live(tmp_path)
    assert listing.over_limit
    assert listing.total == LIVE_MAX_KEYS + 1  # it read no further than that
    at_limit = tmp_path / "at"
    at_limit.mkdir()
    for i in range(LIVE_MAX_KEYS):
        (at_limit / f"k{i}.json").write_text("{}")
    exact = list_live(at_limit)
    assert (exact.total, exact.over_limit) == (LIVE_MAX_KEYS, False)


def test_the_warning_names_the_directory_the_limit_and_the_way_out(tmp_path: Path) -> None:
    text = over_limit_warning(tmp_path)
    assert str(tmp_path) in text
    assert f"{LIVE_MAX_KEYS:,}" in text
    assert "evolving-agent live clear" in text
    assert "\n" not in text


@pytest.mark.parametrize("key", ["thread", "a", "v1.2_x-y", "9" * 64])
def test_a_key_of_its_own_file_name_is_a_live_key(key: str) -> None:
    assert live_key_ok(key)


@pytest.mark.parametrize(
    "key", ["", "thread\n", ".hidden", "-x", "a/b", "a b", "x.json", "9" * 65, "ключ"]
)
def test_a_key_that_is_no_plain_file_name_is_refused(key: str) -> None:
    assert not live_key_ok(key)
