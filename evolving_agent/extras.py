"""Optional dependencies, and the one error a missing one gives.

The core (memory, jobs, the CLI, the session hook) installs with the standard stack only;
heavier libraries live in extras: ``[mcp]`` (the MCP server), ``[search]`` (the search
report's plots), ``[ray]`` (the Ray executor), ``[openai]`` (the openai reflector).  Code
that needs one calls :func:`require` at the point of use, so a memory-only install never
imports them and a missing one is a single line naming the extra to install.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from evolving_agent.errors import MissingExtra

# Import name -> (the extra that installs it, the library's name as people write it).
EXTRA_OF: dict[str, tuple[str, str]] = {
    "mcp": ("mcp", "the MCP SDK"),
    "matplotlib": ("search", "matplotlib"),
    "ray": ("ray", "Ray"),
    "openai": ("openai", "the openai client"),
}


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` (under a key of :data:`EXTRA_OF`), or raise :class:`MissingExtra`.

    ``feature`` is what the user asked for, as they would recognise it
    (``--executor ray``, ``the search report's plot``).
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != top:
            raise  # the library is there but broken: a real error, not a missing extra
        extra, library = EXTRA_OF[top]
        raise MissingExtra(feature, extra, library) from None


def available(module: str) -> bool:
    """Whether ``module`` can be imported (without importing more than its spec)."""
    return importlib.util.find_spec(module) is not None
