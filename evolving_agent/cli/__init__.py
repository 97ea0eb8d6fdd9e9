"""The command line.  Commands parse, call one core function, and print.

Errors are mapped to exit codes here and only here: every ``EvolvingAgentError``
prints one line on stderr and exits with its ``exit_code``; anything else is an
unexpected failure (exit 1).  ``EVOLVING_AGENT_RAISE=1`` re-raises for debugging.
Click's own usage errors (unknown option, missing argument) print the same way: one
``error:`` line naming the command's --help, exit 2.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import Any, NoReturn

import click

from evolving_agent import __version__
from evolving_agent.cli._common import ROOT_HELP, add_root_option
from evolving_agent.cli._output import echo
from evolving_agent.cli._pydantic import skip_plugin_discovery
from evolving_agent.errors import (
    EXIT_DENIED,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_USAGE,
    EvolvingAgentError,
)
from evolving_agent.memory.base.fastargv import utf8

RAISE_ENV = "EVOLVING_AGENT_RAISE"


# Command name -> the module that registers it.  Modules are imported only when their
# command runs (or for the top-level --help): a friction hook should not pay for git,
# the scheduler or matplotlib.
COMMAND_MODULES = {
    "init": "memory_cmds",
    "boot": "memory_cmds",
    "friction": "memory_cmds",
    "live": "memory_cmds",
    "evidence": "memory_cmds",
    "write": "memory_cmds",
    "accept": "memory_cmds",
    "verify": "memory_cmds",
    "hypothesis": "hypothesis_cmds",
    "run": "run_cmds",
    "schedule": "schedule_cmds",
    "review": "review_cmds",
    "canon": "canon_cmds",
    "probe": "probe_cmds",
    "signing": "signing_cmds",
    "deploy": "deploy_cmds",
    "drift": "drift_cmd",
    "search": "search_cmds",
    "mcp": "mcp_cmd",
    "integrations": "integrations_cmd",
    "demo": "demo_cmd",
    "remote": "sync_cmds",
    "sync": "sync_cmds",
    "clone": "sync_cmds",
    "device": "sync_cmds",
}


# The top-level --help lists every command with its one-line summary; reading them from
# here keeps --help from importing every command module (and pydantic, git, the
# scheduler with them).  Each is the first paragraph of the command's docstring, checked
# by tests/cli/test_cli.py, so the two cannot drift.
COMMAND_SUMMARIES = {
    "init": "Create a memory root: layers, git repo, Canon template, schedule.",
    "boot": "Print today's boot context (Canon, Today, Live Bus) for a system prompt.",
    "friction": "Append a friction event: something really felt off. Zero a day is fine.",
    "live": "The Live Bus: what is going on now (keyed entries).",
    "evidence": "Evidence: the append-only record (friction, raw events, journal, job records).",
    "write": "Write stdin to LAYER/RELPATH through the permission-checked writer.",
    "accept": "Commit your own hand edits of schedule.yaml, crons/*.md or canon/ files.",
    "verify": "Check the Evidence hash chain and that every Canon change came through the writer.",
    "hypothesis": "Hypotheses: beliefs under test, changed only by evidence.",
    "run": "Run a job by hand for a date (idempotent: a second run changes nothing).",
    "schedule": "Run the jobs on the cron lines of each root's schedule.yaml.",
    "review": "The human review queue: at most a few identity diffs a month reach Canon.",
    "canon": "Canon history: who changed the identity, on whose approval; undo any change.",
    "probe": "Probes: check that a model still reads Canon as you meant it (see docs/probes.md).",
    "search": "Scored improvement tasks run by coding agents in rounds, with forgetting.",
    "mcp": (
        "Serve the session's tools over stdio (MCP): friction, live_set, boot, hypotheses, "
        "hypothesis_add."
    ),
    "integrations": "Set-ups for the assistant's client (Claude Code, Codex, Gemini, OpenCode).",
    "remote": "The git remotes this device syncs with (any git URL; a bare repository will do).",
    "sync": "Exchange this device's Evidence, Live Bus, reviews and Canon with a remote.",
    "clone": "Set up a new device of the self held at URL, in DIRECTORY.",
    "device": "This device: its id, the other devices, and which one writes Today.",
    "demo": "Simulate a month of an assistant's life, then run a short forget-team search.",
    "signing": 'Signed human authority: without it, "human" is a claim anyone can make.',
    "deploy": 'Deployments that make "human" hold by the OS: the assistant as its own user.',
    "drift": (
        "Look for drift: pendulums, a monopolised carry, friction that stopped or floods, "
        "proposals waiting over a month, model fallbacks.  Each flag cites its evidence."
    ),
}


class _Group(click.Group):
    """Top-level group: lazy command loading, and the one place errors become exit codes."""

    _loaded: set[str] = set()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMAND_MODULES)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMAND_MODULES:
            # click suggests only among loaded commands, and these load lazily.
            import difflib  # only for a mistyped command

            close = difflib.get_close_matches(name, list(COMMAND_MODULES))
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx=ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's command list, from :data:`COMMAND_SUMMARIES` (no module is imported)."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            summary = COMMAND_SUMMARIES.get(name)
            if summary is None:  # a command without a summary yet: load it
                command = self.get_command(ctx, name)
                rows.append((name, command.get_short_help_str(limit) if command else ""))
            else:
                # A bare Command shortens the summary exactly as the real one would.
                rows.append((name, click.Command(name, help=summary).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if module is not None and module not in self._loaded:
            importlib.import_module(f"evolving_agent.cli.{module}").register(self)
            self._loaded.add(module)
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            add_root_option(command)
        return command

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            _usage_error(exc)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            _usage_error(exc)
        except click.exceptions.ClickException as exc:
            # e.g. $EDITOR missing: click's own "Error: …" would break the one-line
            # "error: …" promise of troubleshooting.md.
            echo(f"error: {' '.join(exc.format_message().split())}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt as exc:
            # Ctrl-C: one line (saying how to go on, when the command knows) and 130, as
            # shells expect, instead of click's "Aborted!" and 1.
            detail = str(exc)
            echo("interrupted" + (f": {detail}" if detail else ""), err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:
            # `evolving-agent ... | head` closed stdout early: click exits 1 quietly.
            raise
        except EvolvingAgentError as exc:
            if os.environ.get(RAISE_ENV):
                raise
            echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except OSError as exc:
            if os.environ.get(RAISE_ENV):
                raise
            if exc.errno in (errno.EACCES, errno.EPERM):
                # The OS-user deployment: this user may not write there (docs/authority.md).
                echo(
                    f"error: denied by the operating system: {exc.filename or '?'}: "
                    f"{exc.strerror} (this OS user may not write it; see docs/authority.md)",
                    err=True,
                )
                ctx.exit(EXIT_DENIED)
            if exc.errno != errno.ENAMETOOLONG:
                _unexpected(ctx, exc)
            # A name past the file system's limit is the user's input, not a bug: exit 4.
            name = str(exc.filename or "")[:60]
            echo(f"error: file name too long ({name}…): keep names under 255 bytes", err=True)
            ctx.exit(EXIT_INVALID)
        except Exception as exc:  # noqa: BLE001 - last resort: one line, not a traceback
            if os.environ.get(RAISE_ENV):
                raise
            _unexpected(ctx, exc)


def _unexpected(ctx: click.Context, exc: BaseException) -> NoReturn:
    echo(
        f"error: unexpected {type(exc).__name__}: {exc} (set {RAISE_ENV}=1 to see the traceback)",
        err=True,
    )
    ctx.exit(EXIT_FAILURE)


def _usage_error(exc: click.UsageError) -> NoReturn:
    """Print click's usage error as one line, as troubleshooting.md promises; exit 2."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        raise exc  # a bare group: click prints its help, which is what the user wants
    message = " ".join(exc.format_message().split())
    hint = ""
    if exc.ctx is not None:
        hint = f" (try '{exc.ctx.command_path} --help')"
    echo(f"error: {message}{hint}", err=True)
    raise click.exceptions.Exit(EXIT_USAGE)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    metavar="DIRECTORY",
    type=click.Path(path_type=str),  # a file is the core's one-line error (exit 4)
    default=None,
    help=ROOT_HELP + " Also accepted after any subcommand.",
)
@click.option(
    "--no-pager",
    is_flag=True,
    help="Print long views (evidence show, canon log, …) instead of paging them.",
)
@click.version_option(__version__, prog_name="evolving-agent")
@click.pass_context
def cli(ctx: click.Context, root: str | None, no_pager: bool) -> None:
    """evolving-agent: a self that grows slowly and safely, plus a forgetting search loop.

    \b
    Quick start:
      evolving-agent demo                 # a simulated month + a short search, offline
      evolving-agent init ./memory        # create a memory root
      evolving-agent boot                 # print today's boot context
    """
    ctx.ensure_object(dict)
    ctx.obj["root_flag"] = root
    ctx.obj["no_pager"] = no_pager


def main() -> None:
    """Console-script entry point."""
    # Bytes from a non-UTF-8 terminal arrive as lone surrogates that no file can store;
    # refuse them here, before any command half-writes them.
    bad = next((a for a in sys.argv[1:] if not utf8(a)), None)
    if bad is not None:
        shown = bad.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        echo(
            f"error: argument '{shown}' is not UTF-8 text; "
            "set a UTF-8 locale or pass the text as UTF-8",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    skip_plugin_discovery()
    cli(prog_name="evolving-agent")
