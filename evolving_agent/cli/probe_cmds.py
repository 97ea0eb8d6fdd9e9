"""probe: does the identity survive a model change? (run / diff / list)"""

from __future__ import annotations

import click

from evolving_agent.cli._common import echo_json, json_option, reflector_options, root_from
from evolving_agent.cli._output import echo
from evolving_agent.jobs.settings import REFLECTOR_NAMES
from evolving_agent.probes.models import AnswerView, ProbeDiff, ProbeRunResult
from evolving_agent.reflectors import names_of
from evolving_agent.reflectors.prompt import PromptReflector
from evolving_agent.textsafe import neutralise

SHOWN_LINES = 8  # answer lines printed per model; --json has them all


def _safe(text: str) -> str:
    """Model text as a terminal may show it: no control or escape characters."""
    return neutralise(text)


_backend_options = reflector_options(
    REFLECTOR_NAMES,
    which="Which backend answers (default: schedule.yaml; --reflector-cmd implies command).",
    cmd="Command for the 'command' backend (context + message on stdin, answer on stdout).",
)


@click.group("probe")
def probe_group() -> None:
    """Probes: check that a model still reads Canon as you meant it (see docs/probes.md).

    \b
    Example:
      evolving-agent probe run --model old-model --reflector-cmd "ollama run llama3.1"
      evolving-agent probe run --model new-model --reflector-cmd "ollama run qwen3"
      evolving-agent probe diff old-model new-model
    """


@probe_group.command("list")
@json_option(help="Print the probes as JSON.")
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List the probes of canon/probes.yaml with the Canon entry each one tests.

    \b
    Example:
      evolving-agent probe list
    """
    from evolving_agent.memory.canon.probe_file import resolve_entry
    from evolving_agent.probes.rules import describe
    from evolving_agent.probes.run import committed_probes

    probes, identity, _commit = committed_probes(root_from(ctx))
    rows = []
    for p in probes.probes:
        try:
            entry_text: str | None = resolve_entry(identity, p.entry)
        except ValueError:
            entry_text = None
        rows.append((p, entry_text))
    if as_json:
        echo_json(
            [
                {**p.model_dump(mode="json"), "entry_text": text, "rules": describe(p.checks)}
                for p, text in rows
            ]
        )
        return
    for p, text in rows:
        state = " (retired)" if p.retired else ""
        echo(f"{p.key}{state}  [{p.entry}]" + ("" if text else "  (no such entry in Canon)"))
        echo(f"  prompt:  {_safe(p.prompt)}")
        echo(f"  implies: {_safe(p.implies)}")
        rules = describe(p.checks)
        echo(f"  rules:   {', '.join(rules) if rules else '(none: judge only)'}")


@probe_group.command("suggest")
@click.option("--all", "every", is_flag=True, help="Draft for entries that have probes too.")
@click.pass_context
def suggest_cmd(ctx: click.Context, every: bool) -> None:
    """Draft probes for every Canon entry (three each, in the entry's language); print them.

    Nothing is written: edit the drafts, then commit them with
    'evolving-agent canon edit probes.yaml'.  Entries that already have a probe are
    skipped unless --all.

    \b
    Example:
      evolving-agent probe suggest > drafts.yaml
    """
    from evolving_agent.probes.suggest import draft_for_root, render

    echo(render(draft_for_root(root_from(ctx), every=every)), nl=False)


@probe_group.command("run")
@click.option("--model", required=True, metavar="NAME", help="The name the answers are kept under.")
@click.option(
    "--repeats",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    metavar="R",
    help="Answers asked of each probe (adherence is the share honoured).",
)
@_backend_options
@json_option(help="Print the run (record ids, probes answered) as JSON.")
@click.pass_context
def run_cmd(
    ctx: click.Context,
    model: str,
    repeats: int,
    reflector: str | None,
    reflector_cmd: str | None,
    as_json: bool,
) -> None:
    """Ask MODEL every probe R times with exactly boot's context; keep the answers in Evidence.

    Runs contained: nothing is written but one `probe` Evidence record per answer
    (masked, bounded); Canon and Today are checked around every answer.

    \b
    Example:
      evolving-agent probe run --model sonnet-4.5 --repeats 3 --reflector-cmd "claude -p --tools ''"
    """
    from evolving_agent.probes import resolve_answerer
    from evolving_agent.probes.run import check_model_name, run_probes

    root = root_from(ctx)
    model = check_model_name(model)
    backend = resolve_answerer(root, reflector, reflector_cmd)
    result = run_probes(root, model=model, backend=backend, repeats=repeats)
    if as_json:
        echo_json(result.model_dump(mode="json"))
    else:
        _print_run(result)
    if result.failed and not result.answered:
        ctx.exit(1)  # every probe failed: the run is recorded, but it measured nothing


def _print_run(r: ProbeRunResult) -> None:
    commit = (r.canon_commit or "none")[:10]
    echo(
        f"probe run {r.run}: model {r.model} (reflector {r.reflector}), Canon {commit}, "
        f"context sha256 {r.context_sha256[:12]}"
    )
    for key in r.answered:
        echo(f"  {key}: answered")
    for key, why in r.failed.items():
        echo(f"  {key}: no answer ({_safe(why)})")
    for key, why in r.skipped.items():
        echo(f"  {key}: skipped ({_safe(why)})")
    each = f", {r.repeats} answers each" if r.repeats > 1 else ""
    echo(
        f"{len(r.answered)} answered, {len(r.failed)} failed, {len(r.skipped)} skipped{each}; "
        "kept in Evidence (kind probe)"
    )


@probe_group.command("diff")
@click.argument("model_a", required=False, metavar="[MODEL_A]")
@click.argument("model_b", required=False, metavar="[MODEL_B]")
@click.option(
    "--judge",
    type=click.Choice(names_of(PromptReflector)),  # a judge is a model behind a prompt
    default=None,
    help="A judge model's structured verdict beside the rules (settings: schedule.yaml).",
)
@click.option("--judge-cmd", default=None, metavar="CMD", help="Command for a 'command' judge.")
@click.option("--no-queue", is_flag=True, help="Only compare: queue no review card.")
@json_option(help="Print rows, verdicts and the continuity figure as JSON.")
@click.pass_context
def diff_cmd(
    ctx: click.Context,
    model_a: str | None,
    model_b: str | None,
    judge: str | None,
    judge_cmd: str | None,
    no_queue: bool,
    as_json: bool,
) -> None:
    """Compare two models' answers; queue a review card per entry the new one reads differently.

    MODEL_B defaults to the model that answered last, MODEL_A to the one before it.
    A verdict is "honours" only when every rule holds (and the judge, if any, agrees);
    an undecided judge is never counted as honoured.

    \b
    Example:
      evolving-agent probe diff sonnet-4.5 sonnet-4.6 --json
    """
    from evolving_agent.probes import resolve_judge
    from evolving_agent.probes.diff import diff_probes

    root = root_from(ctx)
    result = diff_probes(
        root, model_a, model_b, judge=resolve_judge(root, judge, judge_cmd), queue=not no_queue
    )
    if as_json:
        echo_json(result.model_dump(mode="json"))
    else:
        print_diff(result)


def _answer_lines(view: AnswerView | None) -> list[str]:
    if view is None:
        return ["(no answer recorded: run 'probe run' for this model)"]
    v = view.verdict
    head = v.status + (f": {v.why()}" if v.why() else "")
    out = [f"{head}   [{view.evidence_id}]"]
    body = _safe(view.answer).splitlines() or ["(empty)"]
    out += [f"| {line}" for line in body[:SHOWN_LINES]]
    if len(body) > SHOWN_LINES:
        out.append(f"| ({len(body) - SHOWN_LINES} more lines; --json shows all)")
    return out


def print_diff(d: ProbeDiff) -> None:
    judged = f"rules + judge {d.judge}" if d.judge else "rules only, no judge configured"
    echo(f"probe diff {d.model_a} -> {d.model_b} ({judged})")
    width = max(len(d.model_a), len(d.model_b))
    for row in d.rows:
        echo("")
        mark = "  REGRESSED" if row.regressed else ""
        echo(f"{row.probe}  [{row.entry}]{mark}")
        echo(f"  implies: {_safe(row.implies)}")
        for name, view in ((d.model_a, row.a), (d.model_b, row.b)):
            lines = _answer_lines(view)
            echo(f"  {name:<{width}}  {lines[0]}")
            for line in lines[1:]:
                echo(f"  {'':<{width}}    {line}")
    echo("")
    echo(d.continuity.line())
    if d.continuity.regressed:
        echo(f"regressed: {', '.join(d.continuity.regressed)}")
    if d.continuity.undecided:
        echo(f"undecided (not counted as honoured): {', '.join(d.continuity.undecided)}")
    if d.receipt is not None:
        for line in d.receipt.lines():
            echo(_safe(line))
    for note in d.notes:
        echo(f"note: {_safe(note)}")
    for rid in d.queued:
        held = " — it holds the upgrade" if rid == d.hold else ""
        echo(f"queued {rid} for review (evolving-agent review show {rid}){held}")
    for rid in d.already_queued:
        echo(f"already queued: {rid}")


def register(cli: click.Group) -> None:
    cli.add_command(probe_group)
