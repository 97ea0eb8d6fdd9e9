"""The words of hypotheses: verbatim quotes, one belief once, the session's proposals."""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path

import pytest

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

D0 = date(2027, 3, 1)


def at(day: date, hour: int) -> datetime:
    return datetime.combine(day, time(hour)).astimezone()


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
