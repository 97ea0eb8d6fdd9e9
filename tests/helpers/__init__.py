"""Test helpers, one package: run the real CLI, in-process (CliRunner) or as a subprocess.

Beside this module: ``fixtures`` (the shapes of conftest's session fixtures), ``search``
(builders for the search tests), ``search_fakes`` (fake ``claude``/``codex`` CLIs),
``reflector_fakes`` (a fake model), ``hostile_reflector`` (a misbehaving command
reflector run as a script), ``roots`` (fresh roots copied from one ``init`` made),
``review`` (a root with queued reviews), ``life`` (a short
life whose real jobs queue three reviews), ``web`` (a real ``review serve`` process and
the system's headless Chromium), ``asgi`` (one request straight into an ASGI app),
``sync`` (a bare remote, a laptop and a desktop; git-by-hand edits of the data branch),
``turn_agents`` (an in-process agent and a git workspace for turn and executor tests),
``compare_fakes`` (a fake search runner for ``compare_policies``), ``commands`` (the
CLI's command tree), ``docexamples`` (a command's ``--help`` example, parsed) and
``keys`` (ssh keys for signing).  Tests of these helpers live in ``tests/suite/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from evolving_agent.cli import cli
from evolving_agent.paths import MemoryRoot

HELPERS = Path(__file__).resolve().parent
REPO = HELPERS.parents[1]


def run_cli(*args: str, input: str | bytes | None = None) -> Result:
    """Invoke the CLI in-process; exit code and output as a user would see them."""
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def cli_ok(root: MemoryRoot, *args: str, input: str | None = None) -> str:
    """``evolving-agent --root ROOT ARGS`` in-process, asserting exit 0; its output."""
    res = CliRunner().invoke(
        cli, ["--root", str(root.path), *args], input=input, catch_exceptions=False
    )
    assert res.exit_code == 0, (args, res.output)
    return res.output


def root_with_friction(path: Path, day: str) -> MemoryRoot:
    """A new root with one hypothesis and one friction supporting it on ``day``: a day the
    nightly job has something to reflect."""
    from freezegun import freeze_time

    from tests.helpers.roots import fresh_root

    root = fresh_root(path)
    with freeze_time(f"{day} 09:00:00"):
        hid = run_cli("hypothesis", "add", "give one answer, not a menu").output.split()[0]
    with freeze_time(f"{day} 10:00:00"):
        assert run_cli("friction", "listed options again", "--supports", hid).exit_code == 0
    return root


def set_reflector(root: MemoryRoot, section: str) -> None:
    """Replace the schedule's ``reflector:`` section (the file's last) with ``section``,
    the text that follows ``reflector:``."""
    text = root.schedule_file.read_text()
    root.schedule_file.write_text(text[: text.index("\nreflector:")] + "\nreflector:" + section)


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


def new_root(tmp_path: Path) -> Path:
    """A fresh root at ``tmp_path/memory``: a copy of one the product's own ``init`` made
    (``tests.helpers.roots``)."""
    from tests.helpers.roots import fresh_root

    return fresh_root(tmp_path / "memory").path


def run_verify() -> tuple[int, str]:
    """``verify`` through the CLI: its exit code and output."""
    result = run_cli("verify")
    return result.exit_code, result.output


def shell_git(root: MemoryRoot | Path, *args: str) -> str:
    """Plain porcelain git, as an assistant with a shell would run it (not the product's)."""
    where = root.path if isinstance(root, MemoryRoot) else root
    proc = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=True)
    return proc.stdout
