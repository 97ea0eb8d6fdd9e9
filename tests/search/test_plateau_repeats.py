"""``search plateau-test``: a plateau check, a truthful continued view, repeats on copies."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evolving_agent.cli import cli
from evolving_agent.search.plateau import NotPlateaued, plateau_test
from evolving_agent.search.runner import run_search
from tests.helpers.search import (
    agent_log,
    config,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)

pytestmark = pytest.mark.slow  # real runs and repeated sides: seconds each

# Agent 2 adds 10 a turn, agent 1 adds 1: the run's best is agent 2's, agent 1's own
# last candidate is far behind.  Every call logs what it was told and what it sees.
AGENT = """
v = value()
log(prompt=os.environ["EA_PROMPT"], value=v)
write(v + (10 if os.environ["EA_AGENT"] == "2" else 1))
"""


def _tree(path: Path) -> dict[str, str]:
    return {
        str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture()
def run(tmp_path: Path) -> Path:
    make_candidate(tmp_path)
    make_task(tmp_path)
    agent = write_agent(tmp_path, AGENT)
    run_search(
        config(tmp_path, score_cmd=write_scorer(tmp_path), agent_cmd=agent, policy="parallel",
               agents=2, turns=4, sandbox="none")
    )  # fmt: skip
    assert [r["score"] for r in records(tmp_path / "run")] != []
    return tmp_path / "run"


def test_the_continued_session_is_shown_the_score_of_what_its_workspace_holds(
    run: Path, tmp_path: Path
) -> None:
    # Guards the misleading first prompt of issue 20: it quoted the agent's own last
    # score (2) while its workspace had been reset to the team's best (20).
    before = len(agent_log(tmp_path))
    plateau_test(run, turns=2, repeats=1, force=True, out=tmp_path / "pt")
    cont = [c for c in agent_log(tmp_path)[before:] if c["EA_NEW_SESSION"] == "0"]
    first_of_agent_1 = next(c for c in cont if c["EA_AGENT"] == "1")
    assert first_of_agent_1["value"] == 20.0  # the workspace holds the run's best ...
    assert "which scored 20 " in first_of_agent_1["prompt"]  # ... and it is told so
    assert "scored 2." not in first_of_agent_1["prompt"]


def test_a_run_still_improving_is_refused_with_the_rule(run: Path, tmp_path: Path) -> None:
    with pytest.raises(NotPlateaued, match="none of the run's last 4 turns improved") as err:
        plateau_test(run, turns=2, out=tmp_path / "pt")
    # (Which turn improved last depends on how the two agents' turns interleaved.)
    last = max(r["seq"] for r in records(run) if r["improved"])
    assert f"its last improvement was turn {last} of 4" in str(err.value)
    assert not (tmp_path / "pt").exists() or not any((tmp_path / "pt").iterdir())


def test_one_draw_per_side_prints_no_ratio(run: Path, tmp_path: Path) -> None:
    # Guards "0.00×" printed from a single draw per side.
    result = CliRunner().invoke(
        cli, ["search", "plateau-test", str(run), "--turns", "2", "--repeats", "1", "--force",
              "--out", str(tmp_path / "pt"), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "No gain ratio: one repeat per side" in result.output
    assert "gained" not in result.output
    data = json.loads((tmp_path / "pt" / "plateau-test.json").read_text())
    assert data["gain_ratio_fresh_over_continue"] is None
    assert data["sides"]["continue"]["gain_ci95"] is None


def test_repeats_give_intervals_and_a_ratio_when_the_continued_gain_is_surely_positive(
    run: Path, tmp_path: Path
) -> None:
    result = plateau_test(run, turns=2, repeats=3, force=True, out=tmp_path / "pt")
    cont, fresh = result.side("continue"), result.side("fresh")
    assert len(cont.draws) == len(fresh.draws) == 3
    # Each side's two turns: agent 2 adds 10 to the best (20) every time.
    assert cont.gains == fresh.gains == [10.0, 10.0, 10.0]
    ci = cont.gain_ci
    assert ci is not None and ci.low > 0
    assert result.gain_ratio == pytest.approx(1.0)
    assert cont.median_lines == fresh.median_lines == 2.0  # one line replaced: -1 +1


def test_the_source_run_is_never_modified_and_a_second_call_starts_alike(
    run: Path, tmp_path: Path
) -> None:
    # Guards a second call adding commits to the run's worktrees and resuming the
    # sessions the first call had already moved on.
    before = _tree(run)
    first = plateau_test(run, turns=2, repeats=2, force=True)
    assert _tree(run) == before
    assert first.out == run.parent / "run-plateau" and first.out.is_dir()
    logged = len(agent_log(tmp_path))
    second = plateau_test(run, turns=2, repeats=2, force=True)
    assert _tree(run) == before and second.out != first.out
    again = agent_log(tmp_path)[logged:]
    assert {c["value"] for c in again if c["EA_NEW_SESSION"] == "0"} >= {20.0}
    assert [d.gain for d in second.side("continue").draws] == [
        d.gain for d in first.side("continue").draws
    ]
    with pytest.raises(Exception, match="outside the run directory"):
        plateau_test(run, turns=2, repeats=1, force=True, out=run / "inside")
