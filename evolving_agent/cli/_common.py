"""Small helpers shared by the command modules: the root, JSON output."""

from __future__ import annotations

import json
from typing import Any

import click

from evolving_agent.paths import MemoryRoot


def root_from(ctx: click.Context) -> MemoryRoot:
    """The memory root chosen by --root / $EVOLVING_AGENT_ROOT / ./memory."""
    top = ctx.find_root()
    flag = (top.obj or {}).get("root_flag")
    return MemoryRoot.resolve(flag)


def echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))
