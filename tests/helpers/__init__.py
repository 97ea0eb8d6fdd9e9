"""Test helpers, one package: run the real CLI, in-process (CliRunner) or as a subprocess.

Beside this module: ``fixtures`` (the shapes of conftest's session fixtures), ``search``
(builders for the search tests), ``search_fakes`` (fake ``claude``/``codex`` CLIs),
``reflector_fakes`` (a fake model), ``hostile_reflector`` (a misbehaving command
reflector run as a script) and ``review`` (a root with queued reviews).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from evolving_agent.cli import cli

HELPERS = Path(__file__).resolve().parent
REPO = HELPERS.parents[1]


def run_cli(*args: str, input: str | bytes | None = None) -> Result:
    """Invoke the CLI in-process; exit code and output as a user would see them."""
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def run_proc(
    *args: str,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m evolving_agent ARGS`` as a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "evolving_agent", *args],
        input=input if input is not None else b"",
        capture_output=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
    )
