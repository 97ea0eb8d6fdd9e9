"""Fresh memory roots for tests, copied from one that ``init_root`` made in this process.

``init`` runs about fifteen git commands; hundreds of tests each start from an
untouched root, and re-running init for every one of them was a good part of the fast
suite's time.  A copy of a root init made (git history and all) is the same root: the
same files, commits and modes; only the device id differs, and that is made anew for
each copy so that two copies never claim to be one device.

Tests that are about ``init`` itself, or that need two roots with unrelated histories
(sync, devices), call ``init_root`` directly.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from evolving_agent.memory.evidence.devices import (
    create_device,
    device_path,
    local_device,
    shared_device_path,
)
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot

# setup name -> the root it was built in; one set per test process (each xdist worker)
_TEMPLATES: dict[str, Path] = {}


def fresh_root(target: Path, setup: Callable[[MemoryRoot], object] | None = None) -> MemoryRoot:
    """A root at ``target`` as ``init_root`` (then ``setup``, if given) would leave it.

    ``setup`` runs once per process, on the template; it must depend on nothing but the
    root (it is keyed by its qualified name).
    """
    key = "" if setup is None else f"{setup.__module__}.{setup.__qualname__}"
    template = _TEMPLATES.get(key)
    if template is None:
        home = Path(tempfile.mkdtemp(prefix="ea-test-root-"))
        atexit.register(shutil.rmtree, home, True)
        built = init_root(home / "memory")
        if setup is not None:
            setup(built)
        template = _TEMPLATES[key] = built.path
    shutil.copytree(template, target, symlinks=True)
    root = MemoryRoot(target.absolute())
    shared_device_path(root, local_device(root).id).unlink()
    device_path(root).unlink()
    create_device(root)
    return root
