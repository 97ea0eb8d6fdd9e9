"""The names ``--agent`` and ``--executor`` accept (``evolving_agent/search/names.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evolving_agent.registry import lookup
from evolving_agent.search.names import (
    AGENT_ALIASES,
    AGENT_NAMES,
    AGENT_REGISTRY,
    EXECUTOR_NAMES,
    EXECUTOR_REGISTRY,
)


@pytest.mark.parametrize("name", AGENT_NAMES)
def test_every_agent_name_is_a_class_that_builds_itself(name: str) -> None:
    cls = lookup(AGENT_REGISTRY, name, kind="agent")
    assert callable(getattr(cls, "from_settings", None)), cls


def test_executor_names_are_the_registry_keys_and_aliases_name_real_agents() -> None:
    assert EXECUTOR_NAMES == ("local", "ray") == tuple(EXECUTOR_REGISTRY)
    assert AGENT_NAMES == tuple(AGENT_REGISTRY) and AGENT_NAMES[0] == "tsp-example"
    assert set(AGENT_ALIASES.values()) <= set(AGENT_NAMES)
    assert not set(AGENT_ALIASES) & set(AGENT_NAMES)
    local = lookup(EXECUTOR_REGISTRY, "local", kind="executor")
    assert local.__name__ == "LocalExecutor"


def test_the_names_module_is_a_leaf_that_imports_no_backend() -> None:
    code = (
        "import sys, evolving_agent.search.names; "
        "print(sorted(m for m in sys.modules if m.startswith('evolving_agent')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "['evolving_agent',",
        "'evolving_agent.search',",
        "'evolving_agent.search.names']",
    ]
