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
    isolated,
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


# The source runs are shared by their module's tests (plateau-test only reads them, on
# copies: test_the_source_run_is_never_modified_... checks it); each test writes its
# sides to its own tmp_path.  The agents' log is beside the run (agent_log(run.parent)).
@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("source")
    make_candidate(tmp)
    make_task(tmp)
    agent = write_agent(tmp, AGENT)
    with isolated(tmp):
        run_search(
            config(tmp, score_cmd=write_scorer(tmp), agent_cmd=agent, policy="parallel",
                   agents=2, turns=4, sandbox="none")
        )  # fmt: skip
    assert [r["score"] for r in records(tmp / "run")] != []
    return tmp / "run"


def test_the_continued_session_is_shown_the_score_of_what_its_workspace_holds(
    run: Path, tmp_path: Path
) -> None:
    # Guards the misleading first prompt of issue 20: it quoted the agent's own last
    # score (2) while its workspace had been reset to the team's best (20).
    before = len(agent_log(run.parent))
    plateau_test(run, turns=2, repeats=1, force=True, out=tmp_path / "pt")
    cont = [c for c in agent_log(run.parent)[before:] if c["EA_NEW_SESSION"] == "0"]
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


def test_equal_gains_give_intervals_but_no_ratio(run: Path, tmp_path: Path) -> None:
    # Guards "Fresh sessions gained 1.00× what continued ones did" from sides whose
    # gains are the same: the exact test says p = 1, so there is nothing to quote.
    result = plateau_test(run, turns=2, repeats=3, force=True, out=tmp_path / "pt")
    cont, fresh = result.side("continue"), result.side("fresh")
    assert len(cont.draws) == len(fresh.draws) == 3
    # Each side's two turns: agent 2 adds 10 to the best (20) every time.
    assert cont.gains == fresh.gains == [10.0, 10.0, 10.0]
    ci = cont.gain_ci
    assert ci is not None and ci.low > 0
    assert result.p_value == 1.0 and result.gain_ratio is None
    assert result.ratio_note is not None
    assert "do not differ at the 0.05 level (exact permutation test" in result.ratio_note
    assert "p cannot go below 0.1" in result.ratio_note  # 3 against 3: 2 of 20 splits
    assert result.warnings and "3 repeat(s) a side are too few" in result.warnings[0]
    assert cont.median_lines == fresh.median_lines == 2.0  # one line replaced: -1 +1


# The source run improves on each agent's first two turns and never again; under
# plateau-test the behaviour comes from MODE: fresh sessions gain more ("differ") or
# every turn gains alike ("same"), by an amount that varies with the repeat's seed.
PLATEAU_AGENT = """
mode = pathlib.Path({mode!r}).read_text().strip()
fresh = os.environ["EA_NEW_SESSION"] == "1"
s = int(os.environ["EA_SEED"]) % 3
if mode == "run":
    if int(os.environ["EA_TURN"]) <= 2:
        write(value() + 1)
elif mode == "differ":
    write(value() + (10 if fresh else 1) + s)
else:
    write(value() + 1 + s)
"""


@pytest.fixture(scope="module")
def flat_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("flat")
    make_candidate(tmp)
    make_task(tmp)
    (tmp / "mode").write_text("run")
    agent = write_agent(tmp, PLATEAU_AGENT.format(mode=str(tmp / "mode")))
    with isolated(tmp):
        run_search(
            config(tmp, score_cmd=write_scorer(tmp), agent_cmd=agent, policy="parallel",
                   agents=2, turns=12, sandbox="none")
        )  # fmt: skip
    return tmp / "run"


def _plateau_cli(run: Path, out: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        cli, ["search", "plateau-test", str(run), "--turns", "2", "--out", str(out),
              "--quiet", *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def test_fresh_gains_that_differ_give_a_ratio_with_its_exact_p(
    flat_run: Path, tmp_path: Path
) -> None:
    (flat_run.parent / "mode").write_text("differ")
    out = _plateau_cli(flat_run, tmp_path / "pt", "--repeats", "5")
    data = json.loads((tmp_path / "pt" / "plateau-test.json").read_text())
    # Fresh: 10 + s, continued: 1 + s, s = 0 1 2 0 1: every fresh gain above every
    # continued one, which an exact test of 5 against 5 puts at p = 2 / C(10, 5).
    assert data["sides"]["fresh"]["draws"][0]["gain"] == 10.0
    assert [d["gain"] for d in data["sides"]["continue"]["draws"]] == [1, 2, 3, 1, 2]
    assert data["p_value"] == pytest.approx(2 / 252)
    assert data["gain_ratio_fresh_over_continue"] == pytest.approx(10.8 / 1.8)
    assert data["plateau"]["session_age"] == 4 and data["plateau"]["youngest_session"] == 6
    assert "every session to continue is at least 4 turns old" in out
    assert (
        "Fresh sessions gained 6.00× what continued ones did (means over 5 repeats; "
        "exact permutation test of mean gains, two-sided: p = 0.00794 <= 0.05)"
    ) in out
    assert "warning" not in out


def test_gains_that_do_not_differ_give_no_ratio_and_few_repeats_a_warning(
    flat_run: Path, tmp_path: Path
) -> None:
    (flat_run.parent / "mode").write_text("same")
    out = _plateau_cli(flat_run, tmp_path / "pt", "--repeats", "5")
    data = json.loads((tmp_path / "pt" / "plateau-test.json").read_text())
    assert data["p_value"] == 1.0 and data["gain_ratio_fresh_over_continue"] is None
    assert "No gain ratio: fresh and continued gains do not differ at the 0.05 level" in out
    assert "gained" not in out and "warning" not in out
    few = _plateau_cli(flat_run, tmp_path / "pt3", "--repeats", "3")
    assert few.splitlines()[-4] == (
        "warning: 3 repeat(s) a side are too few to tell the sides apart: the smallest p "
        "an exact test of 3 against 3 can give is 0.1; use --repeats 5 or more"
    )


def test_sessions_younger_than_k_turns_are_not_plateaued(flat_run: Path, tmp_path: Path) -> None:
    # Each session took 6 turns, the last 4 of them flat: plateaued at K = 4 ...
    with pytest.raises(NotPlateaued, match="youngest session is 6 turns old"):
        plateau_test(flat_run, turns=2, session_age=7, out=tmp_path / "pt")
    # ... and the rule's K is said in the refusal.
    result = CliRunner().invoke(
        cli, ["search", "plateau-test", str(flat_run), "--turns", "2", "--session-age", "7"]
    )
    assert result.exit_code == 4
    assert "every session to continue is at least 7 turns old" in result.stderr


def test_the_source_run_is_never_modified_and_a_second_call_starts_alike(run: Path) -> None:
    # Guards a second call adding commits to the run's worktrees and resuming the
    # sessions the first call had already moved on.
    before = _tree(run)
    first = plateau_test(run, turns=2, repeats=2, force=True)
    assert _tree(run) == before
    assert first.out == run.parent / "run-plateau" and first.out.is_dir()
    logged = len(agent_log(run.parent))
    second = plateau_test(run, turns=2, repeats=2, force=True)
    assert _tree(run) == before and second.out != first.out
    again = agent_log(run.parent)[logged:]
    assert {c["value"] for c in again if c["EA_NEW_SESSION"] == "0"} >= {20.0}
    assert [d.gain for d in second.side("continue").draws] == [
        d.gain for d in first.side("continue").draws
    ]
    with pytest.raises(Exception, match="outside the run directory"):
        plateau_test(run, turns=2, repeats=1, force=True, out=run / "inside")
