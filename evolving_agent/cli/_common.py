"""Small helpers shared by the command modules: the root, JSON output, messages."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import date
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


def reflector_options(names: Sequence[str], *, which: str, cmd: str) -> Callable[[F], F]:
    """The one ``--reflector NAME`` / ``--reflector-cmd CMD`` pair (passed as
    ``reflector`` and ``reflector_cmd``) of the commands a model answers in; ``which``
    and ``cmd`` say what the backend does there.  ``names`` is the registry's (the
    caller imports it: this module stays free of the reflectors)."""

    def add(fn: F) -> F:
        fn = click.option("--reflector-cmd", default=None, metavar="CMD", help=cmd)(fn)
        return click.option(
            "--reflector", type=click.Choice(list(names)), default=None, help=which
        )(fn)

    return add


def echo_json(obj: Any) -> None:
    echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def echo_messages(result: Result[Any]) -> None:
    """Print a result's messages on stderr (``warning: …``), after its answer."""
    for message in result.messages:
        echo(f"{message.level}: {message.text}", err=True)


class Day(click.DateTime):
    """A ``YYYY-MM-DD`` option that tells an impossible day (``2026-02-30``) from a
    mistyped one: "not a real date", not click's "does not match the format"."""

    name = "date"

    def __init__(self) -> None:
        super().__init__(["%Y-%m-%d"])

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
            year, month, day = (int(part) for part in value.strip().split("-"))
            try:
                date(year, month, day)
            except ValueError:
                import calendar  # only to say why a date is not real (it imports locale)

                why = (
                    f"there is no month {month}"
                    if not 1 <= month <= 12
                    else (
                        f"{calendar.month_name[month]} {year} has "
                        f"{calendar.monthrange(year, month)[1]} days"
                    )
                )
                self.fail(f"{value!r} is not a real date ({why})", param, ctx)
        return super().convert(value, param, ctx)


DAY = Day()
