"""review: the human's monthly queue (list / show / approve / edit / reject).

Prompts live here, never in the core: ``approve`` asks for confirmation on a terminal
and refuses (exit 2) without one unless ``--yes`` is given, so a script never hangs,
and refuses too when lines pasted after it are waiting, so none is taken as its answer.
"""

from __future__ import annotations

import os
import sys

import click

from evolving_agent.cli._common import echo_json, json_option, root_from
from evolving_agent.cli._output import echo, paged, typed_ahead
from evolving_agent.errors import MissingExtra, UsageError
from evolving_agent.memory.canon.canon_diff import describe, unified
from evolving_agent.memory.root import require_root
from evolving_agent.review.actions import edit_text, record_edit, reject_review
from evolving_agent.review.approve import ApprovalPlan, approve_review, plan_approval
from evolving_agent.review.hold import Hold, hold_on, holds
from evolving_agent.review.probe_card import ProbeCardView, probe_card_view
from evolving_agent.review.store import Review, scan_reviews, to_json
from evolving_agent.review.view import ReviewView, view_review
from evolving_agent.textsafe import one_line

approver_option = click.option(
    "--approver",
    default=None,
    metavar="NAME",
    help="Who decides (default: $USER).",
)


def _on_terminal() -> bool:
    """True when a person can answer prompts (tests replace this)."""
    return sys.stdin.isatty()


# The longest answer that can be waiting before the question: "yes" and its newline.
_ANSWER_BYTES = len(b"yes\n")


def _refuse_pasted(review_id: str) -> None:
    """Lines pasted after the command wait in the terminal, and the shell means to run
    them next: read as answers to the question (re-asked after each), every one of them
    would be swallowed.  So they are left unread, with a one-line refusal; a short
    answer typed ahead ("y") is still an answer."""
    if typed_ahead() > _ANSWER_BYTES:
        raise UsageError(
            f"approving {review_id} asks a question, but lines pasted after the command "
            "are waiting (left for the shell to run); run "
            f"'evolving-agent review approve {review_id}' on its own to answer it, "
            "or pass --yes"
        )


def _ask(question: str) -> bool:
    """``question`` answered y/N at the terminal; an answer typed ahead counts."""
    if not typed_ahead():
        return click.confirm(question, default=False)
    answer = sys.stdin.readline().strip()
    echo(f"{question} [y/N]: {answer} (typed ahead)")
    return answer.lower() in ("y", "yes")


def _approver(flag: str | None) -> str:
    return flag or os.environ.get("USER") or "human"


def _line(review: Review, hold: Hold | None = None) -> str:
    d = review.decision
    extra = f"  [{hold.notice()}]" if hold is not None else ""
    if review.status == "approved" and d is not None:
        extra = f"  [commit {(d.commit or '')[:10]} by {d.approver}]"
    elif review.status == "rejected" and d is not None:
        extra = f"  [by {d.approver}: {d.reason}]"
    elif review.status == "applying":
        extra = "  [interrupted: run 'review approve' again to finish]"
    elif review.status == "unverifiable":
        extra = "  [unverifiable: no human's Evidence record made its decision; see 'verify']"
    edited = " (edited)" if review.edit is not None else ""
    card = review.pending.probe
    what = f"probe: {card.title()}" if card is not None else describe(review.diff)
    return one_line(f"{review.id}  {review.status:<8}  {what}{edited}{extra}")


@click.group("review")
def review_group() -> None:
    """The human review queue: at most a few identity diffs a month reach Canon."""


@review_group.command("list")
@json_option(help="Print JSON (objects with id and status).")
@click.option("--pending", is_flag=True, help="Only reviews waiting for a decision.")
@click.option("--ids", "ids_only", is_flag=True, help="Only the ids, one a line (for scripts).")
@click.pass_context
@paged
def list_cmd(ctx: click.Context, as_json: bool, pending: bool, ids_only: bool) -> None:
    """List queued reviews with their status (pending, approved, rejected, applying).

    \b
    Example:
      evolving-agent review list --pending --ids
    """
    root = root_from(ctx)
    scanned = scan_reviews(root)
    reviews = scanned.reviews
    if pending:
        reviews = [r for r in reviews if r.status == "pending"]
    if as_json:
        echo_json([to_json(r) for r in reviews])
    elif ids_only:
        for r in reviews:
            echo(r.id)
    else:
        if not reviews and scanned.refused is None:
            echo("(no reviews queued; the monthly job fills the queue)")
        held = holds(root) if any(r.status == "pending" for r in reviews) else {}
        for r in reviews:
            echo(_line(r, held.get(r.pending.hypothesis) if r.status == "pending" else None))
    if scanned.refused is not None:
        raise scanned.refused  # the genuine ones are listed; the planted one is named


def _print_view(view: ReviewView, probe: ProbeCardView | None) -> None:
    r = view.review
    p = r.pending
    echo(f"review {r.id} ({r.status}, from {p.month})")
    echo(f"change: {describe(r.diff)}" + (" (edited)" if r.edit is not None else ""))
    if r.edit is not None:
        echo(f"originally: {describe(r.edit.original)}")
    if probe is not None:
        _print_probe_card(probe)
    else:
        echo(f"hypothesis: {one_line(p.hypothesis)}")
        echo(f"proposals: {', '.join(p.proposals)}")
    if p.rationale and probe is None:
        echo(f"rationale: {one_line(p.rationale)}")
    d = r.decision
    if d is not None:
        when = d.ts.astimezone().strftime("%Y-%m-%d %H:%M")
        commit = f" in commit {d.commit[:10]}" if d.commit else ""
        reason = f": {d.reason}" if d.reason else ""
        echo(f"decision: {d.status} by {d.approver} on {when}{commit}{reason}")
    if view.problem:
        echo(f"does not apply to Canon as it is now: {view.problem}")
    elif view.diff_text:
        echo("")
        echo(view.diff_text, nl=False)
    echo("")
    echo("evidence cited:")
    for ev_id, rec in view.evidence:
        if rec is None:
            echo(f"  {ev_id}  (not found in Evidence)")
        else:
            when = rec.ts.astimezone().strftime("%Y-%m-%d %H:%M")
            echo(f"  {ev_id}  {when}  {rec.kind}: {one_line(rec.text)}")


def _print_probe_card(view: ProbeCardView) -> None:
    """A probe card: what each probe asked, both models' answers, where the card came from."""
    card = view.card
    echo(f"probe card: {one_line(card.title())}")
    echo(f"entry: [{one_line(card.entry)}] {one_line(card.entry_text)}")
    runs = ", ".join(f"{one_line(m)} in run {r}" for m, r in view.runs)
    when = f" on {view.queued_at.astimezone():%Y-%m-%d %H:%M}" if view.queued_at else ""
    echo(f"queued by probe diff{when} (Evidence {view.diff_record or '?'}); answers: {runs}")
    for pair in view.pairs:
        echo("")
        if pair.prompt is None:
            echo(f"probe {pair.probe}: (no longer in canon/probes.yaml)")
        else:
            changed = " (reworded since the models answered)" if pair.prompt_changed else ""
            echo(f"probe {pair.probe} asked{changed}: {one_line(pair.prompt)}")
        if pair.implies:
            echo(f"  the entry implies: {one_line(pair.implies)}")
        for label, a in (("honoured", pair.before), (pair.verdict, pair.after)):
            why = f": {one_line(pair.why)}" if a is pair.after and pair.why else ""
            echo(f"  {one_line(a.model)} ({label}{why}; {a.evidence_id}):")
            for line in (a.error and f"(no answer: {a.error})" or a.text).splitlines() or [""]:
                echo(f"    {one_line(line)}")
    echo("")
    echo(
        "choices: approve restates the entry as proposed below; 'review edit' restates it "
        "your way; 'review reject --reason' changes nothing; to retire a probe set "
        "'retired: true' with 'evolving-agent canon edit probes.yaml', then reject"
    )


@review_group.command("show")
@click.argument("review_id", metavar="ID")
@json_option
@click.pass_context
@paged
def show_cmd(ctx: click.Context, review_id: str, as_json: bool) -> None:
    """Show a review: the diff against current Canon and the evidence it cites.

    \b
    Example:
      evolving-agent review show rev-2026-11-1
    """
    root = root_from(ctx)
    view = view_review(root, review_id)
    probe = probe_card_view(root, view.review)
    hold = hold_on(root, view.review)
    if as_json:
        echo_json(
            {
                **view.to_json(),
                "probe_card": probe.to_json() if probe else None,
                "held_by": hold.to_json() if hold else None,
            }
        )
        return
    _print_view(view, probe)
    if hold is not None:
        echo(hold.notice())
        for flag in hold.flags:
            echo(f"  {flag.kind}: {flag.title}; evidence: {', '.join(flag.evidence_ids)}")


def _confirm(plan: ApprovalPlan, yes: bool, allow_large_removal: bool) -> bool:
    """Ask the human (or take --yes); False means they declined."""
    review = plan.review
    if not yes:
        if not _on_terminal():
            raise UsageError(
                f"approving {review.id} needs confirmation and there is no terminal; "
                "pass --yes to approve from a script"
            )
        _refuse_pasted(review.id)
        if plan.applied is not None:
            echo(f"review {review.id}: {describe(review.diff)}")
            echo(unified(plan.applied.before, plan.applied.after), nl=False)
        if not _ask(f"Apply review {review.id} to Canon?"):
            return False
    if plan.needs_removal_confirm and not allow_large_removal:
        assert plan.applied is not None
        a = plan.applied
        if not _on_terminal():
            raise UsageError(
                f"review {review.id} removes {a.removed} of {a.entries_before} Canon entries "
                f"({a.removed_fraction:.0%}, more than {plan.threshold:.0%}); "
                "pass --allow-large-removal as well to approve it from a script"
            )
        typed = click.prompt(
            f"This removes {a.removed} of {a.entries_before} Canon entries "
            f"({a.removed_fraction:.0%}). Type the review id to confirm",
            default="",
            show_default=False,
        )
        if typed.strip() != review.id:
            return False
    return True


@review_group.command("approve")
@click.argument("review_id", metavar="ID")
@click.option("--yes", is_flag=True, help="Do not ask (for scripts).")
@click.option(
    "--allow-large-removal",
    is_flag=True,
    help="Also confirm a diff removing more than the policy's share of Canon.",
)
@approver_option
@click.pass_context
def approve_cmd(
    ctx: click.Context,
    review_id: str,
    yes: bool,
    allow_large_removal: bool,
    approver: str | None,
) -> None:
    """Approve a review and commit its diff to Canon with provenance.

    Asks for confirmation on a terminal; --yes for scripts.  At most the monthly
    limit (default 3) of approvals per calendar month.  A review the drift watch
    holds is refused until you acknowledge the flag ('evolving-agent drift ack
    HYPOTHESIS').  Re-running an interrupted approval finishes it.

    \b
    Example:
      evolving-agent review approve rev-2026-11-1
    """
    root = require_root(root_from(ctx))
    plan = plan_approval(root, review_id)  # refuses a review the drift watch holds
    if plan.resuming:
        echo(f"finishing the interrupted approval of {review_id}")
    elif not _confirm(plan, yes, allow_large_removal):
        # Saying no is an answer, not a failure: scripts and shells see success.
        echo("not approved; nothing changed")
        return
    result = approve_review(
        root,
        review_id,
        approver=_approver(approver),
        # The removal was confirmed above if this plan needed it; if Canon changed since
        # and now it does, the core refuses rather than apply an unconfirmed removal.
        allow_large_removal=allow_large_removal or plan.needs_removal_confirm,
        # What the human saw must still be what gets applied (--yes saw nothing).
        confirmed=None if yes else plan,
    )
    echo(
        f"approved {result.review_id}: commit {result.commit[:10]} "
        f"({result.used} of {result.plan.limit} approvals used in {result.plan.month})"
    )


@review_group.command("edit")
@click.argument("review_id", metavar="ID")
@approver_option
@click.pass_context
def edit_cmd(ctx: click.Context, review_id: str, approver: str | None) -> None:
    """Edit a pending review's proposed diff in $EDITOR; it is re-validated.

    \b
    Example:
      EDITOR=nano evolving-agent review edit rev-2026-11-1
    """
    root = require_root(root_from(ctx))
    text = edit_text(root, review_id)
    edited = click.edit(text, extension=".yaml", require_save=True)
    if edited is None:
        echo("no change; nothing recorded")
        return
    edit = record_edit(root, review_id, edited, editor=_approver(approver))
    if edit is None:
        echo("no change; nothing recorded")
        return
    echo(f"edited {review_id}: {describe(edit.diff)}")


@review_group.command("reject")
@click.argument("review_id", metavar="ID")
@click.option("--reason", required=True, help="Why (recorded in Evidence).")
@approver_option
@click.pass_context
def reject_cmd(ctx: click.Context, review_id: str, reason: str, approver: str | None) -> None:
    """Reject a review; the reason is recorded in Evidence.

    \b
    Example:
      evolving-agent review reject rev-2026-11-2 --reason "one bad week, not a pattern"
    """
    decision = reject_review(
        require_root(root_from(ctx)), review_id, reason=reason, approver=_approver(approver)
    )
    echo(f"rejected {decision.review_id}: {decision.reason}")


@review_group.command("serve")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on this run's loopback address (0: a free one chosen by the system).",
)
@click.option("--open", "open_browser", is_flag=True, help="Also open the page in a browser.")
@approver_option
@click.pass_context
def serve_cmd(ctx: click.Context, port: int, open_browser: bool, approver: str | None) -> None:
    """Serve the owner's review page on a loopback address until Ctrl-C.

    Prints one line, the address (a random 127.x.y.z of this run) with its one-time
    token: the first visit exchanges it for a session cookie of that address only,
    and it is dead after that.  --open hands the browser a private file, never the
    token on a command line.  Review cards (diff, evidence for and against, what would reverse it),
    the month at a glance and the drift watch.  Approve / edit / reject there do
    exactly what 'review approve / edit / reject' do.  Needs the [review] extra.

    \b
    Example:
      evolving-agent review serve --open
    """
    root = require_root(root_from(ctx))
    try:
        from evolving_agent.review.web.serve import serve
    except ImportError as exc:
        # Exit 4 with the install line, like every missing extra: not a usage mistake.
        raise MissingExtra("'review serve'", "review", exc.name or "the review page") from None

    def announce(url: str) -> None:
        echo(url)
        sys.stdout.flush()

    def start_browser(file_url: str) -> bool:
        import webbrowser

        try:
            return webbrowser.open(file_url)
        except webbrowser.Error:
            return False

    def note(line: str) -> None:
        echo(line, err=True)

    try:
        serve(
            root,
            port=port,
            approver=_approver(approver),
            announce=announce,
            open_browser=start_browser if open_browser else None,
            note=note,
        )
    except OSError as exc:
        raise UsageError(f"cannot serve on loopback port {port}: {exc.strerror or exc}") from None


def register(group: click.Group) -> None:
    """Add this module's commands to the top-level group."""
    group.add_command(review_group)
