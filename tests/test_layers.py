"""The reflector base imports no implementation, and the registry finds reflectors by
name.  (Which package may import which is import-linter's, in ``.importlinter``, run by
``tests/test_architecture.py``; this file no longer keeps a copy of those contracts.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evolving_agent.errors import UsageError
from evolving_agent.reflectors import REGISTRY, get_reflector, reflector_class
from evolving_agent.reflectors.rules import RulesReflector

PKG = Path(__file__).resolve().parents[1] / "evolving_agent"


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_the_base_imports_no_implementation() -> None:
    mods = imports(PKG / "reflectors" / "base.py")
    # settings is the schedule's model each backend is built from, not a backend.
    allowed = {
        "evolving_agent.reflectors.settings",
        "evolving_agent.reflectors.answers",
        "evolving_agent.reflectors.context",
    }
    assert not {m for m in mods if m.startswith("evolving_agent.reflectors")} - allowed


def test_registry_by_name_and_unknown_names_list_the_valid_ones() -> None:
    assert list(REGISTRY) == ["rules", "command", "openai", "claude", "codex", "gemini", "opencode"]
    assert reflector_class("rules") is RulesReflector
    assert isinstance(get_reflector("rules"), RulesReflector)
    with pytest.raises(UsageError, match=r"choose one of: rules, command, openai, claude, codex"):
        reflector_class("gpt")
