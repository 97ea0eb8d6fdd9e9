"""``demo`` options: ``DIR`` or ``--keep``, and errors that name what the user gave."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli


# A newcomer's snag.
def test_demo_takes_dir_or_keep_not_both(tmp_path: Path) -> None:
    result = run_cli("demo", "--dir", str(tmp_path / "a"), "--keep", str(tmp_path / "b"))
    assert result.exit_code == 2
    assert result.output.startswith("error: give either --dir or --keep, not both")
    assert list(tmp_path.iterdir()) == []


# A newcomer's snag.
def test_demo_keep_twice_names_the_directory_not_an_option_never_given(tmp_path: Path) -> None:
    # A newcomer re-running the tour's `demo --keep demo` was told to "pass --dir".
    kept = tmp_path / "demo"
    kept.mkdir()
    (kept / "memory").mkdir()
    result = run_cli("demo", "--keep", str(kept))
    assert result.exit_code == 4
    assert result.output == (
        f"error: {kept} is not empty; choose a new or empty directory "
        "(or remove it to run the demo again)\n"
    )
    assert [p.name for p in kept.iterdir()] == ["memory"]
