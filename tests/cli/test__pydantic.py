"""The CLI's process runs without pydantic plugins and without ``importlib.metadata``."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import types
from pathlib import Path

import pydantic.plugin._schema_validator as schema_validator
import pytest

from evolving_agent.cli import _pydantic
from evolving_agent.cli._pydantic import LOADER, skip_plugin_discovery

# A command that reads memory, with the modules it imported said on stderr at exit.
PROBE = """
import sys
sys.argv = ["evolving-agent", *sys.argv[1:]]
from evolving_agent.cli import main
try:
    main()
finally:
    print(sorted(m for m in sys.modules if m.startswith(("importlib.metadata", "email"))),
          file=sys.stderr)
"""


def test_pydantic_imports_only_get_plugins_from_the_loader_it_replaces() -> None:
    # The empty loader stands in for pydantic's own: it must offer what pydantic takes.
    source = inspect.getsource(schema_validator)
    imports = re.findall(r"from \._loader import (.+)", source)
    assert imports == ["get_plugins"]


def test_the_empty_loader_is_used_and_gives_no_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, LOADER, raising=False)
    skip_plugin_discovery()
    loader = sys.modules[LOADER]
    assert loader.get_plugins() == ()
    assert loader.get_plugins is _pydantic._no_plugins
    monkeypatch.delitem(sys.modules, LOADER)  # the test process keeps pydantic's own


def test_a_loader_already_imported_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    theirs = types.ModuleType(LOADER)
    monkeypatch.setitem(sys.modules, LOADER, theirs)
    skip_plugin_discovery()
    assert sys.modules[LOADER] is theirs


def test_a_command_validates_its_models_without_importing_importlib_metadata(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    run = [sys.executable, "-c", PROBE, "--root", str(root)]
    init = subprocess.run([*run, "init", str(root)], capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    added = subprocess.run(
        [*run, "hypothesis", "add", "short answers land better"], capture_output=True, text=True
    )
    assert added.returncode == 0, added.stderr
    listed = subprocess.run([*run, "hypothesis", "list"], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert "short answers land better" in listed.stdout
    assert listed.stderr.splitlines()[-1] == "[]"
