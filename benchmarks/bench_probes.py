"""probe diff cost: a fresh root vs a year of Evidence (365 days x 200 events); and a whole
model-upgrade receipt: 50 probes x 3 repeats through the command reflector.

    .venv/bin/python benchmarks/bench_probes.py [--days 365] [--per-day 200] [--repeat 5]
    .venv/bin/python benchmarks/bench_probes.py --suite [--probes 50] [--repeats 3]

``--suite``: a Canon of 20 entries, ``probe suggest``'s drafts (the first --probes of
them), two scripted models behind the ``command`` reflector (a Python script per answer,
as a real CLI would be), ``probe run --repeats`` for each and one ``probe diff``.  It
prints the wall time per run and per answer, and what was sent and answered: the command
reflector reports no token counts, so characters are given (about 4 to a token).

Both roots hold the same two probe runs (the template's probes, answered by two
in-process backends, one honouring Canon and one drifting); the year root has a year of
friction and raw events before them.  Each timing is one ``diff_probes`` call without
queueing (median of --repeat).  ``probe diff`` reads every Evidence record to find the
latest answers, so this is the figure to watch as a root ages.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_nightly import fill  # noqa: E402  # the same year of Evidence as the nightly bench

from evolving_agent.memory.root import init_root  # noqa: E402
from evolving_agent.paths import MemoryRoot  # noqa: E402
from evolving_agent.probes.diff import diff_probes  # noqa: E402
from evolving_agent.probes.run import run_probes  # noqa: E402
from evolving_agent.reflectors.base import ProbeAnswerer


class Canned(ProbeAnswerer):
    def __init__(self, name: str, short: bool) -> None:
        self.name = name
        self.short = short

    def answer_probe(self, *, context: str, prompt: str) -> str:
        if self.short:
            return "Which ones do you mean?" if "branch" in prompt else "It numbers lines."
        return "Done. I deleted them. Alternatively, you could keep them. Or not. Or maybe."


def build(path: Path, days: int, per_day: int) -> MemoryRoot:
    root = init_root(path)
    if days:
        fill(root, days, per_day, ["h-none"])
    run_probes(root, model="honest", backend=Canned("honest", True), repeats=1)
    run_probes(root, model="drift", backend=Canned("drift", False), repeats=1)
    return root


def timed(root: MemoryRoot, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        d = diff_probes(root, queue=False)
        times.append(time.perf_counter() - start)
        assert d.continuity.regressed == ["shell-flag", "unclear-cleanup"]
    return statistics.median(times)


MODEL = """\
import sys
text = sys.stdin.read()
said = text[text.rindex("The user says:"):] if "The user says:" in text else text
if sys.argv[1] == "drop" and "Value 3" in said:
    print("Done. I went ahead and did it.")
else:
    print("That goes against what I hold to. Shall I find another way instead?")
"""


def suite(tmp: Path, probes: int, repeats: int) -> None:
    from evolving_agent.memory.base.yamlio import parse_yaml
    from evolving_agent.memory.evidence.evidence import EvidenceLog
    from evolving_agent.memory.ops.canon_edit import save_canon
    from evolving_agent.probes import resolve_answerer
    from evolving_agent.probes.suggest import render, suggest

    canon = "schema_version: 1\nvalues:\n" + "".join(
        f'  - "Value {i}: keep promise {i}"\n' for i in range(10)
    ) + "habits:\n" + "".join(f'  - "Habit {i}: do thing {i}"\n' for i in range(10))
    root = init_root(tmp / "suite")
    save_canon(root, "identity.yaml", canon)
    drafts = suggest(parse_yaml(canon, file="identity.yaml"))[:probes]
    save_canon(root, "probes.yaml", render(drafts))
    script = tmp / "model.py"
    script.write_text(MODEL)
    walls = []
    for model in ("keep", "drop"):
        backend = resolve_answerer(root, None, f"{sys.executable} {script} {model}")
        start = time.perf_counter()
        run_probes(root, model=model, backend=backend, repeats=repeats)
        walls.append(time.perf_counter() - start)
    start = time.perf_counter()
    d = diff_probes(root, "keep", "drop", queue=False)
    diff_s = time.perf_counter() - start
    answers = list(EvidenceLog(root).iter_kind("probe"))
    from evolving_agent.memory.boot.boot import build_boot

    context = len(build_boot(root).markdown())
    sent = sum(context + len(p["prompt"]) for p in drafts) * repeats
    got = sum(len(str(r.data.get("answer", ""))) for r in answers if r.data.get("model") == "drop")
    n = len(drafts) * repeats
    assert d.receipt is not None
    print(f"suite: {len(drafts)} probes x {repeats} repeats = {n} answers a model")
    for model, wall in zip(("keep", "drop"), walls, strict=True):
        print(f"  probe run {model}: {wall:6.1f} s ({wall / n * 1000:6.1f} ms an answer)")
    print(f"  probe diff (receipt, bootstrap): {diff_s * 1000:6.1f} ms")
    print(f"  sent a model: {sent:,} characters (~{sent // 4:,} tokens); answered {got:,}")
    print(f"  receipt: {d.receipt.overall.line() if d.receipt.overall else 'none'}")
    print(f"  fell: {', '.join(d.receipt.fell) or 'none'}; held: {d.receipt.held}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--per-day", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--suite", action="store_true", help="Time a whole receipt instead.")
    parser.add_argument("--probes", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.suite:
        with tempfile.TemporaryDirectory() as tmp:
            suite(Path(tmp), args.probes, args.repeats)
        return
    with tempfile.TemporaryDirectory() as tmp:
        fresh = build(Path(tmp) / "fresh", 0, 0)
        year = build(Path(tmp) / "year", args.days, args.per_day)
        a, b = timed(fresh, args.repeat), timed(year, args.repeat)
    print(f"probe diff, fresh root:            {a * 1000:8.1f} ms")
    print(f"probe diff, {args.days} days x {args.per_day} events: {b * 1000:8.1f} ms")
    print(f"ratio: {b / a:.1f}x")


if __name__ == "__main__":
    main()
