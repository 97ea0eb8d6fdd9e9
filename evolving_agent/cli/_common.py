"""Small helpers shared by the command modules: the root, JSON output, messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar, overload

import click

from evolving_agent.cli._output import echo
from evolving_agent.paths import MemoryRoot
from evolving_agent.results import Result

ROOT_HELP = "Memory root (default: $EVOLVING_AGENT_ROOT, else ./memory)."


def root_from(ctx: click.Context) -> MemoryRoot:
    """The memory root chosen by --root / $EVOLVING_AGENT_ROOT / ./memory."""
    top = ctx.find_root()
    flag = (top.obj or {}).get("root_flag")
    return MemoryRoot.resolve(flag)


def _remember_root(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # Contexts are made outermost first, so a --root given after the subcommand is
    # seen last and wins over one given before it, as the last of a repeated option does.
    if value is not None:
        ctx.find_root().ensure_object(dict)["root_flag"] = value


def add_root_option(command: click.Command) -> None:
    """Accept ``--root`` on ``command`` and every subcommand, not only before them.

    Users add ``--root DIR`` at the end of a command line they already have (hooks, MCP
    configs, cron lines); the top-level group's option alone would refuse that.
    """
    if not any(p.name == "root" for p in command.params):
        command.params.append(
            click.Option(
                ["--root"],
                metavar="DIRECTORY",
                type=click.Path(path_type=str),  # a file is the core's one-line error (exit 4)
                default=None,
                expose_value=False,
                callback=_remember_root,
                help=ROOT_HELP,
            )
        )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_root_option(sub)


F = TypeVar("F", bound=Callable[..., Any])


@overload
def json_option(fn: F, /) -> F: ...
@overload
def json_option(*, help: str = ...) -> Callable[[F], F]: ...
def json_option(fn: F | None = None, /, *, help: str = "Print JSON.") -> Any:
    """The one ``--json`` flag (passed as ``as_json``): ``@json_option`` or, to say
    what the JSON holds, ``@json_option(help="...")``.  (sqlite-utils'
    ``output_options`` shape: one decorator per repeated option.)"""
    option = click.option("--json", "as_json", is_flag=True, help=help)
    return option(fn) if fn is not None else option


def echo_json(obj: Any) -> None:
    echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def echo_messages(result: Result[Any]) -> None:
    """Print a result's messages on stderr (``warning: …``), after its answer."""
    for message in result.messages:
        echo(f"{message.level}: {message.text}", err=True)
