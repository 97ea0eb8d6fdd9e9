"""Forgetting on disk: an agent that looks around finds nothing of the run.

A real ``command`` agent (a Python script, a child process of the harness) looks for
the run's records, earlier rounds, its teammates' workspaces and the scorer: walking up
from its workspace, through the command lines of its ancestors (``/proc/PID/cmdline``:
the harness's argv named the score command), through its environment, and -- the
check that only a sandbox can pass -- by the absolute paths the test knows.  It writes
what it found into its workspace, so every candidate of the run carries its report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evolving_agent.search.private import private_root
from tests.helpers.ray_cluster import RayCluster

PY = sys.executable
HAS_BWRAP = shutil.which("bwrap") is not None

SPY = r"""
import json, os, pathlib, re, sys
secrets = json.loads(sys.argv[1])  # absolute paths: only a sandbox hides these
me = pathlib.Path.cwd()
# (its own workspace is inside the private folder: only the run's paths count here)
named = [v for k, v in secrets.items() if k != "teammates"]
found = {"relative": [], "argv": [], "env": [], "absolute": [], "written": []}
NAMES = ("log.jsonl", "run.json", "seal.json", "rounds", "answers.txt", "score.py")

def readable(path):
    try:
        path = pathlib.Path(path)
        if path.is_dir():
            return bool(list(path.iterdir())) or True
        path.read_bytes()
        return True
    except OSError:
        return False

# 1. relative paths: every ancestor of the workspace; in round 2, round 1's folder
for up in [me, *me.parents]:
    for name in NAMES:
        if readable(up / name):
            found["relative"].append(str(up / name))
if os.environ["EA_ROUND"] != "1" and readable(me / "../../r01"):
    found["relative"].append("../../r01")

# 2. the command lines of every ancestor process (the harness's argv)
words = set()
pid = os.getppid()
while pid > 1:
    try:
        words |= {w.decode(errors="replace") for w in
                  open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").split()}
        stat = open(f"/proc/{pid}/stat").read()
        pid = int(stat[stat.rindex(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        break
for word in words:
    for part in re.split(r"[=:]", word):
        if part.startswith("/") and any(s in part for s in named):
            found["argv"].append(part)

# 3. the environment
for key, value in os.environ.items():
    if any(s in value for s in named):
        found["env"].append(key)

# 4. absolute paths (the run's records, the scorer, its answers, a teammate)
for name, path in secrets.items():
    if name == "teammates":
        for ws in pathlib.Path(path).glob("**/agent-*"):
            if ws.resolve() != me.resolve() and readable(ws):
                found["absolute"].append(str(ws))
                try:
                    (ws / "planted.txt").write_text("from a teammate")
                    found["written"].append(str(ws))
                except OSError:
                    pass
    elif readable(path):
        found["absolute"].append(path)

pathlib.Path("found.json").write_text(json.dumps(found, sort_keys=True))
v = float(pathlib.Path("value.txt").read_text().split()[0])
pathlib.Path("value.txt").write_text(f"{v + 1}\n")
"""

SCORER = """
import os, pathlib
cand = pathlib.Path(os.environ["EA_CANDIDATE"])
pathlib.Path(__file__).with_name("answers.txt").read_text()  # its own data: readable
print(float((cand / "value.txt").read_text()))
"""


def _setup(tmp: Path) -> tuple[list[str], dict[str, str], Path]:
    (tmp / "candidate").mkdir()
    (tmp / "candidate" / "value.txt").write_text("0\n")
    (tmp / "task.md").write_text("Make value.txt larger.\n")
    scorer = tmp / "scorer"
    scorer.mkdir()
    (scorer / "score.py").write_text(SCORER)
    (scorer / "answers.txt").write_text("best known: 42\n")
    run = tmp / "run"
    secrets = {
        "log": str(run / "log.jsonl"),
        "config": str(run / "run.json"),
        "scorer": str(scorer / "score.py"),
        "answers": str(scorer / "answers.txt"),
        "teammates": str(private_root(run)),
    }
    spy = tmp / "spy.py"
    spy.write_text(SPY)
    args = [
        "search", "run", "--candidate", str(tmp / "candidate"), "--task", str(tmp / "task.md"),
        "--score", f"{PY} {scorer / 'score.py'}", "--agent", "command",
        "--agent-cmd", f"{PY} {spy} '{json.dumps(secrets)}'",
        "--policy", "forget-team", "--agents", "2", "--rounds", "2", "--turns", "4",
        "--out", str(run), "--quiet", "--retries", "0",
    ]  # fmt: skip
    return args, secrets, run


def _reports(run: Path) -> list[dict[str, list[str]]]:
    """What every turn's agent found, from the candidates in the round repositories."""
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    found = []
    for row in rows:
        assert row["error"] is None, row["error"]
        repo = run / "rounds" / f"r{row['round']:02d}" / "repo"
        shown = subprocess.run(
            ["git", "show", f"{row['commit']}:found.json"], cwd=repo, capture_output=True,
            text=True, check=True,
        ).stdout  # fmt: skip
        found.append(json.loads(shown))
    assert len(found) == 4
    return found


def _cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "evolving_agent", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, **env}, timeout=300,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox",
    [
        "none",
        pytest.param(
            "bwrap", marks=pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap not installed")
        ),
    ],
)
def test_an_agent_finds_nothing_of_the_run_by_relative_path_argv_or_env(
    tmp_path: Path, sandbox: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Guards the attack of issue 20: a round-2 agent read log.jsonl, round 1's
    # worktrees, run.json and the scorer's answers two directories up / from ps.
    monkeypatch.setenv("EA_WORKSPACES", str(tmp_path / "private"))
    args, _secrets, run = _setup(tmp_path)
    done = _cli([*args, "--sandbox", sandbox], tmp_path)
    assert done.returncode == 0, done.stderr
    for found in _reports(run):
        assert found["relative"] == [] and found["argv"] == [] and found["env"] == []
        if sandbox == "bwrap":  # and nothing by absolute path either
            assert found["absolute"] == [] and found["written"] == []
    assert not private_root(run).exists() or not any(private_root(run).iterdir())


@pytest.mark.slow
@pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap not installed")
def test_under_bwrap_a_scorer_sees_its_own_files_but_not_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scorer reads answers.txt beside it; a scorer that tries the run's log fails.
    monkeypatch.setenv("EA_WORKSPACES", str(tmp_path / "private"))
    args, secrets, run = _setup(tmp_path)
    probe = tmp_path / "scorer" / "score.py"
    probe.write_text(
        SCORER
        + textwrap.dedent(
            f"""
            import sys
            try:
                open({secrets["log"]!r}).read()
                sys.exit("the scorer read the run's log")
            except OSError:
                pass
            """
        )
    )
    done = _cli([*args, "--sandbox", "bwrap"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert all(row["score"] is not None for row in map(json.loads, (run / "log.jsonl").open()))


@pytest.mark.slow
@pytest.mark.parametrize(
    "sandbox",
    [
        "none",
        pytest.param(
            "bwrap", marks=pytest.mark.skipif(not HAS_BWRAP, reason="bubblewrap not installed")
        ),
    ],
)
def test_on_ray_an_agent_finds_nothing_of_the_run(
    tmp_path: Path, sandbox: str, ray_cluster: RayCluster
) -> None:
    from evolving_agent.search.config import SearchConfig
    from evolving_agent.search.runner import run_search

    args, secrets, run = _setup(tmp_path)
    # Ray workspaces live in the nodes' scratch: a teammate there is under this path.
    spy = tmp_path / "spy.py"
    secrets["teammates"] = str(ray_cluster.workdir)
    spy.write_text(SPY)
    run_search(
        SearchConfig(
            candidate=tmp_path / "candidate", task=tmp_path / "task.md",
            score_cmd=f"{PY} {tmp_path / 'scorer' / 'score.py'}", agent="command",
            agent_cmd=f"{PY} {spy} '{json.dumps(secrets)}'", policy="forget-team", agents=2,
            rounds=2, turns=4, out=run, workdir=tmp_path, executor="ray", sandbox=sandbox,
            retries=0,
        )
    )  # fmt: skip
    for found in _reports(run):
        assert found["relative"] == [] and found["argv"] == [] and found["env"] == []
        if sandbox == "bwrap":
            assert found["absolute"] == [] and found["written"] == []
