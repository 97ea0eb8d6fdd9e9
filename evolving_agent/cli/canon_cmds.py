"""canon: the identity's history (log / diff / show / revert / edit), with provenance."""

from __future__ import annotations

from pathlib import PurePosixPath

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo, paged
from evolving_agent.review.history import (
    CanonChange,
    canon_diff,
    canon_log,
    canon_revert,
    canon_show,
)
from evolving_agent.textsafe import one_line


@click.group("canon")
def canon_group() -> None:
    """Canon history: who changed the identity, on whose approval; undo any change."""


def _line(c: CanonChange) -> str:
    review = c.review_id or "-"
    day = c.date.strftime("%Y-%m-%d")
    return one_line(f"{c.commit[:10]}  {day}  {c.actor:<7}  {review:<14}  {c.summary}")


@canon_group.command("log")
@json_option
@click.option("-n", "--max-count", type=click.IntRange(min=1), default=None, help="At most N.")
@click.pass_context
@paged
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
        echo(_line(c))


@canon_group.command("diff")
@click.argument("rev", required=False)
@click.option(
    "--worktree", is_flag=True, help="Edits on disk not yet committed (the same as no REV)."
)
@click.pass_context
@paged
def diff_cmd(ctx: click.Context, rev: str | None, worktree: bool) -> None:
    """How canon/ changed since REV, as `git diff REV` means it; no REV: uncommitted edits.

    Compares REV with the files on disk, so `canon diff HEAD~1` shows the last commit's
    change plus any edit not yet committed.  For one commit alone, use `canon show REV`.

    \b
    Example:
      evolving-agent canon diff HEAD~3
    """
    if rev is not None and worktree:
        raise click.UsageError("give either REV or --worktree, not both")
    text = canon_diff(root_from(ctx), rev)
    echo(text or "(no changes)", nl=not text)


@canon_group.command("show")
@click.argument("rev", required=False)
@json_option
@click.pass_context
@paged
def show_cmd(ctx: click.Context, rev: str | None, as_json: bool) -> None:
    """One commit's Canon change and its provenance (default: the newest Canon change).

    \b
    Example:
      evolving-agent canon show HEAD
    """
    shown = canon_show(root_from(ctx), rev)
    if as_json:
        echo_json({**shown.change.to_json(), "diff": shown.diff})
        return
    c = shown.change
    echo(f"commit {c.commit}")
    echo(f"date   {c.date.isoformat()}")
    echo(f"actor  {c.actor}" + (f" (approved by {c.approved_by})" if c.approved_by else ""))
    if c.review_id:
        echo(f"review {c.review_id}")
    if c.evidence_ids:
        echo(f"cites  {', '.join(c.evidence_ids)}")
    echo(f"\n    {one_line(c.summary)}\n")
    echo(shown.diff or "(no change to canon/)", nl=not shown.diff)


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
    echo(
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
    from evolving_agent.memory.ops.canon_edit import EditRefused, edit_start, save_canon

    root = root_from(ctx)
    before, kept = edit_start(root, file)
    if kept is not None:
        echo(
            f"reopening your refused edit from {kept} (delete it to start from canon/{file})",
            err=True,
        )
    edited = click.edit(before, extension=PurePosixPath(file).suffix or ".txt", require_save=True)
    if edited is None:
        echo("no change")
        return
    try:
        changed = save_canon(root, file, edited, message=message)
    except EditRefused as exc:
        echo(f"your edit is kept in {exc.kept}", err=True)
        raise
    echo(f"committed canon/{file}" if changed else "no change")


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(canon_group)
