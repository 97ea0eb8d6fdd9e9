"""The holdout gate: a sealed second scorer the agents never see.

A planted lenient scorer credits a ``bonus`` the holdout does not; a real command agent
(under bwrap) raises the quality up to 3 and then only pads the bonus.  The alarm must
fire on the lenient scorer and stay quiet on an honest one; a strict holdout that
refuses the bonus must keep every round's restart seed bonus-free; and the agent, with
the holdout script beside its own, must not be able to read it, nor see a word of what
it prints.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.errors import InvalidInput, UsageError
from evolving_agent.search.config import validate_config
from evolving_agent.search.holdout import Check, alarm, gap_rows, passes, read_checks
from evolving_agent.search.report_render import write_report
from evolving_agent.search.runner import resume_search, run_search
from tests.helpers.search import PY, config, git_out, make_task, records

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")

AGENT = r"""
import json, os, pathlib
q, b = (int(x) for x in pathlib.Path("quality.txt").read_text().split())
if q < 3:
    q += 1
else:
    b += 1
pathlib.Path("quality.txt").write_text(f"{q} {b}\n")
spied = {}
for name, path in json.loads(SECRETS).items():
    try:
        p = pathlib.Path(path)
        spied[name] = sorted(os.listdir(p)) if p.is_dir() else p.read_text()[:50]
    except OSError:
        spied[name] = None
secret = json.loads(SECRETS)["holdout_file"]
spied["env"] = [k for k, v in os.environ.items() if secret in v or "HOLDOUT-SECRET" in v]
spied["prompt"] = "HOLDOUT-SECRET" in os.environ["EA_PROMPT"]
with open("spy.txt", "a") as fh:
    fh.write(json.dumps(spied) + "\n")
"""

READ = "import pathlib\nq, b = (int(x) for x in pathlib.Path('quality.txt').read_text().split())\n"
LENIENT = READ + "print('lenient: quality plus bonus')\nprint(q + b)\n"
HONEST = READ + "print('honest: quality only')\nprint(q)\n"
HOLDOUT = READ + "print('HOLDOUT-SECRET quality only')\nprint(q)\n"
STRICT = (
    READ + "import sys\nif b:\n    print('HOLDOUT-SECRET: a bonus is not quality')\n"
    "    sys.exit(1)\nprint(q)\n"
)


def _setup(tmp: Path, scorer: str, holdout: str, **over: Any) -> Any:
    cand = tmp / "candidate"
    cand.mkdir()
    (cand / "quality.txt").write_text("0 0\n")
    (cand / "spy.txt").write_text("")
    make_task(tmp)
    (tmp / "judge").mkdir()
    (tmp / "judge" / "score.py").write_text(scorer)
    tools = tmp / "tools"  # the holdout lives beside the agent's own script
    tools.mkdir()
    (tools / "holdout.py").write_text(holdout)
    secrets = {
        "holdout_file": str(tools / "holdout.py"),
        "holdout_folder": str(tools),
        "holdout_log": str(tmp / "run" / "holdout.jsonl"),
        "holdout_seal": str(tmp / "run" / "holdout-seal.json"),
    }
    (tools / "agent.py").write_text(f"SECRETS = {json.dumps(json.dumps(secrets))}\n" + AGENT)
    base: dict[str, Any] = {
        "policy": "forget",
        "rounds": 4,
        "turns": 8,
        "agent_cmd": f"{PY} {tools / 'agent.py'}",
        "score_cmd": f"{PY} {tmp / 'judge' / 'score.py'}",
        "holdout_cmd": f"{PY} {tools / 'holdout.py'}",
        "sandbox": "bwrap",
    }
    base.update(over)
    return config(tmp, **base)


def _spied(run_dir: Path) -> list[dict[str, Any]]:
    text = (run_dir / "best" / "spy.txt").read_text()
    return [json.loads(line) for line in text.splitlines()]


@needs_bwrap
def test_the_alarm_fires_on_a_lenient_scorer_and_the_agent_never_saw_the_holdout(
    tmp_path: Path,
) -> None:
    summary = run_search(_setup(tmp_path, LENIENT, HOLDOUT))
    run_dir = summary.run_dir
    checks = read_checks(run_dir)
    rows = gap_rows(checks)
    assert [r.reported for r in rows] == [0, 2, 4, 6, 8]
    assert [r.holdout for r in rows] == [0, 2, 3, 3, 3]
    assert [r.gap for r in rows] == [0, 0, 1, 3, 5]
    warn = alarm(checks, minimize=False, floor=0.0)
    assert warn is not None and warn.startswith("HOLDOUT ALARM: since round 2"), warn
    assert "climbed 4 -> 8 (+4) over 2 round end(s)" in warn and "(3 -> 3 (+0))" in warn
    assert any("HOLDOUT ALARM" in n for n in summary.notices)
    md = write_report(run_dir).markdown.read_text()
    assert "## Holdout" in md and "HOLDOUT ALARM" in md and "| 4 |" in md
    # The agent, with the holdout script beside its own, never reached it.
    for spied in _spied(run_dir):
        assert spied["holdout_file"] is None and spied["holdout_log"] is None, spied
        assert spied["holdout_seal"] is None, spied
        # (its folder shows only the agent's own script, bound file by file)
        assert "holdout.py" not in (spied["holdout_folder"] or []), spied
        assert spied["env"] == [] and spied["prompt"] is False, spied
    # Nothing the holdout printed reached a record (records are what prompts are made of).
    assert "HOLDOUT-SECRET" not in (run_dir / "log.jsonl").read_text()
    assert all("HOLDOUT-SECRET" in c.feedback for c in checks)


@needs_bwrap
def test_the_alarm_stays_quiet_on_an_honest_scorer(tmp_path: Path) -> None:
    summary = run_search(_setup(tmp_path, HONEST, HOLDOUT))
    checks = read_checks(summary.run_dir)
    rows = gap_rows(checks)
    assert [r.reported for r in rows] == [r.holdout for r in rows]
    assert rows[-1].reported == 3
    assert alarm(checks, minimize=False, floor=0.0) is None
    assert not any("HOLDOUT ALARM" in n for n in summary.notices)
    md = write_report(summary.run_dir).markdown.read_text()
    assert "No holdout alarm" in md


@needs_bwrap
def test_a_strict_holdout_gates_every_restart_seed(tmp_path: Path) -> None:
    summary = run_search(_setup(tmp_path, LENIENT, STRICT))
    run_dir = summary.run_dir
    assert summary.best_score is not None and summary.best_score > 3  # padded with bonus ...
    for number in (2, 3, 4):
        start = json.loads((run_dir / "rounds" / f"r{number:02d}" / "round.json").read_text())
        # ... but every round restarts from a candidate the holdout passed: no bonus.
        shown = git_out(Path(start["repo"]), "show", f"{start['start_commit']}:quality.txt")
        assert shown.split()[1] == "0", (number, shown)
        assert start["start_score"] == (2 if number == 2 else 3), start
    checks = read_checks(run_dir)
    assert any(c.role == "restart" and not c.passed for c in checks)
    final = [c for c in checks if c.role == "final"]
    assert final and final[0].holdout is None and not final[0].passed
    warn = alarm(checks, minimize=False, floor=0.0)
    assert warn is not None and "the final best gave it no number" in warn
    md = write_report(run_dir).markdown.read_text()
    assert "failed the gate; restarted from" in md


@needs_bwrap
def test_a_seed_the_holdout_refuses_is_refused_before_any_turn(tmp_path: Path) -> None:
    cfg = _setup(tmp_path, LENIENT, "import sys\nprint('no')\nsys.exit(1)\n")
    with pytest.raises(InvalidInput, match="holdout gave no number on the seed"):
        run_search(cfg)
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())


@needs_bwrap
def test_resume_refuses_a_changed_holdout(tmp_path: Path) -> None:
    from evolving_agent.search.judge import JudgeTampered

    cfg = _setup(tmp_path, HONEST, HOLDOUT, turns=4, rounds=2)
    summary = run_search(cfg)
    assert records(summary.run_dir)
    (tmp_path / "tools" / "holdout.py").write_text(HOLDOUT + "print(99)\n")
    with pytest.raises(JudgeTampered, match="holdout.py"):
        resume_search(summary.run_dir)


def test_the_gate_rule() -> None:
    assert passes(5.0, 5.0, minimize=False, margin=0)
    assert not passes(4.9, 5.0, minimize=False, margin=0)
    assert passes(4.9, 5.0, minimize=False, margin=0.1 + 1e-12)
    assert passes(5.1, 5.0, minimize=True, margin=0.1 + 1e-12)
    assert not passes(5.2, 5.0, minimize=True, margin=0.1)
    assert not passes(None, 5.0, minimize=False, margin=10)
    assert passes(1.0, None, minimize=False, margin=0)


def _check(n: int, reported: float, held: float | None, role: str = "restart") -> Check:
    return Check(role, n, f"c{n}", reported, held, held is not None, True)


def test_the_alarm_is_direction_aware_and_reads_only_climbs_after_the_holdouts_peak() -> None:
    seed = Check("seed", 0, "c0", 100.0, 100.0, True, True)
    climbing = [seed, _check(1, 90, 91), _check(2, 80, 82, "final")]
    assert alarm(climbing, minimize=True, floor=0.0) is None
    inflated = [seed, _check(1, 90, 91), _check(2, 70, 95, "final")]
    warn = alarm(inflated, minimize=True, floor=0.0)
    assert warn is not None and "90 -> 70" in warn
    within_noise = [seed, _check(1, 90, 91), _check(2, 89.5, 93, "final")]
    assert alarm(within_noise, minimize=True, floor=1.0) is None


def test_validation_of_the_holdout_flags(tmp_path: Path) -> None:
    (tmp_path / "candidate").mkdir()
    make_task(tmp_path)
    for over, msg in (({"holdout_cmd": " "}, "--holdout"), ({"holdout_margin": -1}, "margin")):
        cfg = config(tmp_path, score_cmd="true", agent_cmd="true", **over)
        with pytest.raises(UsageError, match=msg):
            validate_config(cfg)


@needs_bwrap
def test_search_run_prints_the_alarm_at_its_end(tmp_path: Path) -> None:
    from tests.helpers import run_cli

    # In-process: the agents, scorers and holdout are real processes; the CLI's own
    # process boundary is tests/cli/test_search_run_cmds.py's subject.
    cfg = _setup(tmp_path, LENIENT, HOLDOUT)
    done = run_cli(
        "search", "run", "--candidate", str(cfg.candidate), "--task", str(cfg.task),
        "--score", cfg.score_cmd, "--holdout", str(cfg.holdout_cmd), "--agent", "command",
        "--agent-cmd", str(cfg.agent_cmd), "--policy", "forget", "--rounds", "4",
        "--turns", "8", "--out", str(tmp_path / "run"), "--quiet",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    alarm_line = done.stdout.splitlines()[-1]
    assert alarm_line.startswith("HOLDOUT ALARM: since round 2 the reported best climbed 4 -> 8")


def test_the_final_row_is_the_last_round_even_when_the_best_never_moved(tmp_path: Path) -> None:
    # Found by the four-arm benchmark: the final check took the best's round (1, the seed)
    # as its row, and the report showed the final best in round 1's row.
    cfg = _setup(tmp_path, HONEST, HOLDOUT, agent_cmd="true", rounds=3, turns=3, sandbox="none")
    summary = run_search(cfg)
    rows = gap_rows(read_checks(summary.run_dir))
    assert [(r.round, r.note) for r in rows] == [
        (0, "seed"), (1, "restart seed"), (2, "restart seed"), (3, "final best"),
    ]  # fmt: skip
