"""Memory-root commands: init, boot, friction, live, evidence, write, verify."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from shlex import quote
from typing import Any

import click

from evolving_agent.cli._common import DAY, echo_json, echo_messages, json_option, root_from
from evolving_agent.cli._output import echo, paged
from evolving_agent.errors import EvolvingAgentError, TamperingFound, UsageError
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.boot.bootview import DEFAULT_MAX_CHARS, MAX_CHARS_ENV, MIN_MAX_CHARS
from evolving_agent.memory.canon.policy import ACTORS, Actor
from evolving_agent.memory.evidence.evidence import EvidenceRecord
from evolving_agent.memory.ops import events, live
from evolving_agent.memory.root import init_root, require_root
from evolving_agent.paths import LAYERS, Layer, MemoryRoot
from evolving_agent.textsafe import one_line

# boot, verify and the boot file are imported inside their commands: a friction write,
# the command hooks and assistants run most, should not pay for them.


def _actor_option(help: str = "Who is acting (the assistant is 'session').") -> Any:
    """The one ``--as ACTOR`` option of the memory commands (the assistant by default)."""
    return click.option(
        "--as", "actor", type=click.Choice(ACTORS), default="session", show_default=True, help=help
    )


actor_option = _actor_option()


@click.command("init")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.pass_context
def init_cmd(ctx: click.Context, path: Path | None) -> None:
    """Create a memory root: layers, git repo, Canon template, schedule.

    \b
    Example:
      evolving-agent init ./memory
    """
    default = root_from(ctx).path
    root = init_root(path if path is not None else default)
    echo(f"created memory root at {root.path}")
    # Through `canon edit`, not an editor on the file: a hand edit is uncommitted, and
    # `verify` would report it as changed behind the writer's back.
    where = "" if root.path.absolute() == default.absolute() else f" --root {quote(str(root.path))}"
    # Each command alone on its line, unquoted around: pasted as is, it runs.
    echo(f"next, say who the assistant is:  evolving-agent canon edit{where}")
    echo(f"then see what a session starts with:  evolving-agent boot{where}")


@click.command("boot")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["markdown", "json", "claude-hook"]),
    default="markdown",
    show_default=True,
)
@click.option(
    "--write-file",
    "write_file",
    # Checked when writing, not by click: a bad path must not cost the hook its stdout.
    type=click.Path(path_type=Path),
    default=None,
    help="Also write the Markdown boot context to this file (for a CLAUDE.md @import).",
)
@click.option(
    "--max-chars",
    type=click.IntRange(min=MIN_MAX_CHARS),
    default=DEFAULT_MAX_CHARS,
    envvar=MAX_CHARS_ENV,
    show_default=True,
    help=f"Size budget of the Markdown context (env {MAX_CHARS_ENV}); Claude Code "
    "keeps about 10,000 characters of hook context.",
)
@click.pass_context
def boot_cmd(ctx: click.Context, fmt: str, write_file: Path | None, max_chars: int) -> None:
    """Print today's boot context (Canon, Today, Live Bus) for a system prompt.

    Never reads the Evidence history, so it costs the same on day 1 and day 1,000.
    Serves Canon only as the last writer commit left it, and fits --max-chars (the
    Live Bus is cut first, with a "(n more ...)" note).  Notices go to stderr too.
    --write-file also refreshes a Markdown copy that CLAUDE.md or AGENTS.md can import;
    stdout stays exactly the chosen format, and with claude-hook a failed --write-file
    is a warning, never a lost hook.

    \b
    Example (Claude Code SessionStart hook, refreshing the @import fallback):
      evolving-agent boot --format claude-hook --write-file .claude/evolving-agent-boot.md
    """
    from evolving_agent.integrations.bootfile import write_boot_file
    from evolving_agent.memory.boot.boot import build_boot

    root = root_from(ctx)
    boot = build_boot(root, max_chars=max_chars)
    for warning in boot.warnings:
        echo(f"warning: {warning}", err=True)
    if fmt == "claude-hook":
        echo(boot.claude_hook())
        if write_file is not None:
            try:
                write_boot_file(root, write_file, boot)
            except (EvolvingAgentError, OSError) as exc:
                echo(f"warning: boot file not written: {exc}", err=True)
        return
    if write_file is not None:
        write_boot_file(root, write_file, boot)
    if fmt == "json":
        echo_json(boot.model_dump())
    else:
        echo(boot.markdown(), nl=False)


@click.command("friction")
@click.argument("text")
@click.option("--session", default=None, help="Session id the event came from.")
@click.option("--supports", metavar="HID", default=None, help="Hypothesis this supports.")
@click.option("--contradicts", metavar="HID", default=None, help="Hypothesis this contradicts.")
@actor_option
@click.pass_context
def friction_cmd(
    ctx: click.Context,
    text: str,
    session: str | None,
    supports: str | None,
    contradicts: str | None,
    actor: Actor,
) -> None:
    """Append a friction event: something really felt off.  Zero a day is fine.

    \b
    Example:
      evolving-agent friction "started writing 'or you could also…' unasked; stopped"
    """
    result = events.record_friction(
        root_from(ctx),
        actor,
        text,
        session=session,
        supports=supports,
        contradicts=contradicts,
        refuse_unknown=True,  # a person typed the id: refuse it rather than keep it uncounted
    )
    echo(result.value.id)
    echo_messages(result)


@click.group("live")
def live_group() -> None:
    """The Live Bus: what is going on now (keyed entries)."""


@live_group.command("set")
@click.argument("key")
@click.argument("text")
@actor_option
@click.pass_context
def live_set(ctx: click.Context, key: str, text: str, actor: Actor) -> None:
    """Set KEY to TEXT (replaces any earlier value).

    \b
    Example:
      evolving-agent live set thread "refactoring the parser; stopped at tests"
    """
    root = require_root(root_from(ctx))
    live.set_entry(root, actor, key, text)
    echo(f"{key} set")


@live_group.command("show")
@json_option
@click.pass_context
@paged
def live_show(ctx: click.Context, as_json: bool) -> None:
    """Show every Live Bus entry.

    \b
    Example:
      evolving-agent live show --json
    """
    scan = live.scan(require_root(root_from(ctx)))
    for skipped in scan.skipped:
        echo(f"warning: {skipped}", err=True)
    entries = scan.entries
    if as_json:
        echo_json([e.model_dump() for e in entries])
        return
    if not entries:
        echo("(the Live Bus is empty)")
    for e in entries:
        echo(f"{e.key}: {one_line(e.text)}  [{one_line(e.actor)}, {one_line(e.updated)}]")


@live_group.command("clear")
@click.argument("key")
@actor_option
@click.pass_context
def live_clear(ctx: click.Context, key: str, actor: Actor) -> None:
    """Remove KEY from the Live Bus.

    \b
    Example:
      evolving-agent live clear thread
    """
    root = require_root(root_from(ctx))
    existed = live.clear_entry(root, actor, key)
    echo(f"{key} cleared" if existed else f"{key} was not set")


@click.group("evidence")
def evidence_group() -> None:
    """Evidence: the append-only record (friction, raw events, journal, job records)."""


@evidence_group.command("append")
@click.option("--kind", type=click.Choice(["raw", "journal"]), required=True)
@click.argument("text")
@click.option("--session", default=None)
@actor_option
@click.pass_context
def evidence_append(
    ctx: click.Context, kind: str, text: str, session: str | None, actor: Actor
) -> None:
    """Append a raw event or a journal entry.

    \b
    Example:
      evolving-agent evidence append --kind journal "long pairing session on the parser"
    """
    rec = events.append_event(root_from(ctx), actor, kind, text, session=session)
    echo(rec.id)


def _print_records(records: list[EvidenceRecord], *, with_day: bool = False) -> None:
    if not records:
        echo("(no evidence that day)" if not with_day else "(no evidence in that range)")
    fmt = "%Y-%m-%d %H:%M:%S" if with_day else "%H:%M:%S"
    for r in records:
        links = (("supports", r.supports), ("contradicts", r.contradicts))
        tags = "".join(f" [{k} {v}]" for k, v in links if v)
        line = f"{r.ts.strftime(fmt)} {r.id} {r.kind:<12} {r.actor:<8} {r.text}{tags}"
        echo(one_line(line))


_DAY = DAY


@evidence_group.command("show")
@click.option("--date", "day", type=_DAY, default=None, help="Day to show (default: today).")
@click.option("--since", type=_DAY, default=None, help="First day of a range (with --until).")
@click.option("--until", type=_DAY, default=None, help="Last day of a range (default: today).")
@click.option("--month", default=None, metavar="YYYY-MM", help="A whole calendar month.")
@json_option(help="Print JSON lines' records as a list.")
@click.pass_context
@paged
def evidence_show(
    ctx: click.Context,
    day: object,
    since: object,
    until: object,
    month: str | None,
    as_json: bool,
) -> None:
    """Show Evidence: one day (default today), a range, or a month.

    \b
    Examples:
      evolving-agent evidence show --date 2026-11-29 --json
      evolving-agent evidence show --since 2026-11-01 --until 2026-11-14
      evolving-agent evidence show --month 2026-11
    """
    from datetime import datetime

    def as_date(v: object) -> date | None:
        return v.date() if isinstance(v, datetime) else None

    ranged = since is not None or until is not None or month is not None
    if day is not None and ranged or month is not None and (since or until):
        raise UsageError("give --date, or --since/--until, or --month (one of them)")
    root = root_from(ctx)
    if month is not None:
        from evolving_agent.review.glance import month_bounds

        start, end = month_bounds(month)
        records = events.show_range(root, start, end)
    elif ranged:
        end = as_date(until) or date.today()
        start = as_date(since) or end
        records = events.show_range(root, start, end)
    else:
        records = events.show(root, as_date(day) or date.today())
    if as_json:
        echo_json([r.model_dump(mode="json") for r in records])
    else:
        _print_records(records, with_day=ranged)


@evidence_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@_actor_option("Acting as (the assistant's default; the human may say --as human).")
@click.pass_context
def evidence_import(ctx: click.Context, file: Path, actor: Actor) -> None:
    """Bulk-append events from JSON lines (ts, kind, text, session?, supports?, contradicts?).

    Every line is validated first; one malformed line aborts with its line number and
    nothing is appended.  Events are recorded now, in today's file; each line's ts is
    kept as data.claimed_ts (a back-dated import cannot fill past days).

    \b
    Example:
      evolving-agent evidence import old-sessions.jsonl
    """
    records = events.import_events(root_from(ctx), actor, file)
    echo(f"imported {len(records)} event(s)")


@evidence_group.command("repair")
@click.option(
    "--date",
    "day",
    type=DAY,
    default=None,
    help="Day to repair (default: every day).",
)
@actor_option
@click.pass_context
def evidence_repair(ctx: click.Context, day: object, actor: Actor) -> None:
    """Move a torn last line (a writer killed mid-append) aside so the day goes on.

    The bytes are kept in evidence/torn/ and a 'repair' record holds their hash.
    Appends do this on their own; this is the same by hand.

    \b
    Example:
      evolving-agent evidence repair --date 2026-11-29
    """
    from datetime import datetime

    from evolving_agent.memory.evidence.evidence import repair_days

    root = require_root(root_from(ctx))
    the_day = day.date() if isinstance(day, datetime) else None
    repairs = repair_days(root, actor, the_day)
    if not repairs:
        echo("nothing to repair: every day file ends with a whole record")
    for r in repairs:
        echo(
            f"{r.day}: moved {r.size} torn byte(s) to {r.moved_to} "
            f"(sha256 {r.sha256[:12]}, record {r.record.id})"
        )


@click.command("write")
@click.option("--as", "actor", type=click.Choice(ACTORS), required=True, help="Acting as.")
@click.argument("layer", type=click.Choice(LAYERS))
@click.argument("relpath")
@click.pass_context
def write_cmd(ctx: click.Context, actor: Actor, layer: Layer, relpath: str) -> None:
    """Write stdin to LAYER/RELPATH through the permission-checked writer.

    A denied write changes nothing, is recorded in Evidence, and exits 3.

    \b
    Example:
      echo "Lead with the answer." | evolving-agent write --as human today bias.md
    """
    root: MemoryRoot = require_root(root_from(ctx))
    data = sys.stdin.buffer.read()
    if layer == "live":  # the same checks as 'live set': a bad entry never reaches boot
        path = live.write_entry_file(root, actor, relpath, data)
    elif layer == "today":
        from evolving_agent.memory.ops.today import write_today_file

        path = write_today_file(root, actor, relpath, data)
    else:
        path = Writer(root, actor).write(layer, relpath, data, message=f"{actor} wrote {relpath}")
    echo(f"wrote {path}")


@click.command("accept")
@click.argument("files", nargs=-1, required=True)
@click.option("-m", "--message", default="", help="Commit message.")
@click.pass_context
def accept_cmd(ctx: click.Context, files: tuple[str, ...], message: str) -> None:
    """Commit your own hand edits of schedule.yaml, crons/*.md or canon/ files.

    FILES are relative to the memory root.  verify reports any tracked file changed
    outside the writer; when the change is yours, this validates it and commits it as
    the human, with provenance, so verify passes again.

    \b
    Example:
      evolving-agent accept schedule.yaml crons/nightly.md -m "nightly at 02:00"
    """
    from evolving_agent.jobs.settings import accept_edits

    root = require_root(root_from(ctx))
    changed = accept_edits(root, list(files), message=message)
    echo(f"committed {', '.join(changed)}" if changed else "no change")


@click.command("verify")
@json_option
@click.pass_context
def verify_cmd(ctx: click.Context, as_json: bool) -> None:
    """Check the Evidence hash chain and that every Canon change came through the writer.

    Exit 5 when anything was changed behind the writer's back.

    \b
    Example:
      evolving-agent verify --json
    """
    from evolving_agent.memory.verify import verify_root

    report = verify_root(root_from(ctx))
    if as_json:
        echo_json(
            {
                "ok": report.ok,
                "evidence_records": report.evidence_records,
                "canon_commits": report.canon_commits,
                "problems": report.problems,
                "notes": report.notes,
            }
        )
    if not report.ok:
        raise TamperingFound(report.problems)
    if not as_json:
        echo(
            f"ok: {report.evidence_records} evidence record(s) chained, "
            f"{report.canon_commits} Canon change(s) with provenance"
        )
        for note in report.notes:  # what "ok" does not prove
            echo(f"note: {note}", err=True)


def register(group: click.Group) -> None:
    for cmd in (
        init_cmd,
        boot_cmd,
        friction_cmd,
        live_group,
        evidence_group,
        write_cmd,
        accept_cmd,
        verify_cmd,
    ):
        group.add_command(cmd)
