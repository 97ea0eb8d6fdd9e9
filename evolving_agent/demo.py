"""The demo: a simulated month on a fresh root, then a short forget-team search.

Everything is offline and deterministic (rules reflector, tsp-example agent); it is the
first thing a newcomer runs, so each step says in a line or two what just happened
and where to look.  The core narrates through a callback; the CLI prints.
"""

from __future__ import annotations

import calendar
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from importlib import resources
from pathlib import Path

from evolving_agent.errors import InvalidInput, WriteDenied
from evolving_agent.extras import check as check_extra
from evolving_agent.memory.authority import Writer
from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.ops.hypotheses import list_hypotheses
from evolving_agent.memory.root import init_root
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot

Say = Callable[[str], None]


@dataclass
class DemoResult:
    directory: Path
    root: MemoryRoot
    run_dir: Path
    report: Path
    carry_types: list[str]
    approved: str | None  # None when kept: the review is left pending for the reader
    reverted: str | None


def example_dir() -> Path:
    """The bundled TSP example (package data, so any install has it)."""
    path = Path(str(resources.files("evolving_agent") / "data" / "examples" / "tsp"))
    if not (path / "candidate").is_dir():
        raise InvalidInput(f"the bundled example is missing from {path}; reinstall evolving-agent")
    return path


def _prepare(directory: Path) -> Path:
    directory = directory.absolute()
    if directory.exists() and any(directory.iterdir()):
        raise InvalidInput(
            f"{directory} is not empty; choose a new or empty directory "
            "(or remove it to run the demo again)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def demo_month(today: date) -> tuple[date, int]:
    """The last full calendar month before ``today``: (first day, number of days)."""
    last = today.replace(day=1) - timedelta(days=1)
    return last.replace(day=1), calendar.monthrange(last.year, last.month)[1]


def run_demo(
    directory: Path | None, *, say: Say, today: date | None = None, keep: bool = False
) -> DemoResult:
    """Run the demo in ``directory``.  ``keep``: leave the month's review pending, so the
    root it leaves behind is one to continue in (the README's slow-clock tour).

    Without a directory the demo runs in a temporary folder and removes it at the end
    (or on any failure): a plain ``demo`` leaves nothing behind.
    """
    # Before anything is made: the search step writes a plotted report.
    check_extra("matplotlib", "the demo's search report")
    if directory is not None:
        return _run_demo(directory, say=say, today=today, keep=keep, temporary=False)
    base = Path(tempfile.mkdtemp(prefix="evolving-agent-demo-"))
    try:
        result = _run_demo(base, say=say, today=today, keep=keep, temporary=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    say(f"The demo ran in a temporary folder, now removed ({base}).")
    say("To look around afterwards: evolving-agent demo --keep ./demo")
    return result


def _run_demo(
    directory: Path, *, say: Say, today: date | None, keep: bool, temporary: bool
) -> DemoResult:
    from evolving_agent.jobs.simulate import simulate_month
    from evolving_agent.review.approve import approve_review
    from evolving_agent.review.history import canon_revert
    from evolving_agent.review.store import list_reviews
    from evolving_agent.search.config import SearchConfig
    from evolving_agent.search.report_render import write_report
    from evolving_agent.search.runner import ProgressEvent, run_search

    base = _prepare(directory)
    today = today or date.today()

    say("1. A memory root: four layers, a Canon template, a schedule, a git repository.")
    root = init_root(base / "memory")
    say(f"   created {root.path}")

    say("2. Boot: what the assistant starts its day with (Canon + Today + Live Bus).")
    boot = build_boot(root)
    say(f"   {len(boot.markdown().splitlines())} lines; bias: {boot.bias}")

    say("3. Authority: the nightly job tries to rewrite the identity file.")
    try:
        Writer(root, "nightly").write("canon", "identity.yaml", "name: Someone else\n")
    except WriteDenied as exc:
        say(f"   refused: {exc} (recorded in Evidence)")

    start, days = demo_month(today)
    say(f"4. A simulated month ({start:%B %Y}): friction events, nightly runs, weekly")
    say("   proposals on Sundays, and the monthly review queue at the month's end.")
    weeks: list[str] = []

    def progress(_i: int, day: date, message: str) -> None:
        if message.startswith(("weekly", "monthly")):
            weeks.append(f"   {day:%a %d %b}: {message}")

    sim = simulate_month(root, start, days, progress=progress)
    for line in weeks:
        say(line)
    carries = [c for c in sim.carry_types if c]
    if sim.raised:
        hyps = {h.id: h for h in list_hypotheses(root)}
        raised = hyps[sim.raised[0]]
        say("   raised by the nightly job from untagged friction that recurred within a week:")
        say(f"     {raised.id} ({raised.state}, origin {raised.origin}): {raised.text}")
    night = next(
        (
            i
            for i, (hid, bias) in enumerate(zip(sim.carried, sim.biases, strict=True))
            if hid == sim.hypotheses[0] and bias
        ),
        None,
    )
    if night is not None:
        bias = sim.biases[night] or ""
        say(f"   the bias booted on {start + timedelta(days=night + 1)} (trigger → counter-move,")
        say("   grounded in that day's friction; the carry type frames it, never reverses it):")
        for line in bias.splitlines():
            say(f"     {line}")
    spread = {hid: sim.carried.count(hid) for hid in dict.fromkeys(h for h in sim.carried if h)}
    say(
        f"   {len(carries)} carries over {len(spread)} hypotheses "
        f"({', '.join(f'{h}: {n}' for h, n in spread.items())}); unresolved ones first,"
    )
    say("   a hypothesis already proposed for Canon steps aside.")
    say("5. The human reviews the queue (at most 3 identity diffs a month).")
    pending = [r for r in list_reviews(root) if r.status == "pending"]
    if not pending:
        raise InvalidInput("the simulated month queued no review; this is a bug in the demo")
    first = pending[0]
    approved_id = reverted_commit = None
    if keep:
        for review in pending:
            say(f"   left pending for you: {review.id}: {review.diff.op} to {review.diff.section}")
    else:
        approved = approve_review(root, first.id, approver="demo-human")
        say(f"   approved {first.id}: {first.diff.op} to {first.diff.section}: {first.diff.text!r}")
        say(f"   committed to Canon as {approved.commit[:10]} with the review id in its trailers")
        reverted = canon_revert(root, approved.commit)
        say(f"   …and reverted as {reverted.commit[:10]}: every identity change is reversible")
        approved_id, reverted_commit = first.id, reverted.commit
    report = verify_root(root)
    if not report.ok:
        raise InvalidInput("verify failed on the demo root:\n" + "\n".join(report.problems))
    say(
        f"   verify: ok ({report.evidence_records} evidence records chained, "
        f"{report.canon_commits} Canon changes with provenance)"
    )

    example = example_dir()
    say("6. A forget-team search on the bundled example (200-city tour, lower is better):")
    say("   2 tsp-example agents, 3 rounds; at each boundary everything but the best is forgotten.")
    config = SearchConfig(
        candidate=example / "candidate",
        task=example / "task.md",
        score_cmd=f"{shlex.quote(sys.executable)} {shlex.quote(str(example / 'score.py'))}",
        minimize=True,
        agent="tsp-example",
        policy="forget-team",
        agents=2,
        rounds=3,
        turns=12,
        out=base / "search-run",
        workdir=base,
    )

    def search_progress(event: ProgressEvent) -> None:
        if event.kind == "round" and event.round > 1:
            say(
                f"   round {event.round - 1} done after {event.turns_done}/{event.turns_planned} "
                f"turns, best {event.best_score:.0f}: forgetting all but the best"
            )

    summary = run_search(config, progress=search_progress)
    say(f"   tour length {summary.seed_score:.0f} → {summary.best_score:.0f}")
    files = write_report(summary.run_dir)
    say(f"   report: {files.markdown}")

    if not temporary:
        say("Where to look:")
        say(f"   {root.path}/canon/identity.yaml   the identity (git log there shows its history)")
        say(f"   {root.path}/evidence/             append-only, hash-chained events")
        say(f"   {summary.run_dir}/log.jsonl   one record per search turn; best/ holds the winner")
        say(f"   {files.png}")
    if keep:
        say(f"Kept: {root.path} has lived a month; {len(pending)} review(s) wait for you:")
        say(f"   export EVOLVING_AGENT_ROOT={shlex.quote(str(root.path))}")
        say("   evolving-agent review list")
    elif not temporary:
        say(f"Try: evolving-agent --root {root.path} boot")
    return DemoResult(
        directory=base,
        root=root,
        run_dir=summary.run_dir,
        report=files.markdown,
        carry_types=carries,
        approved=approved_id,
        reverted=reverted_commit,
    )
