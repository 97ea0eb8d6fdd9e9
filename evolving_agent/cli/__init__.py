"""The command line.  Commands parse, call one core function, and print.

Errors are mapped to exit codes here and only here: every ``EvolvingAgentError``
prints one line on stderr and exits with its ``exit_code``; anything else is an
unexpected failure (exit 1).  ``EVOLVING_AGENT_RAISE=1`` re-raises for debugging.
Click's own usage errors (unknown option, missing argument) print the same way: one
``error:`` line naming the command's --help, exit 2.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, NoReturn

import click

from evolving_agent import __version__
from evolving_agent.cli._common import ROOT_HELP, add_root_option
from evolving_agent.errors import EXIT_FAILURE, EXIT_INVALID, EXIT_USAGE, EvolvingAgentError

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
    "search": "search_cmds",
    "mcp": "mcp_cmd",
    "demo": "demo_cmd",
}


class _Group(click.Group):
    """Top-level group: lazy command loading, and the one place errors become exit codes."""

    _loaded: set[str] = set()

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMAND_MODULES)

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
            click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # `evolving-agent ... | head` closed stdout early: click exits 1 quietly.
            raise
        except EvolvingAgentError as exc:
            if os.environ.get(RAISE_ENV):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except Exception as exc:  # noqa: BLE001 - last resort: one line, not a traceback
            if os.environ.get(RAISE_ENV):
                raise
            click.echo(
                f"error: unexpected {type(exc).__name__}: {exc} "
                f"(set {RAISE_ENV}=1 to see the traceback)",
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
    click.echo(f"error: {message}{hint}", err=True)
    raise click.exceptions.Exit(EXIT_USAGE)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    metavar="DIRECTORY",
    type=click.Path(path_type=str),  # a file is the core's one-line error (exit 4)
    default=None,
    help=ROOT_HELP + " Also accepted after any subcommand.",
)
@click.version_option(__version__, prog_name="evolving-agent")
@click.pass_context
def cli(ctx: click.Context, root: str | None) -> None:
    """evolving-agent: a self that grows slowly and safely, plus a forgetting search loop.

    \b
    Quick start:
      evolving-agent demo                 # a simulated month + a short search, offline
      evolving-agent init ./memory        # create a memory root
      evolving-agent boot                 # print today's boot context
    """
    ctx.ensure_object(dict)
    ctx.obj["root_flag"] = root


def _not_utf8(arg: str) -> bool:
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def main() -> None:
    """Console-script entry point."""
    # Bytes from a non-UTF-8 terminal arrive as lone surrogates that no file can store;
    # refuse them here, before any command half-writes them.
    bad = next((a for a in sys.argv[1:] if _not_utf8(a)), None)
    if bad is not None:
        shown = bad.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        click.echo(
            f"error: argument '{shown}' is not UTF-8 text; "
            "set a UTF-8 locale or pass the text as UTF-8",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    cli(prog_name="evolving-agent")
