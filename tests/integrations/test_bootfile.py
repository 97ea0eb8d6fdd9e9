"""Boot for other systems: the Claude Code hook output and the @import boot file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.integrations.bootfile import HEADER
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.canon.canon import IDENTITY_TEMPLATE
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root

BIAS = "Before offering alternatives, check the user asked for them.\nLead with the answer."


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    r = fresh_root(tmp_path / "memory")
    human = Writer(r, "human")
    human.write(
        "canon",
        "identity.yaml",
        IDENTITY_TEMPLATE.replace("name: Assistant", "name: Wren"),
        message="name the assistant",
    )
    human.write("today", "bias.md", BIAS + "\n")
    return r


def test_claude_hook_output_is_one_session_start_json_document(
    root: MemoryRoot, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evolving_agent",
            "--root",
            str(root.path),
            "boot",
            "--format",
            "claude-hook",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )

    assert proc.returncode == 0
    assert proc.stderr == ""
    payload = json.loads(proc.stdout)  # the whole of stdout is one JSON document
    assert list(payload) == ["hookSpecificOutput"]
    out = payload["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    context = out["additionalContext"]
    assert context.startswith("# Boot context: Wren\n")
    assert f"## Today's bias\n{BIAS}\n" in context
    assert context == build_boot(root).markdown()


def test_hook_with_write_file_prints_the_same_json_and_refreshes_the_file(
    root: MemoryRoot, tmp_path: Path
) -> None:
    runner = CliRunner()
    target = tmp_path / "project" / ".claude" / "evolving-agent-boot.md"
    plain = runner.invoke(cli, ["--root", str(root.path), "boot", "--format", "claude-hook"])
    hooked = runner.invoke(
        cli,
        ["--root", str(root.path), "boot", "--format", "claude-hook", "--write-file", str(target)],
    )

    assert (plain.exit_code, hooked.exit_code) == (0, 0)
    assert hooked.output == plain.output
    markdown = build_boot(root).markdown()
    assert target.read_text(encoding="utf-8") == (
        HEADER.format(root=root.path, path=target) + markdown
    )

    # A new Live Bus note shows up in the file on the next run: it is a refresh, not a copy.
    runner.invoke(cli, ["--root", str(root.path), "live", "set", "thread", "docs pass"])
    again = runner.invoke(cli, ["--root", str(root.path), "boot", "--write-file", str(target)])
    assert again.exit_code == 0
    assert again.output == build_boot(root).markdown()
    assert '- `thread`: "docs pass"' in target.read_text(encoding="utf-8")
    assert verify_root(root).problems == []


def test_boot_file_inside_the_memory_root_is_refused(root: MemoryRoot) -> None:
    inside = root.path / "today" / "boot.md"
    result = CliRunner().invoke(
        cli, ["--root", str(root.path), "boot", "--write-file", str(inside)]
    )

    assert result.exit_code == 4
    assert result.output == (
        f"error: refusing to write the boot file inside the memory root ({root.path}): "
        "choose a path outside it, e.g. .claude/evolving-agent-boot.md in your project\n"
    )
    assert not inside.exists()


def test_claude_hook_without_a_root_prints_nothing_on_stdout(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evolving_agent",
            "--root",
            str(missing),
            "boot",
            "--format",
            "claude-hook",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 4
    assert proc.stdout == ""  # Claude Code never sees half a document
    assert proc.stderr.startswith(f"error: no memory root at {missing} ")
