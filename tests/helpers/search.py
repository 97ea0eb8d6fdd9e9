"""Shared builders for the search tests (no tests here): candidates, scorers, agents.

The toy task: the candidate holds ``value.txt`` with a number; the trusted scorer
(outside the candidate) prints it back, so higher is better.  Command agents are small
Python scripts that log what the harness told them to a JSONL file outside the
workspace and then edit ``value.txt``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from evolving_agent.search.config import SearchConfig
from tests.helpers import shell_git
from tests.helpers.fixtures import isolated_env

PY = sys.executable
REPO = Path(__file__).resolve().parents[2]
TSP = REPO / "examples" / "tsp"


def make_candidate(tmp: Path, value: str = "0") -> Path:
    cand = tmp / "candidate"
    cand.mkdir()
    (cand / "value.txt").write_text(f"{value}\n")
    return cand


def make_task(tmp: Path) -> Path:
    task = tmp / "task.md"
    task.write_text("Make the number in value.txt larger.\n")
    return task


def write_scorer(tmp: Path, body: str | None = None) -> str:
    """A scorer script outside the candidate; returns the score command."""
    judge_dir = tmp / "judge"
    judge_dir.mkdir(exist_ok=True)
    script = judge_dir / "score.py"
    script.write_text(
        body
        or textwrap.dedent(
            """
            import os, pathlib
            cand = pathlib.Path(os.environ["EA_CANDIDATE"])
            value = float((cand / "value.txt").read_text().split()[0])
            print("value read from value.txt")
            print(value)
            """
        )
    )
    return f"{PY} {script}"


def write_agent(tmp: Path, body: str, name: str = "agent.py") -> str:
    """A command agent script; ``body`` runs after ``log`` / ``value`` helpers exist."""
    script = tmp / name
    log = tmp / f"{name}.log"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, os, pathlib, subprocess, sys, time
            LOG = pathlib.Path({str(log)!r})
            ENV = {{k: v for k, v in os.environ.items() if k.startswith("EA_")}}
            def log(**extra):
                with LOG.open("a") as fh:
                    fh.write(json.dumps({{**ENV, **extra}}) + "\\n")
            def value():
                return float(pathlib.Path("value.txt").read_text().split()[0])
            def write(v, *extra):
                pathlib.Path("value.txt").write_text("\\n".join([repr(v), *extra]) + "\\n")
            """
        )
        + textwrap.dedent(body)
    )
    return f"{PY} {script}"


def agent_log(tmp: Path, name: str = "agent.py") -> list[dict[str, Any]]:
    path = tmp / f"{name}.log"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]


@contextmanager
def isolated(tmp: Path) -> Iterator[None]:
    """The environment of a test (``isolated_env``) for a module fixture's run, which is
    made before any test's own environment is set."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in isolated_env(tmp).items():
            mp.setenv(name, value)
        yield


def config(tmp: Path, **overrides: Any) -> SearchConfig:
    base: dict[str, Any] = {
        "candidate": tmp / "candidate",
        "task": tmp / "task.md",
        "score_cmd": "",
        "agent": "command",
        "policy": "forget-team",
        "out": tmp / "run",
        "workdir": tmp,
        "score_timeout": 30,
        "turn_timeout": 30,
        "retry_backoff": 0.01,
    }
    base.update(overrides)
    return SearchConfig(**base)


INCREMENT = """
v = value()
log(cwd=os.getcwd(), start=time.time())
write(v + 1)
"""


def hostile_task(tmp: Path, agent_body: str) -> tuple[Path, list[str]]:
    """A task (a number in ``n.txt``) for a hostile shell agent: (agent, ``search run`` args)."""
    (tmp / "cand").mkdir()
    (tmp / "cand" / "n.txt").write_text("1\n")
    (tmp / "task.md").write_text("Make the number in n.txt larger.\n")
    (tmp / "score.py").write_text(
        "import pathlib\nprint(float(pathlib.Path('n.txt').read_text().split()[0]))\n"
    )
    agent = tmp / "agent.sh"
    agent.write_text("#!/bin/sh\n" + agent_body)
    agent.chmod(0o755)
    args = [
        "search", "run", "--candidate", str(tmp / "cand"), "--task", str(tmp / "task.md"),
        "--score", f"{PY} {tmp / 'score.py'}", "--agent", "command", "--agent-cmd", str(agent),
        "--policy", "single", "--turns", "2", "--turn-timeout", "20", "--quiet",
    ]  # fmt: skip
    return agent, args


def git_out(cwd: Path, *args: str) -> str:
    """Plain porcelain git in ``cwd``, its output stripped (what an agent's shell would see)."""
    return shell_git(cwd, *args).strip()


# An agent whose edit depends on what it was shown: it builds on the best score its
# prompt lists (the round start, its own turns, teammates' bests), so a turn that saw a
# teammate's result a moment earlier or later writes another number.  It sleeps a
# truly random while first, so threads finish in a different order every run.
SEES_PEERS = """
import random, re
prompt = os.environ["EA_PROMPT"]
shown = [float(s) for s in re.findall(r"score (-?[0-9][0-9.e+-]*)", prompt)]
peers = sorted(re.findall(r"a teammate's best \\(turn ([0-9]+)\\)", prompt))
log(peers=peers, shown=shown)
time.sleep(random.SystemRandom().random() * {jitter})
a, t = int(os.environ["EA_AGENT"]), int(os.environ["EA_TURN"])
write(max(shown + [value()]) + (a * 7 + t * 3) % 5 - 1)
"""


def run_fingerprint(run_dir: Path, agent_log_of: Path | None = None) -> str:
    """A SHA-256 of what makes a run the run it is, in log order: each record's place,
    scores, what it was shown and whether it improved; each round's start; the best.
    (Commit ids and times differ between runs of the same run: not in it.)"""
    import hashlib

    keys = (
        "seq", "step", "round", "agent", "turn", "round_turn", "new_session", "score",
        "scores", "empty", "lines_changed", "improved", "forget", "visible", "peers",
        "error", "tampered",
    )  # fmt: skip
    rows = [[r.get(k) for k in keys] for r in records(run_dir)]
    starts = [
        json.loads(p.read_text())["start_score"]
        for p in sorted((run_dir / "rounds").glob("r*/round.json"))
    ]
    summary = json.loads((run_dir / "summary.json").read_text())
    seen: list[Any] = []
    if agent_log_of is not None:
        # What each turn's prompt showed it, by turn (the log is in completion order).
        # A turn interrupted and run again shows twice; only its last showing counts.
        shown = {}
        for e in agent_log(agent_log_of):
            shown[(int(e["EA_ROUND"]), int(e["EA_AGENT"]), int(e["EA_TURN"]))] = (
                e["peers"], e["shown"]
            )
        seen = sorted(shown.items())
    blob = json.dumps(
        {"records": rows, "starts": starts, "best": summary["best_score"], "seen": seen},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def git_shim(tmp: Path) -> tuple[Path, Path]:
    """A folder with a ``git`` that logs its arguments to a file, then runs the real
    git: put the folder first on PATH to count the git processes the harness starts.
    Returns (folder, log)."""
    import shutil

    real = shutil.which("git")
    assert real is not None
    folder = tmp / "git-shim"
    folder.mkdir()
    log = tmp / "git-calls.log"
    shim = folder / "git"
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    return folder, log


def git_verb(line: str) -> str:
    """The git command of a logged call (its first word past the ``-c`` options)."""
    words = line.split()
    while words and words[0] == "-c":
        words = words[2:]
    return next((w for w in words if not w.startswith("-")), "")
