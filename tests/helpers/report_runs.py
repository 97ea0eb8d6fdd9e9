"""Run directories shaped like the runner's output, for the ``search report`` tests
(``tests/search/test_report.py``, ``test_report_render.py``); no tests here."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path
from typing import Any

SEED_SRC = "def solve(points):\n    return list(range(len(points)))\n"
BEST_SRC = (
    "def solve(points):\n    order = nearest_neighbour(points)\n    return two_opt(points, order)\n"
)


def turn(
    rnd: int,
    agent: int,
    n: int,
    score: float | None,
    *,
    lines: int = 5,
    empty: bool = False,
    cost: float = 0.01,
    forget: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A log.jsonl record shaped like the runner's ``TurnRecord`` (agents are 1-based)."""
    rec: dict[str, Any] = {
        "schema_version": 1,
        "seq": 0,
        "round": rnd,
        "agent": agent,
        "turn": n,
        "round_turn": n,
        "session": f"s{rnd}-{agent}",
        "new_session": forget is not None,
        "base_commit": "b" * 40,
        "commit": f"{rnd}{agent}{n:03d}" + "0" * 35,
        "score": score,
        "scores": [] if score is None else [score],
        "feedback": "tour length" if score is not None else "score command failed",
        "empty": empty,
        "lines_changed": 0 if empty else lines,
        "input_tokens": 1000,
        "output_tokens": 200,
        "reasoning_tokens": 50,
        "cost_usd": cost,
        "wall_s": 2.5,
        "agent_s": 2.0,
        "judge_s": 0.5,
        "ts": f"2026-11-30T04:{n:02d}:00.000+00:00",
        "improved": False,
        "forget": forget,
        "visible": 1,
        "error": None,
    }
    rec.update(extra)
    return rec


def numbered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for seq, rec in enumerate(records, start=1):
        rec["seq"] = seq
    return records


def mark_improved(
    records: list[dict[str, Any]], seed: float, floor: float, minimize: bool = True
) -> list[dict[str, Any]]:
    """Set ``improved`` the way the runner does: a gain past the noise floor."""
    best = seed
    for rec in records:
        score = rec["score"]
        gain = None if score is None else (best - score if minimize else score - best)
        rec["improved"] = gain is not None and gain > floor
        if rec["improved"]:
            best = score
    return records


def forget_team_log() -> list[dict[str, Any]]:
    """2 agents, 3 rounds, 3 turns each per round; minimising, seed 1000.

    Round 1: 1000 -> 900, round 2: 900 -> 700, round 3: 699.8, within the noise floor of
    0.5, so the run keeps 700 (and one failed turn).
    The runner marks the first record of each new round with why the last one ended.
    """
    r1 = [
        turn(1, 1, 1, 950, lines=30),
        turn(1, 2, 1, 980, lines=20),
        turn(1, 1, 2, 940, lines=4),
        turn(1, 2, 2, 900, lines=6),
        turn(1, 1, 3, 960, lines=2, empty=True),
        turn(1, 2, 3, 905, lines=3),
    ]
    r2 = [
        turn(2, 1, 4, 850, lines=40, forget="rounds"),
        turn(2, 2, 4, 880, lines=44),
        turn(2, 1, 5, 700, lines=12),
        turn(2, 2, 5, 790, lines=8),
        turn(2, 1, 6, 710, lines=1, empty=True),
        turn(2, 2, 6, 720, lines=2, empty=True),
    ]
    r3 = [
        turn(3, 1, 7, 705, lines=50, forget="plateau"),
        turn(3, 2, 7, None, lines=60),
        turn(3, 1, 8, 703, lines=10),
        turn(3, 2, 8, 760, lines=9),
        turn(3, 1, 9, 701, lines=3),
        turn(3, 2, 9, 699.8, lines=4),
    ]
    return mark_improved(numbered(r1 + r2 + r3), 1000.0, 0.5)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def keep_seed_like_the_runner(run: Path) -> str:
    """Round 1's repository with the seed as first commit (and a later candidate on top),
    and seed.json naming it; returns the seed commit."""
    repo = run / "rounds" / "r01" / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "solver.py").write_text(SEED_SRC)
    (repo / "README.md").write_text("TSP solver\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "round 1: the seed candidate")
    seed_commit = git(repo, "rev-parse", "HEAD")
    (repo / "solver.py").write_text(BEST_SRC)
    git(repo, "commit", "-qam", "a candidate")
    seed = {"commit": seed_commit, "scores": [1000.0], "score": 1000.0, "noise_floor": 0.5}
    (run / "seed.json").write_text(json.dumps({"schema_version": 1, **seed}))
    return seed_commit


def make_run(
    base: Path,
    records: list[dict[str, Any]] | None = None,
    *,
    summary: dict[str, Any] | None = None,
    keep_seed: bool = True,
    candidate: Path | None = None,
) -> Path:
    run = base / "run-forget-team"
    (run / "best").mkdir(parents=True)
    (run / "best" / "solver.py").write_text(BEST_SRC)
    (run / "best" / "README.md").write_text("TSP solver\n")
    if keep_seed:
        keep_seed_like_the_runner(run)
    recs = forget_team_log() if records is None else records
    (run / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (run / "summary.json").write_text(
        json.dumps(
            summary
            if summary is not None
            else {
                "schema_version": 1,
                "run_dir": str(run),
                "policy": "forget-team",
                "agent": "tsp-example",
                "direction": "minimize",
                "best_score": 700.0,
                "best_commit": "2" * 40,
                "best_round": 2,
                "best_agent": 1,
                "seed_score": 1000.0,
                "noise_floor": 0.5,
                "turns": len(recs),
                "planned_turns": len(recs),
                "rounds": 3,
                "agents": 2,
                "cost_usd": round(sum(r["cost_usd"] for r in recs), 6),
                "input_tokens": 18000,
                "output_tokens": 3600,
                "reasoning_tokens": 900,
                "empty_turns": 3,
                "failed_turns": 1,
                "complete": True,
                "stopped": "turns",
            }
        )
    )
    (run / "run.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "candidate": str(candidate) if candidate else str(base / "gone"),
                "task": "task.md",
                "score_cmd": "python score.py",
                "minimize": True,
                "policy": "forget-team",
                "agents": 2,
                "rounds": 3,
                "turns": len(recs),
            }
        )
    )
    return run


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height
