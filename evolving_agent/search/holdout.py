"""The holdout: a second sealed scorer the agents never see, gating the restart seed.

``--holdout CMD`` names a scorer of the same candidates on other instances or with a
stricter verifier (``examples/circles/score.py --strict``).  It is sealed like the
judge (``holdout-seal.json``: the resolved command and the SHA-256 of every file it
names; a resume refuses a run whose holdout files changed) and confined like it; its
folders are hidden from every agent's sandbox, and nothing it prints reaches a prompt,
a record the agents read, or their environment.  Its verdicts live in the run
directory only (``holdout.jsonl``).

When it runs (each on a clean export, like the judge):

* on the seed, before any turn: a seed the holdout gives no number is refused;
* at every round boundary, on the candidate the next round restarts from;
* at the end, on the run's final best.

**The gate.**  A candidate *passes* when the holdout gives it a number and that number
is not worse than the holdout score of the previous restart seed (the seed, for round
2) by more than ``--holdout-margin`` (absolute, in the holdout's units; default 0).
The next round restarts from the team's best candidate if it passes; else from the
next-best candidate of the run that passes (at most :data:`TRIES` are checked a
boundary), else from the previous restart seed again.  The search's own best (what
the reducer counts improvements against) is the reported best either way.

**The gap and the alarm.**  Each row of the report's holdout table is a round's best
at its end: reported score, holdout score, and the gap ``reported - holdout``.  The
alarm fires when, since the round end where the holdout last reached a new best (the
seed, if it never did), the reported best climbed by more than the seed's noise floor
-- the holdout did not climb with it, or the final best fails it (direction-aware) --
the inflation a dead parameter or a lenient evaluator produces.  It says nothing when
both climb, whatever the gap's size: the two scorers need not share units.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evolving_agent.errors import InvalidInput
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.judge import Seal, seal_command
from evolving_agent.search.rundir import TurnRecord, write_json_atomic
from evolving_agent.search.text import fmt_number

SEAL = "holdout-seal.json"
LOG = "holdout.jsonl"
TRIES = 3  # candidates checked at one boundary before falling back


@dataclass(frozen=True)
class Check:
    """One holdout verdict: which candidate, in which role, and what it gave."""

    role: str  # "seed", "restart" (a boundary's candidate), "final"
    round: int  # the round whose end it is (0: the seed)
    commit: str
    reported: float | None
    holdout: float | None
    passed: bool
    chosen: bool  # the next round restarts from it (the seed: always)
    feedback: str = ""  # the holdout's first line (private: never shown to an agent)

    @property
    def gap(self) -> float | None:
        if self.reported is None or self.holdout is None:
            return None
        return self.reported - self.holdout


JudgeFn = Callable[[Path, str], tuple[float | None, str]]  # (repo, commit) -> verdict


def seal_holdout(config: SearchConfig, run_dir: Path) -> dict[str, Any] | None:
    """Seal the holdout command's files (``holdout-seal.json``); None without one."""
    if not config.holdout_cmd:
        return None
    assert config.workdir is not None
    command, files = seal_command(config.holdout_cmd, config.workdir)
    seal = {"score_cmd": command, "files": files}
    write_json_atomic(run_dir / SEAL, seal)
    return seal


def read_seal(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / SEAL
    return json.loads(path.read_text()) if path.is_file() else None


def changed(run_dir: Path) -> list[str]:
    """Holdout files that changed since the run sealed them."""
    seal = read_seal(run_dir)
    return [] if seal is None else Seal(seal["files"]).changed()


def read_checks(run_dir: Path) -> list[Check]:
    path = Path(run_dir) / LOG
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            data = json.loads(line)
            out.append(Check(**data))
        except (json.JSONDecodeError, TypeError):
            continue  # a torn last line
    return out


def _append(run_dir: Path, check: Check) -> None:
    with (Path(run_dir) / LOG).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(check)) + "\n")


def _better(a: float, b: float, minimize: bool) -> bool:
    return a < b if minimize else a > b


def passes(holdout: float | None, previous: float | None, *, minimize: bool, margin: float) -> bool:
    """The gate's rule (module doc): a number, no worse than ``previous`` by > margin."""
    if holdout is None:
        return False
    if previous is None:
        return True
    loss = holdout - previous if minimize else previous - holdout
    return loss <= margin


@dataclass(frozen=True)
class Restart:
    commit: str
    score: float
    round: int  # the round whose repository holds the commit


class Holdout:
    """One run's holdout: checks candidates and remembers every verdict on disk."""

    def __init__(
        self,
        run_dir: Path,
        judge: JudgeFn,
        *,
        minimize: bool,
        margin: float,
        repo_of: Callable[[int], Path],
    ) -> None:
        self.run_dir = Path(run_dir)
        self.judge = judge
        self.minimize = minimize
        self.margin = margin
        self.repo_of = repo_of
        self.checks = read_checks(self.run_dir)

    def _score(self, commit: str, round: int) -> tuple[float | None, str]:
        for c in self.checks:  # a resume, or a candidate checked before: not again
            if c.commit == commit and c.role != "final":
                return c.holdout, c.feedback
        return self.judge(self.repo_of(round), commit)

    def check_seed(self, commit: str, reported: float) -> Check:
        seed = next((c for c in self.checks if c.role == "seed"), None)
        if seed is not None:
            return seed
        score, feedback = self.judge(self.repo_of(1), commit)
        if score is None:
            raise InvalidInput(f"the holdout gave no number on the seed candidate ({feedback})")
        seed = Check("seed", 0, commit, reported, score, True, True, feedback)
        self._record(seed)
        return seed

    def _record(self, check: Check) -> None:
        _append(self.run_dir, check)
        self.checks.append(check)

    def current(self) -> Check:
        """The restart seed in force (the last chosen check)."""
        return [c for c in self.checks if c.chosen][-1]

    def restart_seed(self, number: int, records: Sequence[TurnRecord], best: Restart) -> Restart:
        """The candidate round ``number`` restarts from (module doc: the gate)."""
        done = [c for c in self.checks if c.role == "restart" and c.round == number - 1]
        chosen = next((c for c in done if c.chosen), None)
        previous = self.current() if chosen is None else chosen
        if chosen is not None:  # a resume: this boundary was decided already
            return self._restart_of(chosen, records, best)
        prior = previous.holdout
        start = previous
        options = _ranked(records, number, self.minimize, best)
        tried = 0
        for rec_commit, rec_score, rec_round in options:
            if start.reported is not None and not _better(rec_score, start.reported, self.minimize):
                break  # no better than the restart seed in force: keep that one
            if tried >= TRIES:
                break
            tried += 1
            score, feedback = self._score(rec_commit, rec_round)
            ok = passes(score, prior, minimize=self.minimize, margin=self.margin)
            check = Check("restart", number - 1, rec_commit, rec_score, score, ok, ok, feedback)
            self._record(check)
            if ok:
                return Restart(rec_commit, rec_score, rec_round)
        # Nothing better passed: the previous restart seed again (recorded as chosen).
        again = Check(
            "restart", number - 1, start.commit, start.reported, start.holdout, True, True,
            start.feedback,
        )  # fmt: skip
        self._record(again)
        return self._restart_of(again, records, best)

    def _restart_of(self, check: Check, records: Sequence[TurnRecord], best: Restart) -> Restart:
        if check.commit == best.commit:
            return best
        for r in records:
            if r.commit == check.commit and r.score is not None:
                return Restart(r.commit, r.score, r.round)
        # The run's seed or an earlier round's start: the round whose start it was.
        first = next((c for c in self.checks if c.commit == check.commit), check)
        assert check.reported is not None
        return Restart(check.commit, check.reported, max(1, first.round))

    def check_final(
        self, commit: str, reported: float | None, round: int, *, last_round: int
    ) -> Check:
        """The run's final best (``round``: the round whose repository holds it), the
        row of ``last_round``, the run's last."""
        done = next((c for c in self.checks if c.role == "final"), None)
        if done is not None and done.commit == commit:
            return done
        score, feedback = self._score(commit, round)
        prior = self.current().holdout
        ok = passes(score, prior, minimize=self.minimize, margin=self.margin)
        final = Check("final", last_round, commit, reported, score, ok, False, feedback)
        self._record(final)
        return final


def _ranked(
    records: Sequence[TurnRecord], number: int, minimize: bool, best: Restart
) -> list[tuple[str, float, int]]:
    """Distinct scored candidates of the rounds before ``number``, best first."""
    seen: dict[str, tuple[str, float, int]] = {best.commit: (best.commit, best.score, best.round)}
    for r in records:
        if r.round < number and r.score is not None and not r.error and r.commit not in seen:
            seen[r.commit] = (r.commit, r.score, r.round)
    ordered = sorted(seen.values(), key=lambda t: (t[1] if minimize else -t[1], t[2]))
    return ordered


# -- the report ------------------------------------------------------------------


@dataclass(frozen=True)
class GapRow:
    round: int
    commit: str
    reported: float | None
    holdout: float | None
    gap: float | None
    passed: bool
    note: str


def gap_rows(checks: Sequence[Check]) -> list[GapRow]:
    """One row a round end (the seed, each boundary's best checked, the final best)."""
    rows: list[GapRow] = []
    by_round: dict[int, list[Check]] = {}
    for c in checks:
        by_round.setdefault(c.round, []).append(c)
    for number in sorted(by_round):
        group = by_round[number]
        final = next((c for c in group if c.role == "final"), None)
        first = final or next((c for c in group if c.role != "final"), group[0])
        chosen = next((c for c in group if c.chosen), None)
        if first.role == "seed":
            note = "seed"
        elif final is not None:
            note = "final best"
        elif chosen is not None and chosen.commit == first.commit:
            note = "restart seed"
        else:
            to = chosen.commit[:10] if chosen is not None else "-"
            note = f"failed the gate; restarted from {to}"
        rows.append(
            GapRow(number, first.commit, first.reported, first.holdout, first.gap,
                   first.passed, note)
        )  # fmt: skip
    return rows


def alarm(checks: Sequence[Check], *, minimize: bool, floor: float) -> str | None:
    """The inflation alarm (module doc), or None: since the round end where the holdout
    last reached a new best (the seed, if never), the reported best climbed by more
    than ``floor`` while the holdout did not (or the final best fails it)."""
    rows = gap_rows(checks)
    if len(rows) < 2 or rows[0].reported is None or rows[0].holdout is None:
        return None
    sign = -1.0 if minimize else 1.0
    peak, best = 0, rows[0].holdout
    for index, row in enumerate(rows[1:], 1):
        if row.holdout is not None and sign * (row.holdout - best) > 0:
            peak, best = index, row.holdout
    base, last = rows[peak], rows[-1]
    if last.reported is None or base.reported is None or base.holdout is None:
        return None
    gain = sign * (last.reported - base.reported)
    if gain <= floor:
        return None
    if last.holdout is None:
        held = "the final best gave it no number"
    else:
        moved = sign * (last.holdout - base.holdout)
        held = f"{fmt_number(base.holdout)} -> {fmt_number(last.holdout)} ({moved:+g})"
    since = "the seed" if peak == 0 else f"round {base.round}"
    return (
        f"HOLDOUT ALARM: since {since} the reported best climbed "
        f"{fmt_number(base.reported)} -> {fmt_number(last.reported)} ({gain:+g}) over "
        f"{len(rows) - 1 - peak} round end(s) while the holdout did not ({held}): the "
        "scorer credits what the holdout does not (a lenient evaluator, a dead "
        "parameter); read the candidates before trusting the reported score"
    )


def report_lines(run_dir: Path, *, minimize: bool, floor: float) -> list[str]:
    """The report's holdout section (markdown), or [] for a run without a holdout."""
    checks = read_checks(run_dir)
    if not checks:
        return []
    lines = ["## Holdout", ""]
    warn = alarm(checks, minimize=minimize, floor=floor)
    lines += [
        f"> {warn}"
        if warn
        else "No holdout alarm: the holdout climbed with the reported "
        "best, or the reported best did not climb.",
        "",
        "Each row is a round's best at its end, scored again by the sealed holdout the "
        "agents never saw; gap = reported - holdout.",
        "",
        "| round | candidate | reported | holdout | gap | passed | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in gap_rows(checks):
        lines.append(
            f"| {row.round} | {row.commit[:10]} | {_num(row.reported)} | {_num(row.holdout)} | "
            f"{_num(row.gap)} | {'yes' if row.passed else 'NO'} | {row.note} |"
        )
    return [*lines, ""]


def _num(value: float | None) -> str:
    return "-" if value is None else fmt_number(value)
