"""What an agent is told each turn (``search/prompt.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evolving_agent.search.prompt import build_prompt
from evolving_agent.search.reducer import Decision, Visible
from evolving_agent.search.rundir import TurnRecord

TASK = "Make the tour shorter.\n\n"
SHA = "0123456789abcdef0123456789abcdef01234567"


def _last(**kw: object) -> TurnRecord:
    fields = {
        "seq": 3,
        "round": 1,
        "agent": 2,
        "turn": 3,
        "round_turn": 3,
        "session": "s-1",
        "new_session": False,
        "base_commit": SHA,
        "commit": SHA,
        "score": 1410.5,
        "feedback": "tour ok",
        "empty": False,
        "lines_changed": 4,
        "wall_s": 1.0,
        "ts": "2026-11-01T10:00:00+00:00",
    }
    return TurnRecord.model_validate({**fields, **kw})


VISIBLE = st.lists(
    st.builds(
        Visible,
        kind=st.sampled_from(["start", "own", "peer-best"]),
        commit=st.text("0123456789abcdef", min_size=40, max_size=40),
        score=st.none() | st.floats(allow_nan=False, allow_infinity=False),
        round=st.integers(1, 5),
        agent=st.none() | st.integers(1, 8),
        turn=st.none() | st.integers(1, 50),
    ),
    max_size=4,
)


def test_a_new_session_gets_the_task_verbatim_and_the_round_start() -> None:
    start = Visible(kind="start", commit=SHA, score=1500.0, round=1)
    prompt = build_prompt(
        task=TASK,
        decision=Decision(run_turn=True, new_session=True, visible=(start,)),
        minimize=True,
        last=_last(),
    )
    assert prompt.startswith("Make the tour shorter.\n\n---\nYour workspace holds")
    assert "(lower is better):\n- 0123456789ab  score 1500  (round start)\n" in prompt


def test_a_continued_session_hears_its_last_score_feedback_and_edit() -> None:
    own = Visible(kind="own", commit=SHA, score=None, round=1, agent=2, turn=3)
    decision = Decision(run_turn=True, session_id="s-1", visible=(own,))
    prompt = build_prompt(task=TASK, decision=decision, minimize=False, last=_last())
    assert prompt.startswith("Your last candidate (4 lines changed) scored 1410.5.\n")
    assert "Scorer feedback:\ntour ok\n" in prompt and "(higher is better)" in prompt
    assert "- 0123456789ab  score failed  (your turn 3)" in prompt
    quiet = build_prompt(
        task=TASK,
        decision=decision,
        minimize=False,
        last=_last(score=None, empty=True, feedback="  "),
    )
    assert quiet.startswith(
        "Your last candidate (no edit) scored failed.\nScorer feedback:\n(none)"
    )


@given(VISIBLE, st.booleans(), st.integers(1, 8))
def test_no_agent_is_told_its_own_number(visible: list[Visible], new: bool, agent: int) -> None:
    decision = Decision(run_turn=True, new_session=new, visible=tuple(visible))
    mine = build_prompt(task=TASK, decision=decision, minimize=True, last=_last(agent=agent))
    theirs = build_prompt(task=TASK, decision=decision, minimize=True, last=_last(agent=1))
    renumbered = Decision(
        run_turn=True,
        new_session=new,
        visible=tuple(Visible(**{**v.__dict__, "agent": None}) for v in visible),
    )
    assert (
        mine
        == theirs
        == build_prompt(task=TASK, decision=renumbered, minimize=True, last=_last(agent=agent))
    )
