"""The console script (``evolving_agent/launch.py``): the fast paths, else the full CLI.

Each test runs ``launch.main`` in a real interpreter and reports, at exit, whether
click was ever imported: the fast paths promise the standard library only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root

PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write(f\"\\nclick={'click' in sys.modules}\\n\"))\n"
    "sys.argv = ['evolving-agent', *sys.argv[1:]]\n"
    "from evolving_agent.launch import main\n"
    "main()\n"
)

pytestmark = pytest.mark.slow  # each test starts two or three interpreters


def _launch(root: MemoryRoot, *args: str) -> tuple[int, str, bool]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--root", str(root.path), *args],
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=60,
    )
    *_, last = proc.stderr.splitlines()
    return proc.returncode, proc.stdout, last == "click=True"


def test_boot_and_friction_are_served_without_click(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    first = _launch(root, "boot")  # the first boot of a root may build its Canon snapshot
    code, out, click_loaded = _launch(root, "boot")
    assert code == 0 and out == first[1] and out.startswith("# Boot context")
    assert not click_loaded
    code, _, click_loaded = _launch(root, "friction", "the launcher wrote this")
    assert code == 0 and not click_loaded
    assert "the launcher wrote this" in "".join(
        p.read_text() for p in root.evidence.glob("*.jsonl")
    )


def test_any_other_command_runs_the_full_cli(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    code, out, click_loaded = _launch(root, "hypothesis", "list")
    assert code == 0 and click_loaded
    # A declined fast path falls through to the CLI as if nothing had happened.
    code, out, click_loaded = _launch(root, "boot", "--format", "json")
    assert code == 0 and out.lstrip().startswith("{")


def test_boot_write_file_goes_through_the_integrations_writer(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    target = tmp_path / "CLAUDE.boot.md"
    _launch(root, "boot")
    code, out, click_loaded = _launch(root, "boot", "--write-file", str(target))
    assert code == 0 and not click_loaded
    assert target.read_text(encoding="utf-8").strip() and out.strip()
