"""A verdict candidate code cannot write: the bundled TSP scorer under attack.

Each candidate prints the identity tour (length well over 1,000) and tries to make
the judge believe 0.5.  The scorer is the bundled one (copied, sealed, unchanged); it
writes its verdict to ``$EA_SCORE_FD``.  Every attack leaves the verdict at the true
length or fails the score, on both sandboxes.
"""

from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import pytest

from evolving_agent.search.judge import FORGED, Judge, Seal, seal_command
from evolving_agent.search.sandbox import Sandbox
from evolving_agent.search.workspace import init_round_repo

PY = sys.executable
pytestmark = pytest.mark.slow  # each score runs the real TSP scorer
TSP = Path(__file__).resolve().parents[2] / "evolving_agent" / "data" / "examples" / "tsp"
SANDBOXES = [
    "none",
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed"),
    ),
]

IDENTITY = 'print(" ".join(map(str, range(200))))\n'
ATTACKS = {
    # The attack of issue 20: the scorer's stdout, far past what it prints.
    "pwrite-parent-stdout": (
        "import os\n"
        'fd = os.open(f"/proc/{os.getppid()}/fd/1", os.O_WRONLY)\n'
        'os.pwrite(fd, b"\\n0.5\\n", 1 << 20)\n'
    ),
    "write-parent-stderr": (
        "import os\n"
        'fd = os.open(f"/proc/{os.getppid()}/fd/2", os.O_WRONLY)\n'
        'os.write(fd, b"\\n0.5\\n")\n'
    ),
    # Every descriptor of the scorer: sockets cannot be opened through /proc.
    "every-parent-fd": (
        "import os\n"
        'for name in os.listdir(f"/proc/{os.getppid()}/fd"):\n'
        "    try:\n"
        '        fd = os.open(f"/proc/{os.getppid()}/fd/{name}", os.O_WRONLY)\n'
        '        os.write(fd, b"0.5\\n")\n'
        "    except OSError:\n"
        "        pass\n"
    ),
    # Root may grab the scorer's socket with pidfd_getfd: its message is one too many.
    "pidfd-getfd": (
        "import ctypes, os, socket\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "try:\n"
        "    pidfd = os.pidfd_open(os.getppid())\n"
        '    for name in os.listdir(f"/proc/{os.getppid()}/fd"):\n'
        "        fd = libc.syscall(438, pidfd, int(name), 0)\n"
        "        if fd >= 0:\n"
        "            try:\n"
        '                os.write(fd, b"0.5")\n'
        "            except OSError:\n"
        "                pass\n"
        "except OSError:\n"
        "    pass\n"
    ),
    # Print the forged number where the scorer reads, then kill the scorer.
    "kill-the-scorer": (
        "import os, signal\n"
        'fd = os.open(f"/proc/{os.getppid()}/fd/1", os.O_WRONLY)\n'
        'os.write(fd, b"0.5\\n")\n'
        "os.kill(os.getppid(), signal.SIGKILL)\n"
    ),
    # A daemon that outlives the solver and writes after the scorer's own line.
    "late-daemon": (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    ppid = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[1])\n"
        "    time.sleep(0.3)\n"
        "    for fd in (1, 2):\n"
        "        try:\n"
        '            os.write(os.open(f"/proc/{ppid}/fd/{fd}", os.O_WRONLY), b"0.5\\n")\n'
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n"
    ),
}


@pytest.fixture(scope="module")
def scorer(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """The bundled TSP scorer, copied and sealed as a run seals it."""
    home = tmp_path_factory.mktemp("scorer")
    for name in ("score.py", "cities.txt"):
        shutil.copy2(TSP / name, home / name)
    return seal_command(f"{PY} score.py", home)


@pytest.fixture(scope="module")
def true_length() -> float:
    sys.path.insert(0, str(TSP))
    try:
        import score  # the bundled scorer's own cities and tour length
    finally:
        sys.path.pop(0)
    points = score.cities()
    return round(score.tour_length(points, list(range(len(points)))), 3)


def _judge(scorer: tuple[str, dict[str, str]], sandbox: str, channel: str) -> Judge:
    command, files = scorer
    home = Path(next(iter(files))).parent
    return Judge(
        command, home, timeout=30, seal=Seal(files), channel=channel, sandbox=Sandbox(sandbox)
    )


def _candidate(tmp: Path, solve: str) -> tuple[Path, str]:
    files = tmp / "files"
    files.mkdir()
    (files / "solve.py").write_text(solve)
    repo = tmp / "repo"
    return repo, init_round_repo(repo, files, "candidate")


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_candidate_code_cannot_forge_the_tsp_verdict(
    tmp_path: Path,
    scorer: tuple[str, dict[str, str]],
    true_length: float,
    attack: str,
    sandbox: str,
) -> None:
    # Guards the /proc/PPID/fd/1 forgery of issue 20 and its variants.
    repo, commit = _candidate(tmp_path, ATTACKS[attack] + IDENTITY)
    verdict = _judge(scorer, sandbox, "fd").judge(repo, commit)
    assert verdict.score != 0.5
    if verdict.score is None:  # a failed score is recorded, with the reason
        assert verdict.feedback
    else:
        assert math.isclose(verdict.score, true_length, abs_tol=1e-3)
        assert verdict.channel == "fd"


def test_the_tsp_scorer_opts_in_and_an_honest_candidate_scores_its_length(
    tmp_path: Path, scorer: tuple[str, dict[str, str]], true_length: float
) -> None:
    repo, commit = _candidate(tmp_path, IDENTITY)
    verdict = _judge(scorer, "none", "auto").judge(repo, commit)
    assert verdict.channel == "fd" and verdict.score == pytest.approx(true_length, abs=1e-3)


def test_a_stdout_scorer_is_forgeable_and_the_run_says_so(tmp_path: Path) -> None:
    # The reference convention still works for scorers that do not opt in -- and the
    # pwrite forgery wins against it; the run's notice says exactly that.
    home = tmp_path / "plain"
    home.mkdir()
    (home / "score.py").write_text(
        "import subprocess, sys\n"
        "out = subprocess.run([sys.executable, 'solve.py'], capture_output=True, text=True)\n"
        "print(len(out.stdout))\n"
    )
    command, files = seal_command(f"{PY} score.py", home)
    repo, commit = _candidate(tmp_path, ATTACKS["pwrite-parent-stdout"] + IDENTITY)
    judge = Judge(command, home, timeout=30, seal=Seal(files), channel="auto")
    verdict = judge.judge(repo, commit)
    assert (verdict.channel, verdict.score) == ("stdout", 0.5)


def test_a_shell_scorer_leaking_the_channel_to_its_candidate_fails_the_score(
    tmp_path: Path,
) -> None:
    # sh keeps $EA_SCORE_FD open in its children: the candidate's own message makes
    # two, and the score fails (recorded) instead of taking the forged number.
    home = tmp_path / "sh"
    home.mkdir()
    write = "import os; os.write(int(os.environ['EA_SCORE_FD']), b'%s')"
    (home / "score.sh").write_text(f'out=$(sh solve.sh)\n{PY} -c "{write % "7"}"\n')
    command, files = seal_command("sh score.sh", home)
    files_dir = tmp_path / "files"
    files_dir.mkdir()
    (files_dir / "solve.sh").write_text(f'{PY} -c "{write % "0.5"}"\n')
    repo = tmp_path / "repo"
    commit = init_round_repo(repo, files_dir, "candidate")
    verdict = Judge(command, home, timeout=30, seal=Seal(files), channel="fd").judge(repo, commit)
    assert verdict.score is None and FORGED in verdict.feedback
    # A scorer that never wrote the channel at the seed: any message there is forged.
    stdout_judge = Judge(command, home, timeout=30, seal=Seal(files), channel="stdout")
    assert stdout_judge.judge(repo, commit).score is None


def test_an_opted_in_scorer_that_writes_nothing_later_fails_the_score(tmp_path: Path) -> None:
    # A candidate that makes the scorer skip its write cannot fall back to stdout.
    home = tmp_path / "quiet"
    home.mkdir()
    (home / "score.py").write_text("print(0.5)\n")
    command, files = seal_command(f"{PY} score.py", home)
    repo, commit = _candidate(tmp_path, IDENTITY)
    verdict = Judge(command, home, timeout=30, seal=Seal(files), channel="fd").judge(repo, commit)
    assert verdict.score is None and "wrote no score" in verdict.feedback
