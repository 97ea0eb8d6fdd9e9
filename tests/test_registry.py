"""Backends by name (``evolving_agent/registry.py``): lazy import, unknown names listed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evolving_agent.errors import UsageError
from evolving_agent.registry import lookup


@pytest.fixture
def backends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Two backends in a module of their own, not imported yet."""
    (tmp_path / "ea_test_backends.py").write_text(
        "class Fast:\n    kind = 'fast'\n\nclass Slow:\n    kind = 'slow'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ea_test_backends", raising=False)
    return {"fast": "ea_test_backends:Fast", "slow": "ea_test_backends:Slow"}


def test_a_name_is_its_class_and_its_module_loads_only_when_asked(
    backends: dict[str, str],
) -> None:
    assert "ea_test_backends" not in sys.modules
    cls = lookup(backends, "slow", kind="agent")
    assert cls.kind == "slow" and cls.__module__ == "ea_test_backends"
    assert "ea_test_backends" in sys.modules


def test_an_unknown_name_lists_the_valid_ones_in_table_order_and_imports_nothing(
    backends: dict[str, str],
) -> None:
    with pytest.raises(UsageError) as info:
        lookup(backends, "Fast", kind="reflector")
    assert str(info.value) == "unknown reflector 'Fast'; choose one of: fast, slow"
    assert info.value.exit_code == 2
    assert "ea_test_backends" not in sys.modules
