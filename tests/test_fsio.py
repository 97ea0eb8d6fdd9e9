"""The one atomic file writer and tree walker (``evolving_agent/fsio.py``), used by memory
and search."""

from __future__ import annotations

import copy
import os
import pickle
import re
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_agent import fsio
from evolving_agent.fsio import in_flight, read_files, walk, write_atomic, write_atomic_at
from evolving_agent.search.rundir import write_json_atomic


def test_it_replaces_a_file_whole_creating_missing_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "run.json"
    write_atomic(target, b"old\n")
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["run.json"]  # no temp left


def test_the_mode_argument_sets_the_new_files_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "private", b"x", mode=0o600)
        write_atomic(tmp_path / "shared", b"x", mode=0o644)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o644


def test_a_failed_rename_keeps_the_old_entry_and_leaves_no_temp_file(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "inside").write_text("keep")
    with pytest.raises(OSError):
        write_atomic(tmp_path / "busy", b"new")  # a non-empty directory cannot be replaced
    assert (tmp_path / "busy" / "inside").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy"]


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (tmp_path / "link").symlink_to(victim)
    write_atomic(tmp_path / "link", b"new")
    assert victim.read_text() == "untouched"
    assert not (tmp_path / "link").is_symlink()
    assert (tmp_path / "link").read_bytes() == b"new"


def test_search_json_goes_through_it(tmp_path: Path) -> None:
    write_json_atomic(tmp_path / "run" / "seed.json", {"score": 1.5, "path": tmp_path})
    assert (tmp_path / "run" / "seed.json").read_text(encoding="utf-8") == (
        f'{{\n  "score": 1.5,\n  "path": "{tmp_path}"\n}}\n'
    )


def test_a_setgid_directory_passes_its_group_bits_on_whatever_the_umask(tmp_path: Path) -> None:
    # The OS-user deployment (memory/sync/deploy.py): a file the assistant's user makes in a
    # shared directory must stay readable and writable by the human's group.
    shared, private = tmp_path / "shared", tmp_path / "private"
    shared.mkdir()
    private.mkdir()
    shared.chmod(0o2770)
    private.chmod(0o700)
    old = os.umask(0o077)
    try:
        write_atomic(shared / "a.json", b"{}")
        write_atomic(private / "a.json", b"{}")
    finally:
        os.umask(old)
    assert (shared / "a.json").stat().st_mode & 0o777 == 0o660
    assert (private / "a.json").stat().st_mode & 0o777 == 0o600
    assert fsio.shared_mode(0o2750, 0o600) == 0o640  # a read-only group reads only
    assert fsio.shared_mode(0o0770, 0o600) == 0o600  # no setgid bit: not a shared directory
    assert fsio.shared_dir_mode(0o3770, 0o700) == 0o3770


def test_in_flight_names_exactly_the_writers_temp_files(tmp_path: Path) -> None:
    seen: list[str] = []
    real_replace = os.replace

    def spy(src: str, dst: str, **kw: object) -> None:
        seen.append(src)
        real_replace(src, dst, **kw)  # type: ignore[arg-type]

    dir_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(os, "replace", spy)
            write_atomic_at(dir_fd, "identity.yaml", b"x", mode=0o600)
    finally:
        os.close(dir_fd)
    assert len(seen) == 1 and in_flight(seen[0])
    # A file that only looks like a temp is the tree's own.
    assert not in_flight(".notes.tmp") and not in_flight("identity.yaml")


def test_walk_lists_a_tree_sorted_without_following_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("no")
    tree = tmp_path / "tree"
    (tree / "b").mkdir(parents=True)
    (tree / "b" / "two").write_text("2")
    (tree / "a").write_text("1")
    (tree / "link").symlink_to(outside)
    (tree / ".a.0123456789ab.tmp").write_text("half")  # a write in flight
    os.mkfifo(tree / "fifo")

    got = [(e.rel, e.kind) for e in walk(tmp_path, "tree")]

    assert got == [
        ("tree", "dir"),
        ("tree/a", "file"),
        ("tree/b", "dir"),
        ("tree/b/two", "file"),
        ("tree/fifo", "other"),
        ("tree/link", "symlink"),
    ]
    assert list(walk(tmp_path, "missing")) == []
    everything = [e.rel for e in walk(tree, "", skip=lambda name: False)]
    assert ".a.0123456789ab.tmp" in everything and "link/secret" not in everything


def test_read_files_reads_plain_files_and_reports_the_rest_once(tmp_path: Path) -> None:
    # verify and boot's Canon check read through this: one wording, one in-flight rule.
    (tmp_path / "canon" / "sub").mkdir(parents=True)
    (tmp_path / "canon" / "identity.yaml").write_text("name: Wren\n")
    (tmp_path / "canon" / ".identity.yaml.0123456789ab.tmp").write_text("half")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x").write_text("x")
    (tmp_path / "canon" / "linked").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "schedule.yaml").write_text("jobs: {}\n")

    out = read_files(tmp_path, ("canon", "schedule.yaml", "crons"))

    assert out.files == {"canon/identity.yaml": b"name: Wren\n", "schedule.yaml": b"jobs: {}\n"}
    assert out.problems == [
        f"{tmp_path / 'canon' / 'linked'}: is a symlink; the writer never makes one"
    ]
    assert out.reported("canon/linked/x") and not out.reported("canon/identity.yaml")


@given(
    st.text(alphabet=st.sampled_from(".ab\n0f9x-_é"), max_size=8),
    st.text(alphabet=st.sampled_from("0123456789abcdefAF\n."), min_size=10, max_size=14),
    st.sampled_from([".tmp", ".tm", "tmp", ".TMP", ".tmp\n", ""]),
)
def test_in_flight_is_the_writers_temp_name_pattern_exactly(
    name: str, digits: str, tail: str
) -> None:
    # Written out by hand (no pattern compiled on every boot): the same answers as the
    # pattern it replaced, for names near and far from the shape.
    for candidate in (f".{name}.{digits}{tail}", f"{name}.{digits}{tail}", name + tail):
        want = re.fullmatch(r"\..+\.[0-9a-f]{12}\.tmp", candidate) is not None
        assert in_flight(candidate) is want, candidate


def test_an_entry_is_frozen_equal_by_value_and_hashable(tmp_path: Path) -> None:
    a = fsio.Entry("x", tmp_path / "x", "file")
    b = fsio.Entry("x", tmp_path / "x", "file")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != fsio.Entry("x", tmp_path / "x", "dir")
    assert repr(a) == f"Entry(rel='x', path={tmp_path / 'x'!r}, kind='file')"
    with pytest.raises(AttributeError):
        a.kind = "dir"  # type: ignore[misc]
    # ... and, like the frozen dataclass it was, it pickles and copies
    assert pickle.loads(pickle.dumps(a)) == a and copy.copy(a) == a and copy.deepcopy(a) == a
