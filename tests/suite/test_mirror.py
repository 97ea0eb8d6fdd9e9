"""A test file per module, beside it: ``evolving_agent/<pkg>/<mod>.py`` is tested in
``tests/<pkg>/test_<mod>.py`` (issue 33), so a newcomer finds a module's tests from its
path.  Read from the tree, not by importing anything."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import REPO

# The bundled examples under data/ are the user's files (copied out by `search example`),
# tested as examples in tests/examples/ and tests/search/, not as modules of the product.
NOT_MODULES = ("data/",)


def unmirrored(package: Path, tests: Path) -> list[str]:
    missing = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if path.name in ("__init__.py", "__main__.py") or rel.as_posix().startswith(NOT_MODULES):
            continue
        if not (tests / rel.parent / f"test_{path.stem}.py").is_file():
            missing.append(rel.as_posix())
    return missing


def test_every_module_has_a_test_file_of_its_name_beside_it() -> None:
    missing = unmirrored(REPO / "evolving_agent", REPO / "tests")
    assert missing == []


def test_a_module_without_its_file_or_with_it_elsewhere_is_found(tmp_path: Path) -> None:
    package, tests = tmp_path / "pkg", tmp_path / "tests"
    for name in ("a/one.py", "a/two.py", "b/three.py", "a/__init__.py", "data/x/y.py"):
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text("")
    (tests / "a").mkdir(parents=True)
    (tests / "a" / "test_one.py").write_text("")
    (tests / "test_three.py").write_text("")  # not beside its module: not found there
    assert unmirrored(package, tests) == ["a/two.py", "b/three.py"]
