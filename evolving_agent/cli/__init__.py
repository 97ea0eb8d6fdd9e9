"""The command line.  Commands parse, call one core function, and print.

Errors are mapped to exit codes here and only here: every ``EvolvingAgentError``
prints one line on stderr and exits with its ``exit_code``; anything else is an
unexpected failure (exit 1).  ``EVOLVING_AGENT_RAISE=1`` re-raises for debugging.
"""

from __future__ import annotations

import os
from typing import Any

import click

from evolving_agent import __version__
from evolving_agent.errors import EXIT_FAILURE, EvolvingAgentError

RAISE_ENV = "EVOLVING_AGENT_RAISE"


class _Group(click.Group):
    """Top-level group: the one place where errors become exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
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


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Memory root (default: $EVOLVING_AGENT_ROOT, else ./memory).",
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


def _register_all() -> None:
    # One module per concern; each adds its commands to the top group.
    from evolving_agent.cli import (
        canon_cmds,
        demo_cmd,
        hypothesis_cmds,
        mcp_cmd,
        memory_cmds,
        review_cmds,
        run_cmds,
        schedule_cmds,
        search_cmds,
    )

    for module in (
        memory_cmds,
        hypothesis_cmds,
        run_cmds,
        schedule_cmds,
        review_cmds,
        canon_cmds,
        search_cmds,
        mcp_cmd,
        demo_cmd,
    ):
        module.register(cli)


_register_all()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="evolving-agent")
