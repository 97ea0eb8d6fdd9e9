"""The reflector names (reflectors/names.py): the registry's keys, the one list of them.

What it promises: every name leads to the class that calls itself by that name; the
schedule file and the registry refuse the same unknown names and list the same valid
ones in the same order; and the module is a leaf, so checking a name imports no backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from evolving_agent.errors import UsageError
from evolving_agent.reflectors import reflector_class
from evolving_agent.reflectors.base import Reflector
from evolving_agent.reflectors.names import REFLECTOR_NAMES, REGISTRY
from evolving_agent.reflectors.settings import ReflectorSettings


def test_the_names_are_the_registry_keys_in_order_and_rules_is_first() -> None:
    assert REFLECTOR_NAMES == tuple(REGISTRY)
    assert REFLECTOR_NAMES[0] == "rules"  # the default and the fallback of every job
    assert len(set(REFLECTOR_NAMES)) == len(REFLECTOR_NAMES)


@pytest.mark.parametrize("name", REFLECTOR_NAMES)
def test_every_name_leads_to_a_reflector_class_of_that_name(name: str) -> None:
    cls = reflector_class(name)
    assert issubclass(cls, Reflector)
    assert cls.name == name
    assert ReflectorSettings(name=name).name == name  # the schedule file accepts it


def test_an_unknown_name_is_refused_alike_listing_every_valid_one_in_order() -> None:
    listed = ", ".join(REFLECTOR_NAMES)
    with pytest.raises(UsageError) as exc:
        reflector_class("gpt")
    assert str(exc.value) == f"unknown reflector 'gpt'; choose one of: {listed}"
    with pytest.raises(ValidationError) as bad:
        ReflectorSettings(name="gpt")
    message = str(bad.value)
    assert all(f"'{n}'" in message for n in REFLECTOR_NAMES)
    positions = [message.index(f"'{n}'") for n in REFLECTOR_NAMES]
    assert positions == sorted(positions)


def test_the_module_is_a_leaf_importing_nothing_of_the_package() -> None:
    """So the schedule file's model checks a name without importing a backend."""
    import ast

    import evolving_agent.reflectors.names as names

    tree = ast.parse(Path(names.__file__).read_text(encoding="utf-8"))
    imported = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    assert imported == ["__future__"]
