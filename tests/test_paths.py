"""Where things live (``evolving_agent/paths.py``): the root's precedence and its layout."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.paths import (
    AREAS,
    LAYERS,
    REVIEW_AREAS,
    ROOT_ENV,
    MemoryRoot,
    area_parts,
    resolve_root,
    root_problem,
)
from tests.helpers.roots import fresh_root


def test_flag_beats_the_environment_which_beats_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ROOT_ENV, str(tmp_path / "from-env"))
    assert resolve_root(tmp_path / "from-flag") == tmp_path / "from-flag"
    assert resolve_root(None) == tmp_path / "from-env"
    monkeypatch.setenv(ROOT_ENV, "")  # set but empty counts as unset
    assert resolve_root("") == tmp_path / "memory"
    monkeypatch.delenv(ROOT_ENV)
    assert resolve_root() == tmp_path / "memory"


def test_a_relative_or_home_flag_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_root("rel/mem") == tmp_path / "rel" / "mem"
    assert resolve_root("~/mem") == tmp_path / "home" / "mem"
    monkeypatch.setenv(ROOT_ENV, "~/env-mem")
    assert MemoryRoot.resolve().path == tmp_path / "home" / "env-mem"


@given(st.sampled_from(AREAS))
def test_every_area_hangs_off_the_root_layers_at_the_top_reviews_below(area: str) -> None:
    root = MemoryRoot(Path("/r"))
    where = root.area_dir(area)
    assert where.parent == (root.reviews if area in REVIEW_AREAS else root.path)
    assert where.name == area and where.parts[2:] == area_parts(area)


def test_the_named_paths_are_the_documented_layout() -> None:
    root = MemoryRoot(Path("/r"))
    assert [root.area_dir(layer) for layer in LAYERS] == [
        root.canon,
        root.live,
        root.today,
        root.evidence,
    ]
    assert root.policy_file == Path("/r/canon/policy.yaml")
    assert root.schedule_file == Path("/r/schedule.yaml") and root.crons == Path("/r/crons")
    assert root.lock_dir == Path("/r/.ea/locks") and root.state == Path("/r/.ea")


def test_an_unknown_area_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown area 'secrets'"):
        area_parts("secrets")


def test_the_real_path_resolves_a_symlink_above_the_root(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "data")
    root = MemoryRoot(tmp_path / "link")
    assert root.real == (tmp_path / "data").resolve()
    assert root.path == tmp_path / "link"


def test_root_problem_says_why_a_path_is_not_a_root(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    assert "it is a file, not a directory" in str(root_problem(MemoryRoot(file)))
    empty = MemoryRoot(tmp_path / "empty")
    assert root_problem(empty) == (
        f"no memory root at {empty.path} (run 'evolving-agent init {empty.path}' "
        "or pass --root / set $EVOLVING_AGENT_ROOT)"
    )
    (tmp_path / "half" / "canon").mkdir(parents=True)  # evidence/ missing
    assert not MemoryRoot(tmp_path / "half").exists()
    root = fresh_root(tmp_path / "memory")
    assert root.exists() and root_problem(root) is None


def test_a_root_is_immutable_equal_by_its_path_and_hashable(tmp_path: Path) -> None:
    a, b = MemoryRoot(tmp_path / "m"), MemoryRoot(tmp_path / "m")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != MemoryRoot(tmp_path / "other") and a != tmp_path / "m"
    assert repr(a) == f"MemoryRoot(path={tmp_path / 'm'!r})"
    with pytest.raises(AttributeError):
        a.path = tmp_path  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del a.path
    assert a.live == tmp_path / "m" / "live" and a.live is a.live  # cached, frozen or not
    assert MemoryRoot.resolve(str(tmp_path / "m")) == a


def test_the_literal_types_exist_at_run_time_and_match_the_tuples() -> None:
    # Built on first use (boot's fast path does not import typing): the same types.
    import typing

    from evolving_agent import paths

    assert typing.get_args(paths.Layer) == LAYERS
    assert typing.get_args(paths.ReviewArea) == REVIEW_AREAS
    assert typing.get_args(paths.Area) == AREAS
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        paths.Nope  # type: ignore[attr-defined]  # noqa: B018
