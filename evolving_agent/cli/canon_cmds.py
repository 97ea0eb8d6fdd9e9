"""canon: the identity's history (log / diff / revert), every change with its provenance."""

from __future__ import annotations

import click

from evolving_agent.cli._common import echo_json, root_from
from evolving_agent.review.history import CanonChange, canon_diff, canon_log, canon_revert


@click.group("canon")
def canon_group() -> None:
    """Canon history: who changed the identity, on whose approval; undo any change."""


def _line(c: CanonChange) -> str:
    review = c.review_id or "-"
    return (
        f"{c.commit[:10]}  {c.date.strftime('%Y-%m-%d')}  {c.actor:<7}  {review:<14}  {c.summary}"
    )


@canon_group.command("log")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("-n", "--max-count", type=click.IntRange(min=1), default=None, help="At most N.")
@click.pass_context
def log_cmd(ctx: click.Context, as_json: bool, max_count: int | None) -> None:
    """Identity changes, newest first: commit, date, actor, review id, summary.

    \b
    Example:
      evolving-agent canon log -n 10
    """
    changes = canon_log(root_from(ctx), max_count)
    if as_json:
        echo_json([c.to_json() for c in changes])
        return
    for c in changes:
        click.echo(_line(c))


@canon_group.command("diff")
@click.argument("rev", required=False)
@click.option("--worktree", is_flag=True, help="Show canon/ on disk against the last commit.")
@click.pass_context
def diff_cmd(ctx: click.Context, rev: str | None, worktree: bool) -> None:
    """What commit REV (default the last) changed in canon/; --worktree for uncommitted edits.

    \b
    Example:
      evolving-agent canon diff HEAD~1
    """
    text = canon_diff(root_from(ctx), rev, worktree=worktree)
    click.echo(text or "(no changes)", nl=not text)


@canon_group.command("revert")
@click.argument("rev")
@click.option("--force", is_flag=True, help="Even if later commits changed the same files.")
@click.pass_context
def revert_cmd(ctx: click.Context, rev: str, force: bool) -> None:
    """Restore canon/ files as they were before REV, as a new human commit.

    \b
    Example:
      evolving-agent canon revert 1a2b3c4d5e
    """
    result = canon_revert(root_from(ctx), rev, force=force)
    click.echo(
        f"reverted {result.reverted[:10]}: restored {', '.join(result.files)} "
        f"in commit {result.commit[:10]}"
    )


@canon_group.command("edit")
@click.argument("file", default="identity.yaml")
@click.option("-m", "--message", default="", help="Commit message (default: 'human edited …').")
@click.pass_context
def edit_cmd(ctx: click.Context, file: str, message: str) -> None:
    """Edit a Canon FILE in $EDITOR; it is validated, then committed as the human.

    An invalid edit is refused (exit 4, nothing written) and kept in a file so your
    work is not lost.  Start from what is on disk, including hand edits not yet
    committed (which `verify` would report until they go through here).

    \b
    Example:
      evolving-agent canon edit identity.yaml -m "values: add brevity"
    """
    from evolving_agent.errors import InvalidInput
    from evolving_agent.memory.authority import confine
    from evolving_agent.memory.canon import save_canon
    from evolving_agent.memory.root import require_root

    root = require_root(root_from(ctx))
    path = confine(root, "canon", file)
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    edited = click.edit(before, extension=path.suffix or ".txt", require_save=True)
    if edited is None:
        click.echo("no change")
        return
    try:
        changed = save_canon(root, file, edited, message=message)
    except InvalidInput:
        keep = root.state / f"rejected-{path.name}"
        keep.parent.mkdir(parents=True, exist_ok=True)
        keep.write_text(edited, encoding="utf-8")
        click.echo(f"your edit is kept in {keep}", err=True)
        raise
    click.echo(f"committed canon/{file}" if changed else "no change")


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(canon_group)
