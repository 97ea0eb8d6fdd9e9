"""``init`` and the memory commands' hints, followed as a newcomer would follow them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from evolving_agent.cli import memory_cmds
from evolving_agent.memory.canon.policy import ACTORS
from tests.helpers import run_cli, run_proc


# A newcomer's snag.
@pytest.mark.slow
def test_init_hint_names_canon_edit_and_following_it_keeps_verify_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_cli("init")
    assert result.output.splitlines()[1:] == [
        "next, say who the assistant is:  evolving-agent canon edit",
        "then see what a session starts with:  evolving-agent boot",
    ]
    # Newcomer snag: the hint nested quotes ('... --root '/x/my root'') and its boot
    # hint had no --root, so neither pasted line worked for a root elsewhere.
    other = run_cli("init", str(tmp_path / "mém oire"))
    assert other.output.splitlines()[1:] == [
        f"next, say who the assistant is:  evolving-agent canon edit --root '{tmp_path}/mém oire'",
        f"then see what a session starts with:  evolving-agent boot --root '{tmp_path}/mém oire'",
    ]
    hinted = other.output.splitlines()[2].split(":  ", 1)[1]
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # the console script
    booted = subprocess.run(
        hinted,
        shell=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PATH": path},
    )
    assert booted.returncode == 0 and booted.stdout.startswith("# Boot context"), booted.stderr

    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('name: Assistant', 'name: Ada'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    edited = run_proc("canon", "edit")
    assert edited.returncode == 0, edited.stderr
    assert run_proc("verify").returncode == 0
    assert run_cli("boot").output.startswith("# Boot context: Ada")


def test_every_as_option_is_the_one_actor_option_with_its_own_help() -> None:
    commands = [memory_cmds.friction_cmd, memory_cmds.evidence_import]
    options = [next(p for p in c.params if p.name == "actor") for c in commands]
    for option in options:
        assert isinstance(option, click.Option) and isinstance(option.type, click.Choice)
        assert option.opts == ["--as"] and option.default == "session"
        assert list(option.type.choices) == list(ACTORS) and option.show_default
    assert [o.help for o in options] == [
        "Who is acting (the assistant is 'session').",
        "Acting as (the assistant's default; the human may say --as human).",
    ]
