"""The judge: clean exports, failed candidates, process-group kills, and isolation."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.search.judge import Judge, sealed_judge
from evolving_agent.search.runner import run_search
from evolving_agent.search.workspace import init_round_repo
from tests.helpers.search import (
    PY,
    config,
    hostile_task,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)


def repo_with(tmp: Path, files: dict[str, str]) -> tuple[Path, str]:
    src = tmp / "src"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(text)
    repo = tmp / "repo"
    return repo, init_round_repo(repo, src, "seed")


def test_the_scorer_sees_only_committed_non_ignored_files(tmp_path: Path) -> None:
    repo, commit = repo_with(tmp_path, {"value.txt": "3\n", ".gitignore": "*.log\n"})
    (repo / "stray.log").write_text("ignored")
    (repo / "untracked.txt").write_text("never committed")
    listing = tmp_path / "seen.txt"
    cmd = f'ls -A "$EA_CANDIDATE" > {listing}; cat {{candidate}}/value.txt'
    verdict = Judge(cmd, tmp_path, timeout=30).judge(repo, commit)
    assert verdict.score == 3.0
    assert listing.read_text().split() == [".gitignore", "value.txt"]


def test_crash_and_unparsable_output_are_failed_candidates(tmp_path: Path) -> None:
    repo, commit = repo_with(tmp_path, {"value.txt": "3\n"})
    crash = Judge("echo 5; exit 3", tmp_path, timeout=30).judge(repo, commit)
    assert crash.score is None and "exit 3" in crash.feedback
    words = Judge("echo feedback; echo not-a-number", tmp_path, timeout=30).judge(repo, commit)
    assert words.score is None and "not a number" in words.feedback
    good = Judge("echo looks fine; echo 2.5", tmp_path, timeout=30).judge(repo, commit)
    assert (good.score, good.feedback) == (2.5, "looks fine")


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    repo, commit = repo_with(tmp_path, {"value.txt": "3\n"})
    pidfile = tmp_path / "child.pid"
    # The scorer starts a grandchild that would outlive a plain kill of the shell.
    cmd = f"{PY} -c 'import time; time.sleep(60)' & echo $! > {pidfile}; wait"
    verdict = Judge(cmd, tmp_path, timeout=1).judge(repo, commit)
    assert verdict.score is None and "timed out" in verdict.feedback
    pid = int(pidfile.read_text())
    for _ in range(100):  # reaped by init shortly after the kill
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_repeats_keep_the_median(tmp_path: Path) -> None:
    repo, commit = repo_with(tmp_path, {"value.txt": "3\n"})
    counter = tmp_path / "n"
    counter.write_text("0")
    cmd = (
        f"n=$(cat {counter}); echo $((n+1)) > {counter}; "
        f"case $n in 0) echo 1;; 1) echo 100;; *) echo 7;; esac"
    )
    verdict = Judge(cmd, tmp_path, timeout=30, repeats=3).judge(repo, commit)
    assert verdict.scores == [1.0, 100.0, 7.0] and verdict.score == 7.0


def test_an_agent_that_edits_the_scorer_or_leaves_ignored_files_gains_nothing(
    tmp_path: Path,
) -> None:
    cand = make_candidate(tmp_path, "1")
    (cand / ".gitignore").write_text("score_override.txt\n")
    # The candidate ships a copy of the scorer; the agent may edit it freely.
    (cand / "score.py").write_text("print(1)\n")
    make_task(tmp_path)
    # The trusted scorer would honour an override file -- if it ever saw one.
    write_scorer(
        tmp_path,
        """
import os, pathlib
cand = pathlib.Path(os.environ["EA_CANDIDATE"])
override = cand / "score_override.txt"
if override.exists():
    print(override.read_text().strip())
else:
    print(float((cand / "value.txt").read_text().split()[0]))
""",
    )
    cheat = write_agent(
        tmp_path,
        """
        pathlib.Path("score.py").write_text("print(1e9)\\n")
        pathlib.Path("score_override.txt").write_text("1e9\\n")
        pathlib.Path("scorer_trusts_me.py").write_text("SCORE = 1e9\\n")
        log(left=sorted(p.name for p in pathlib.Path(".").iterdir()))
    """,
    )
    # The score command is "python score.py" from the run's workdir: the trusted one.
    (tmp_path / "score.py").write_text((tmp_path / "judge" / "score.py").read_text())
    summary = run_search(
        config(tmp_path, score_cmd=f"{PY} score.py", agent_cmd=cheat, policy="single", turns=2)
    )
    rows = records(tmp_path / "run")
    assert [r["score"] for r in rows] == [1.0, 1.0]
    assert not any(r["improved"] for r in rows) and summary.best_score == 1.0
    assert not rows[0]["empty"]  # the edits were real and committed ...
    # (The agent's private workspace, where the ignored file was left, is gone with
    # the run; the round repository holds what was committed.)
    ws = tmp_path / "run" / "rounds" / "r01" / "repo"
    shown = subprocess.run(
        ["git", "show", "--stat", "--format=", rows[0]["commit"]],
        cwd=ws,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "score_override" not in shown and "score.py" in shown


# Regression: an attack an outside review of `search run` got through.
def test_the_judge_runs_no_filter_a_peer_agent_planted_in_the_shared_repository(
    tmp_path: Path,
) -> None:
    """Agents of a team share one round repository and can write its ``.git`` while a
    peer's candidate is being judged.  ``git archive`` runs smudge filters, so a filter
    driver in ``.git/config`` plus ``* filter=x`` in ``.git/info/attributes`` ran the
    agent's program inside the judge's export (outside every turn and its process
    sweep), and ``* export-ignore`` there emptied a peer's candidate."""
    from evolving_agent.search.judge import Judge
    from evolving_agent.search.workspace import init_round_repo

    src = tmp_path / "src"
    src.mkdir()
    (src / "n.txt").write_text("7\n")
    repo = tmp_path / "repo"
    commit = init_round_repo(repo, src, "seed")
    pwned = tmp_path / "PWNED"
    with (repo / ".git" / "config").open("a") as fh:
        fh.write(f"[filter \"x\"]\n\tsmudge = sh -c 'touch {pwned}; cat'\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=x\n")
    verdict = Judge(f"{PY} -c \"print(open('n.txt').read())\"", tmp_path, 30).judge(repo, commit)
    assert not pwned.exists()
    assert verdict.score == 7.0
    (repo / ".git" / "info" / "attributes").write_text("* export-ignore\n")
    verdict = Judge(f"{PY} -c \"print(open('n.txt').read())\"", tmp_path, 30).judge(repo, commit)
    assert verdict.score == 7.0, verdict.feedback


# Regression: an attack an outside review of `search run` got through.
def test_an_agent_that_deletes_every_file_makes_a_failed_candidate_not_a_crashed_run(
    tmp_path: Path,
) -> None:
    """The export of an empty tree is a tar of zero blocks that ``tarfile`` cannot
    open: ``rm -rf ./*`` crashed every run ("unexpected ReadError", exit 1)."""
    _, args = hostile_task(tmp_path, "rm -rf ./*\n")
    run = tmp_path / "run"
    result = CliRunner().invoke(cli, [*args, "--out", str(run)])
    assert result.exit_code == 0, result.output
    assert "best 1 (seed 1" in result.output
    rows = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [row["score"] for row in rows] == [None, None]
    assert "No such file or directory: 'n.txt'" in rows[0]["feedback"]


# Regression: an attack an outside review of `search run` got through.
def test_a_quoted_relative_scorer_path_with_a_space_means_that_file_inside_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--score "python3 'my judge/score.py'"`` failed on the seed ("can't open file
    .../candidate/my judge/score.py"): only unquoted words were made absolute."""
    _, args = hostile_task(tmp_path, "echo $(( $(cat n.txt) + 1 )) > n.txt\n")
    (tmp_path / "my judge").mkdir()
    (tmp_path / "score.py").rename(tmp_path / "my judge" / "score.py")
    args[args.index("--score") + 1] = f"{PY} 'my judge/score.py'"
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "best 3 (seed 1, +2)" in result.output
    seal = json.loads((tmp_path / "run" / "judge" / "seal.json").read_text())
    assert str(tmp_path / "my judge" / "score.py") in seal["score_cmd"]


def test_a_sealed_judge_reads_its_channel_from_the_seal_unless_it_is_the_holdout_s(
    tmp_path: Path,
) -> None:
    """The run's judge scores through the channel its seed showed; the holdout's is "auto"
    whatever its seal file holds (a written ``channel`` there would change how a forged
    score is told)."""
    seal = {"score_cmd": f"{PY} score.py", "files": {}, "channel": "stdout"}
    assert sealed_judge(config(tmp_path), seal).channel == "stdout"
    assert sealed_judge(config(tmp_path), seal, channel="auto").channel == "auto"
    assert sealed_judge(config(tmp_path), {**seal, "channel": "fd"}).channel == "fd"
    del seal["channel"]
    assert sealed_judge(config(tmp_path), seal).channel == "auto"  # before the seed
