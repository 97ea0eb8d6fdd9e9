"""``search certify RUN`` on a finished run (certify_run.py), through the real CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from evolving_agent.search.runner import run_search
from tests.helpers.search import PY, config, make_candidate, make_task, write_scorer
from tests.search.test_certify import BUMP_INLINE


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "evolving_agent", "search", *args], capture_output=True, text=True
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_search_certify_on_a_finished_run(tmp_path: Path) -> None:
    make_candidate(tmp_path)
    make_task(tmp_path)
    cfg = config(
        tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=f'{PY} -c "{BUMP_INLINE}"',
        agents=2, rounds=2, turns=4, sandbox="bwrap", sandbox_net=False,
    )  # fmt: skip
    summary = run_search(cfg)
    assert summary.certify is None  # not asked for
    run = tmp_path / "run"
    before = (run / "log.jsonl").read_bytes()
    done = _cli("certify", str(run))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "forgetting certified: 0/48 canaries found in 2 rounds (24 a round)\n"
    stored = json.loads((run / "summary.json").read_text())["certify"]
    assert stored["certified"] is True and stored["rounds"] == 2
    assert (run / "log.jsonl").read_bytes() == before  # no turn was added
    assert _cli("report", str(run)).returncode == 0
    assert "forgetting certified: 0/48" in (run / "report.md").read_text()


def test_search_certify_refuses_what_is_no_run_and_too_few_canaries(tmp_path: Path) -> None:
    missing = _cli("certify", str(tmp_path / "nothing"))
    assert missing.returncode != 0 and len(missing.stderr.strip().splitlines()) == 1
    assert "error:" in missing.stderr
    few = _cli("certify", str(tmp_path), "--canaries", "5")
    assert few.returncode != 0
