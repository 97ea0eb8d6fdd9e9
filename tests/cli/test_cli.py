"""The top-level group: where ``--root`` goes, usage errors, bad bytes, closed pipes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from freezegun import freeze_time

from evolving_agent.cli import COMMAND_MODULES, COMMAND_SUMMARIES, cli
from evolving_agent.paths import MemoryRoot
from tests.helpers import REPO, new_root, run_cli, run_proc
from tests.helpers.commands import ALL_COMMANDS, command_at
from tests.helpers.roots import fresh_root


# Bad input a new user typed during QA.
def test_a_group_alone_prints_its_help_on_stderr_with_exit_2() -> None:
    # What troubleshooting.md says after "One line": a newcomer typing `evolving-agent live`
    # got the group's help and exit 2, which the page did not mention.
    proc = run_proc("live")
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert err.startswith("Usage: evolving-agent live [OPTIONS] COMMAND [ARGS]...")
    assert "  set " in err and "  clear " in err


# Bad input a new user typed during QA.
def test_piping_into_head_is_not_an_unexpected_error(tmp_path: Path) -> None:
    """`evidence show | head` closes the pipe early; that is not a failure to report."""
    import subprocess

    root = new_root(tmp_path)
    # More than a pipe buffer (64 KiB) of lines, so the CLI is still writing when the
    # reader leaves.
    file = tmp_path / "many.jsonl"
    line = {"ts": "2026-11-29T10:00:00Z", "kind": "raw", "text": "a line of evidence " * 3}
    file.write_text((json.dumps(line) + "\n") * 3000)
    # An import records its lines now (issue 11): freeze "now" on the day shown below.
    with freeze_time("2026-11-29 10:00:00"):
        assert run_cli("--root", str(root), "evidence", "import", str(file)).exit_code == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "--root", str(root)]
        + ["evidence", "show", "--date", "2026-11-29"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(9) == b"10:00:00 "
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ""


# Bad input a new user typed during QA.
def test_an_argument_that_is_not_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    """A Latin-1 terminal passes bytes Python cannot store as UTF-8 text."""
    import subprocess

    root = new_root(tmp_path)
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"evolving_agent", b"--root", str(root).encode()]
        + [b"friction", b"caf\xe9 felt off"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 4
    assert proc.stderr.decode() == (
        "error: argument 'caf\\xe9 felt off' is not UTF-8 text; "
        "set a UTF-8 locale or pass the text as UTF-8\n"
    )
    assert not list((root / "evidence").glob("*.jsonl"))


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    """A root that neither $EVOLVING_AGENT_ROOT nor ./memory points at."""
    root = fresh_root(tmp_path / "elsewhere")
    monkeypatch.setenv("EVOLVING_AGENT_ROOT", str(tmp_path / "nothing-here"))
    monkeypatch.chdir(tmp_path)
    return root


# A newcomer's snag.
@pytest.mark.parametrize("path", [p for p in ALL_COMMANDS if p], ids=" ".join)
def test_every_command_accepts_root_after_itself(path: tuple[str, ...]) -> None:
    options = {o for p in command_at(path).params for o in getattr(p, "opts", [])}
    assert "--root" in options


# A newcomer's snag.
@pytest.mark.parametrize(
    "args",
    [
        ["boot", "--format", "json"],
        ["canon", "log"],
        ["review", "list"],
        ["hypothesis", "list", "--json"],
        ["evidence", "show"],
        ["schedule", "show"],
    ],
    ids=" ".join,
)
def test_root_after_the_subcommand_means_the_same_as_before_it(
    elsewhere: MemoryRoot, args: list[str]
) -> None:
    before = run_cli("--root", str(elsewhere.path), *args)
    after = run_cli(*args, "--root", str(elsewhere.path))
    assert before.exit_code == 0, before.output
    assert after.exit_code == 0, after.output
    assert after.output == before.output
    assert run_cli(*args).exit_code == 4  # and without it the root is really not found


# A newcomer's snag.
@pytest.mark.slow
def test_root_after_a_nested_command_in_a_real_process(elsewhere: MemoryRoot) -> None:
    proc = run_proc("live", "set", "thread", "parser refactor", "--root", str(elsewhere.path))
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((elsewhere.live / "thread.json").read_text(encoding="utf-8"))
    assert entry["text"] == "parser refactor"
    approve = run_proc("review", "approve", "rev-2026-11-1", "--yes", "--root", str(elsewhere.path))
    assert approve.returncode == 4  # reached the root: the review is what is missing
    assert approve.stderr.decode().startswith("error: no review 'rev-2026-11-1'")


# A newcomer's snag.
def test_the_last_root_given_wins(elsewhere: MemoryRoot, tmp_path: Path) -> None:
    result = run_cli("--root", str(tmp_path / "nothing"), "boot", "--root", str(elsewhere.path))
    assert result.exit_code == 0
    assert result.output.startswith("# Boot context")


USAGE_ERRORS = [
    (
        ["boot", "--bogus"],
        "error: No such option '--bogus'. (try 'evolving-agent boot --help')",
    ),
    (["nosuch"], "error: No such command 'nosuch'. (try 'evolving-agent --help')"),
    (["--bogus"], "error: No such option '--bogus'. (try 'evolving-agent --help')"),
    (
        ["review", "approve"],
        "error: Missing argument 'ID'. (try 'evolving-agent review approve --help')",
    ),
    (
        ["boot", "--format", "yaml"],
        "error: Invalid value for '--format': 'yaml' is not one of 'markdown', 'json', "
        "'claude-hook'. (try 'evolving-agent boot --help')",
    ),
]


# A newcomer's snag.
@pytest.mark.parametrize(("args", "expected"), USAGE_ERRORS)
def test_usage_errors_are_one_line_and_exit_2(args: list[str], expected: str) -> None:
    result = CliRunner().invoke(cli, args, prog_name="evolving-agent")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == expected + "\n"


# A newcomer's snag.
def test_a_usage_error_from_a_real_process_is_one_line() -> None:
    args, expected = USAGE_ERRORS[0]
    proc = run_proc(*args)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr.decode() == expected + "\n"


# A newcomer's snag.
def test_troubleshooting_shows_usage_errors_as_the_cli_prints_them() -> None:
    page = (REPO / "docs" / "troubleshooting.md").read_text()
    section = page.split("## Usage errors", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    shown = section.splitlines()
    assert shown
    assert set(shown) <= {expected for _args, expected in USAGE_ERRORS}


# A newcomer's snag.
def test_a_bare_group_still_shows_its_help() -> None:
    result = run_cli("review")
    assert "Commands:" in result.output and "approve" in result.output


@pytest.mark.parametrize("name", list(COMMAND_MODULES))
def test_the_help_summaries_are_the_commands_own_first_paragraphs(name: str) -> None:
    # The top-level --help reads COMMAND_SUMMARIES so it imports no command module;
    # this keeps the table and the docstrings from drifting apart.
    assert name in COMMAND_SUMMARIES, f"add {name!r} to COMMAND_SUMMARIES in cli/__init__.py"
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    for limit in (30, 45, 80, 200):
        shown = click.Command(name, help=COMMAND_SUMMARIES[name]).get_short_help_str(limit)
        assert shown == command.get_short_help_str(limit)


def test_top_level_help_imports_no_command_module() -> None:
    # --help is what a newcomer types first; it should not pay for every subsystem.
    code = (
        "import sys\n"
        "from evolving_agent.cli import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='evolving-agent')\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('evolving_agent.cli.',"
        " 'evolving_agent.memory', 'evolving_agent.jobs', 'pydantic', 'apscheduler', 'git')))\n"
        "print(loaded, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Commands:" in proc.stdout
    # _output is the neutraliser every error line goes through (cheap: click and textsafe);
    # memory.base.fastargv is the option reader the fast paths share (standard library only;
    # its package's __init__ is a docstring); _pydantic is the standard library's `types`.
    assert proc.stderr.strip() == (
        "['evolving_agent.cli._common', 'evolving_agent.cli._output', "
        "'evolving_agent.cli._pydantic', "
        "'evolving_agent.memory', 'evolving_agent.memory.base', "
        "'evolving_agent.memory.base.fastargv']"
    )


@pytest.mark.parametrize(
    ("typed", "meant"), [("bot", "boot"), ("frictoin", "friction"), ("reveiw", "review")]
)
def test_a_top_level_typo_gets_a_did_you_mean(typed: str, meant: str) -> None:
    # Newcomer snag: click suggested only among loaded commands, and ours load lazily.
    result = CliRunner().invoke(cli, [typed], prog_name="evolving-agent")
    assert result.exit_code == 2
    assert result.output == (
        f"error: No such command '{typed}'. Did you mean '{meant}'? (try 'evolving-agent --help')\n"
    )
