"""The README's tour, walked as written: every command of its code blocks, in order.

The commands are read from README.md itself, so the tour cannot drift from what works.
They run in a fresh directory laid out like a clone (``examples/``, ``memory/``), with
the virtual environment "activated" (its bin first on PATH), each through ``bash`` as a
newcomer would paste it; a terminal answers ``y`` to the one confirmation prompt.  The one
line not run here is ``evolving-agent demo --keep demo``: the session's ``kept_demo``
fixture ran exactly that command once, and its directory is copied in its place.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
from pathlib import Path

import pytest

from tests.helpers import docblocks
from tests.helpers.fixtures import KeptDemo, copy_tree

REPO = Path(__file__).resolve().parent.parent
ACTIVATE = ". .venv/bin/activate"
KEEP_DEMO = "evolving-agent demo --keep demo"
EDITOR = """\
import pathlib, sys
p = pathlib.Path(sys.argv[1])
p.write_text(p.read_text().replace("name: Assistant", "name: Ada"))
"""


def tour_blocks() -> list[tuple[str, str]]:
    """(language, body) of each fenced block in the README's tour section."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## A 2-minute tour", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)


bash_commands = docblocks.bash_commands  # the runner every page's blocks use


@pytest.mark.slow
def test_the_readme_tour_runs_as_written(tmp_path: Path, kept_demo: KeptDemo) -> None:
    clone = tmp_path / "clone"
    (clone / "memory").mkdir(parents=True)
    (clone / "memory" / ".gitkeep").touch()
    (clone / "examples").symlink_to(REPO / "examples")
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR)
    venv_bin = str(Path(sys.executable).parent)
    home = tmp_path / "home"  # a newcomer's fresh HOME
    home.mkdir()
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "HOME": str(home)}
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env.pop("VISUAL", None)
    env.pop("EVOLVING_AGENT_ROOT", None)  # the tour sets its own
    shell = docblocks.Shell(clone, env)

    blocks = tour_blocks()
    assert ("bash", ACTIVATE + "\n") == blocks[0]  # the tour says to activate the venv first
    shell.env["PATH"] = f"{venv_bin}{os.pathsep}{env['PATH']}"  # …which is what activating does
    outputs: dict[str, str] = {}
    kept_demo_used = False
    for lang, body in blocks[1:]:
        if lang == "console":
            for step in docblocks.console_steps(body):
                proc = shell.run(step.command)
                assert step.expected is not None, step.command
                assert docblocks.matches(proc.stdout.splitlines(), step.expected), (
                    f"{step.command}\n{proc.stdout}"
                )
            continue
        assert lang == "bash"
        for command in bash_commands(body):
            if command.split("#")[0].strip() == KEEP_DEMO:
                copy_tree(kept_demo.directory, clone / "demo")
                kept_demo_used = True
                continue
            proc = shell.run(command)
            assert proc.returncode == 0, f"{command}\n{proc.stdout}"
            assert "warning:" not in proc.stdout, f"{command}\n{proc.stdout}"  # e.g. a stale id
            outputs[command.split("#")[0].strip()] = proc.stdout

    def out(prefix: str) -> str:
        (text,) = [v for k, v in outputs.items() if k.startswith(prefix)]
        return text

    # What the tour promises, as it promises it.
    assert kept_demo_used  # the slow-clock part ran in the kept demo's root
    assert out("evolving-agent boot").startswith("# Boot context: Ada")  # canon edit took
    assert out("evolving-agent verify").startswith("ok: ")
    assert "1 Canon change(s)" in out("evolving-agent verify")  # the edit, with provenance
    assert "pending" in out("evolving-agent review list")
    approved = out("evolving-agent review approve")
    assert re.search(r"approved rev-\d{4}-\d\d-1: commit [0-9a-f]{10}", approved), approved
    assert re.search(r"rev-\d{4}-\d\d-1", out("evolving-agent canon log"))
    assert "(approved by " in out("evolving-agent canon show")
    assert (clone / "runs" / "tsp" / "report.md").is_file()
    assert (clone / "demo" / "memory" / "canon" / "identity.yaml").is_file()


def _read_until(fd: int, marker: bytes, seen: bytes = b"") -> bytes:
    """What the terminal shows until ``marker`` appears or the shell exits (waits on
    output, not on time)."""
    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], 120)
        assert ready, f"no {marker!r} from the terminal; it shows {seen[-2000:]!r}"
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the shell exited
            break
        if not chunk:
            break
        seen += chunk
    return seen


@pytest.mark.slow
def test_the_slow_clock_blocks_pasted_whole_into_a_terminal(
    tmp_path: Path, kept_demo: KeptDemo
) -> None:
    # Newcomer snag: pasting the tour, `review approve` read the lines pasted after it as
    # answers to its [y/N] (re-asking after each), and a pager opened by a long view read
    # them as keystrokes, so they never ran.  Here an interactive bash on a real, small
    # pty gets each block at once, as a paste without bracketed paste delivers it; the
    # human answers the question once it is on the screen.
    blocks = [body for lang, body in tour_blocks() if lang == "bash"]
    (first,) = [i for i, body in enumerate(blocks) if KEEP_DEMO in body]
    approve, after = blocks[first], blocks[first + 1]
    assert bash_commands(approve)[-1].startswith("evolving-agent review approve ")
    copy_tree(kept_demo.directory, tmp_path / "demo")
    paste = "".join(
        line + "\n" for line in approve.splitlines() if line.split("#")[0].strip() != KEEP_DEMO
    )
    env = {**os.environ, "PS1": "$ ", "TERM": "xterm", "HOME": str(tmp_path)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    for name in ("EVOLVING_AGENT_ROOT", "PROMPT_COMMAND", "PAGER", "LESS", "LINES", "COLUMNS"):
        env.pop(name, None)  # the newcomer's defaults: less as the pager, the pty's size
    pid, fd = pty.fork()
    if pid == 0:  # the child: a newcomer's shell in the directory the tour starts in
        os.chdir(tmp_path)
        os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
    # Fewer rows than `canon show` prints, so it would open the pager.
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 12, 100, 0, 0))
    try:
        os.write(fd, paste.encode())
        shown = _read_until(fd, b"to Canon? [y/N]: ")
        assert b"Error: invalid input" not in shown  # no pasted line was taken as an answer
        os.write(fd, b"y\n")
        shown = _read_until(fd, b"approvals used in", shown)
        os.write(fd, (after + "echo tour-$((6 * 7))\n").encode())
        shown = _read_until(fd, b"tour-42", shown)  # every line pasted after ran
        os.write(fd, b"exit\n")
        _read_until(fd, b"never shown: read to the end")
    finally:
        if os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    text = shown.decode(errors="replace")
    assert re.search(r"approved rev-\d{4}-\d\d-1: commit [0-9a-f]{10}", text), text[-3000:]
    assert "(approved by " in text  # `canon show`, pasted after, ran on the approved Canon
    assert "next " in text.split("(approved by ", 1)[1]  # and `schedule show` after it
