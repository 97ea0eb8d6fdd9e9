"""The words of hypotheses: verbatim quotes, one belief once, the session's proposals."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import (
    add_hypothesis,
    edit_hypothesis,
    fold_root,
    propose_shape,
    quote,
)
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root
from tests.helpers.weeks import at

D0 = date(2027, 3, 1)


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_a_grounding_quote_keeps_commands_as_written() -> None:
    # Regression: the old sanitiser turned these into "node modules" / "audit log old".
    assert quote("asked before `rm -rf node_modules` today") == (
        "asked before rm -rf node_modules today"
    )
    assert quote("DROP TABLE audit_log_old;\nthen <b>stopped</b>") == (
        "DROP TABLE audit_log_old; then stopped"
    )
    assert quote("a\u200bb\u202ec --force ~/.ssh/*") == "abc --force ~/.ssh/*"
    assert quote("said “stop” then") == 'said "stop" then'  # cannot close the bias's quote
    assert len(quote("x" * 500, 140)) == 140


def test_the_same_belief_behind_invisible_or_lookalike_characters_is_refused(
    root: MemoryRoot,
) -> None:
    add_hypothesis(root, "I add flexibility nobody asked for", ts=at(D0, 8))
    for twin in (
        "I add fle\u200bxibility nobody asked for",
        "I add flexibility nobody \u0430sked for",
        "I add ｆlexibility nobody asked for",
    ):
        with pytest.raises(InvalidInput, match="already says this"):
            add_hypothesis(root, twin, ts=at(D0, 9))
    assert len(fold_root(root)) == 1


def test_a_session_proposal_is_recorded_and_only_the_human_adopts_it(root: MemoryRoot) -> None:
    h = add_hypothesis(root, "I open with a plan nobody asked for", ts=at(D0, 8))
    rec = propose_shape(root, h.id, when="about to start with a plan", do="answer first")
    assert rec.kind == "hypothesis-proposal" and rec.actor == "session"
    assert rec.data == {
        "hypothesis": h.id,
        "when": "about to start with a plan",
        "do": "answer first",
    }
    with pytest.raises(InvalidInput, match="at least a trigger"):
        propose_shape(root, h.id)
    assert sorted(r.kind for r in EvidenceLog(root).iter_all()) == [
        "hypothesis",
        "hypothesis-proposal",
    ]
    # Nothing in the register changed: the proposal waits for the nightly job / the human.
    assert fold_root(root)[h.id].do is None


def test_a_session_hypothesis_is_not_ready_until_friction_or_the_human(root: MemoryRoot) -> None:
    h = add_hypothesis(
        root, "Pending pushes go out at once", when="a push is pending",
        do="run git push --force origin main without asking", actor="session", ts=at(D0, 8),
    )
    assert not h.ready
    backed = h.model_copy(update={"supported_on": [D0, date(2027, 3, 2)]})
    assert backed.ready
    adopted = h.model_copy(update={"adopted": True})
    assert adopted.ready and not adopted.session_words
    with pytest.raises(InvalidInput, match="nothing of the session"):
        human = add_hypothesis(root, "A human belief", ts=at(D0, 9))
        edit_hypothesis(root, human.id, adopt=True)


# Confusable rewritings of one claim: what a session (or a pasted text) may type.
_LOOKALIKE = {
    "a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441", "i": "\u0456"
}  # fmt: skip


def _disguise(text: str, moves: list[tuple[int, int]]) -> str:
    out = list(text)
    for kind, where in moves:
        i = where % len(out)
        ch, rest = out[i][0], out[i][1:]  # a slot may hold a letter and what was added
        if kind == 0 and ch.lower() in _LOOKALIKE:
            ch = _LOOKALIKE[ch.lower()]
        elif kind == 1:
            rest += "\u200b"  # zero-width space
        elif kind == 2 and "!" <= ch <= "~":
            ch = chr(ord(ch) + 0xFEE0)  # full width
        elif kind == 3:
            ch = ch.upper()
        elif kind == 4 and ch == " ":
            rest += " "
        out[i] = ch + rest
    return "".join(out)


_MOVES = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 200)), max_size=6)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(twins=st.lists(_MOVES, min_size=1, max_size=5), actors=st.lists(st.booleans(), min_size=5))
def test_look_alikes_fold_into_one_hypothesis_at_every_entry(
    tmp_path_factory: pytest.TempPathFactory, twins: list[list[tuple[int, int]]], actors: list[bool]
) -> None:
    # Guards issue 31: five confusable spellings added one by one were five hypotheses.
    # Added by the human or by a session (whose additions wait in Evidence for the
    # nightly), in any order: one belief, and the nightly adopts at most that one.
    from evolving_agent.jobs.nightly import run_nightly

    root = fresh_root(tmp_path_factory.mktemp("twins") / "memory")
    claim = "I open with a plan nobody asked for"
    spellings = [claim] + [_disguise(claim, moves) for moves in twins]
    added = 0
    for i, text in enumerate(spellings):
        actor = "session" if actors[i % len(actors)] else "human"
        try:
            add_hypothesis(root, text, actor=actor, ts=at(D0, 8 + i))
            added += 1
        except InvalidInput as e:
            assert "already" in str(e)
    assert added == 1
    run_nightly(root, D0, now=at(date(2027, 3, 2), 3))
    assert len([h for h in fold_root(root).values() if h.active]) == 1


def test_a_session_twin_of_a_pending_session_hypothesis_is_refused(root: MemoryRoot) -> None:
    # The shrunk case: two sessions, one day, no nightly in between.
    add_hypothesis(root, "I open with a plan nobody asked for", actor="session", ts=at(D0, 8))
    with pytest.raises(InvalidInput, match="already says this"):
        add_hypothesis(root, "I open with a рlan nobody asked for", actor="session", ts=at(D0, 9))
