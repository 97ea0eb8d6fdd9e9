"""Backends by name: one registry shape for reflectors, search agents and executors.

Each family keeps a table ``name -> "module:Class"`` (its names are the table's keys,
in order) and each class builds itself from settings with its own ``from_settings``
classmethod, as pipx's ``backends`` and llm's ``plugins`` do.  Modules are imported only
when their name is asked for, so an unknown name lists the valid ones and a backend's
heavy dependency costs nothing until it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from evolving_agent.errors import UsageError


def lookup(table: Mapping[str, str], name: str, *, kind: str) -> Any:
    """The class ``table`` registers as ``name``; an unknown name lists the valid ones."""
    if name not in table:
        raise UsageError(f"unknown {kind} {name!r}; choose one of: {', '.join(table)}")
    module, _, attr = table[name].partition(":")
    return getattr(import_module(module), attr)
