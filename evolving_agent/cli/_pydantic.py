"""The command line's process runs without pydantic plugins, and without looking for any.

pydantic looks for plugins when it builds its first model: it imports
``importlib.metadata`` (with ``email``, ``zipfile``, ``csv`` and more) and reads the entry
points of every installed distribution.  That is the largest single cost of a command's
start after importing pydantic itself, about a sixth of the CPU of ``hypothesis list``,
and every test runs thousands of such commands.  ``PYDANTIC_DISABLE_PLUGINS=__all__``
skips the reading but not the import, and would reach every child process too.

A plugin would also see every record a command validates (Evidence text, Canon,
hypotheses): installing a package should not be a way to watch the memory.  So the
CLI's own process has no pydantic plugins, by putting an empty loader where pydantic
imports its own (``pydantic.plugin._loader``, whose one function pydantic calls is
``get_plugins``).  A program that imports the library is left alone: its plugins are
its owner's business.  ``tests/cli/test__pydantic.py`` checks pydantic still imports
only that name from that module, so a pydantic that changes it fails a test, not a user.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable
from typing import Any

LOADER = "pydantic.plugin._loader"


def _no_plugins() -> Iterable[Any]:
    return ()


def skip_plugin_discovery() -> None:
    """Give pydantic an empty plugin loader, unless its own is already imported."""
    if LOADER in sys.modules:  # pydantic has looked already: nothing left to save
        return
    loader = types.ModuleType(LOADER, "No pydantic plugins in evolving-agent's CLI.")
    loader.get_plugins = _no_plugins  # type: ignore[attr-defined]  # a module built here
    sys.modules[LOADER] = loader
