"""An agent command that works under the default sandbox: ``--agent-cmd ./agent.sh``
where ``agent.sh`` runs a helper beside it -- with the real bubblewrap.

The sandbox used to bind only the files a command names, so the helper was missing
("can't open file") and every turn failed; a relative ``./agent.sh`` meant the
workspace's.  Now a relative script path means the user's file, and each script's
folder is bound read-only -- with the run directory, the private workspaces and the
scorer's folder still masked when they lie inside it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.sandbox import Sandbox, absolute_command

PY = sys.executable
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")

HELPER = """
import json, os, pathlib, sys
here = pathlib.Path(__file__).parent
probe = json.loads((here / "probe.json").read_text())
private = probe.pop("private workspaces")
seen = {name: os.path.exists(path) for name, path in probe.items()}
me = pathlib.Path.cwd().resolve()
others = [
    f for f in pathlib.Path(private).rglob("*")
    if f.is_file() and me not in f.resolve().parents
]
seen["another workspace's files"] = bool(others)
try:
    (here / "planted.txt").write_text("x")
    seen["wrote its own folder"] = True
except OSError:
    seen["wrote its own folder"] = False
pathlib.Path("seen.json").write_text(json.dumps(seen, sort_keys=True))
p = pathlib.Path("value.txt")
p.write_text(str(float(p.read_text()) + 1))
"""


def _project(tmp: Path) -> Path:
    """A user's project: agent.sh + helper.py beside the candidate, the scorer's folder,
    the run directory and the private workspaces -- all in one folder."""
    (tmp / "candidate").mkdir()
    (tmp / "candidate" / "value.txt").write_text("0\n")
    (tmp / "task.md").write_text("Make value.txt larger.\n")
    (tmp / "judge").mkdir()
    (tmp / "judge" / "score.py").write_text(
        "import os, pathlib\n"
        "print(float((pathlib.Path(os.environ['EA_CANDIDATE']) / 'value.txt').read_text()))\n"
    )
    (tmp / "judge" / "answers.txt").write_text("best known: 42\n")
    (tmp / "agent.sh").write_text('#!/bin/sh\nexec python3 "$(dirname "$0")/helper.py"\n')
    (tmp / "agent.sh").chmod(0o755)
    (tmp / "helper.py").write_text(HELPER)
    probe = {
        "run's log": str(tmp / "run" / "log.jsonl"),
        "scorer's answers": str(tmp / "judge" / "answers.txt"),
        "private workspaces": str(tmp / "private"),
    }
    (tmp / "probe.json").write_text(json.dumps(probe))
    return tmp


@needs_bwrap
@pytest.mark.slow
def test_a_wrapper_script_runs_its_helper_under_bwrap_and_sees_nothing_of_the_run(
    tmp_path: Path,
) -> None:
    tmp = _project(tmp_path)
    done = subprocess.run(
        [PY, "-m", "evolving_agent", "search", "run", "--candidate", "candidate",
         "--task", "task.md", "--score", f"{PY} judge/score.py", "--agent", "command",
         "--agent-cmd", "./agent.sh", "--policy", "forget-team", "--agents", "2", "--rounds",
         "2", "--turns", "4",
         "--out", "run", "--sandbox", "bwrap", "--retries", "0", "--quiet", "--json"],
        cwd=tmp, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        env={**os.environ, "EA_WORKSPACES": str(tmp / "private")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["failed_turns"] == 0 and summary["best_score"] >= 2.0
    rows = [json.loads(line) for line in (tmp / "run" / "log.jsonl").read_text().splitlines()]
    for row in rows:
        repo = tmp / "run" / "rounds" / f"r{row['round']:02d}" / "repo"
        seen = json.loads(subprocess.run(
            ["git", "show", f"{row['commit']}:seen.json"], cwd=repo, capture_output=True,
            text=True, check=True,
        ).stdout)  # fmt: skip
        assert seen == {
            "another workspace's files": False,
            "run's log": False,
            "scorer's answers": False,
            "wrote its own folder": False,
        }
    assert not (tmp / "planted.txt").exists()
    assert json.loads((tmp / "run" / "run.json").read_text())["agent_cmd"] == str(
        (tmp / "agent.sh").resolve()
    )


@needs_bwrap
def test_a_script_folder_is_bound_read_only_unless_hidden_or_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tools").mkdir()
    script = tmp_path / "tools" / "agent.sh"
    script.write_text("#!/bin/sh\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Only a sandbox that names what to hide binds script folders (the runner's does).
    plain = Sandbox("bwrap").agent_argv(str(script), workspace=ws)
    assert str(script.parent) not in _ro_binds(plain) and str(script) in _ro_binds(plain)
    argv = Sandbox("bwrap", script_folders=True).agent_argv(str(script), workspace=ws)
    assert _ro_binds(argv) >= {str(script), str(script.parent)}
    # A folder the sandbox hides (the run's, the scorer's) is never bound ...
    hidden = Sandbox("bwrap", hide=(str(tmp_path / "tools"),), script_folders=True).agent_argv(
        str(script), workspace=ws
    )
    assert str(script.parent) not in _ro_binds(hidden) and str(script) in _ro_binds(hidden)
    # ... nor $HOME or above it (its secrets are no script's helpers).
    monkeypatch.setenv("HOME", str(tmp_path / "tools"))
    home = Sandbox("bwrap", script_folders=True).agent_argv(str(script), workspace=ws)
    assert str(script.parent) not in _ro_binds(home)
    # An interpreter's folder is not a script's.
    python = Sandbox("bwrap", script_folders=True).agent_argv(
        f"{os.path.realpath(PY)} x.py", workspace=ws
    )
    assert str(Path(os.path.realpath(PY)).parent) not in _ro_binds(python)


def _ro_binds(argv: list[str]) -> set[str]:
    return {argv[i + 2] for i, a in enumerate(argv) if a == "--ro-bind"}


def test_relative_script_paths_mean_the_users_files(tmp_path: Path) -> None:
    (tmp_path / "agent.sh").write_text("")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.py").write_text("")
    cand = tmp_path / "candidate"
    cand.mkdir()
    (cand / "solve.py").write_text("")
    (tmp_path / "solve.py").write_text("")  # also in the candidate: the workspace's
    here = str(tmp_path.resolve())
    assert absolute_command("./agent.sh --fast", tmp_path, cand) == f"{here}/agent.sh --fast"
    assert (
        absolute_command("python3 tools/run.py", tmp_path, cand) == f"python3 {here}/tools/run.py"
    )
    assert absolute_command("python3 solve.py", tmp_path, cand) == "python3 solve.py"
    # Found by Hypothesis: words left alone stay verbatim (quoted, "~/x" would not expand).
    assert absolute_command("~/x ./agent.sh", tmp_path, cand) == f"~/x {here}/agent.sh"
    # Shell syntax is left exactly as written.
    assert absolute_command("./agent.sh | tee log", tmp_path, cand) == "./agent.sh | tee log"
    assert absolute_command('./agent.sh "$X"', tmp_path, cand) == './agent.sh "$X"'


WORDS = st.sampled_from(
    ["./agent.sh", "agent.sh", "tools/run.py", "solve.py", "python3", "-x", "|", "$X",
     "'q w'", "a;b", "--flag=1", "~/x", "missing.py", "&&"]
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(words=st.lists(WORDS, min_size=1, max_size=5))
def test_absolute_command_only_ever_anchors_existing_user_files(
    tmp_path_factory: pytest.TempPathFactory, words: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("cmd")
    (tmp / "agent.sh").write_text("")
    (tmp / "tools").mkdir()
    (tmp / "tools" / "run.py").write_text("")
    (tmp / "solve.py").write_text("")
    cand = tmp / "candidate"
    cand.mkdir()
    (cand / "solve.py").write_text("")
    command = " ".join(words)
    out = absolute_command(command, tmp, cand)
    assert absolute_command(out, tmp, cand) == out  # idempotent
    if out == command:
        return
    # Changed: the command was plain words, and only existing user files changed, each
    # into the absolute path of that same file.
    assert not any(set(w) & set("|&;<>()$`*?![]{}'\"\\") for w in words)
    new = out.split(" ")
    assert len(new) == len(words)
    for old, now in zip(words, new, strict=True):
        if old != now:
            assert Path(now).is_absolute() and Path(now) == (tmp / old).resolve()
            assert not (cand / old).exists()
