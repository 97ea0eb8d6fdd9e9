"""The session's tool surface (``integrations/session_tools.py``) as plain library calls:
everything acts as ``session``, and the policy keeps it out of Canon and Today.  The same
tools over MCP are tests/integrations/test_mcp_tools.py."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from evolving_agent.errors import InvalidInput, NotFound
from evolving_agent.integrations.session_tools import SESSION, SessionTools
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.memory.ops.live import entries
from tests.helpers.review import snapshot
from tests.helpers.roots import fresh_root


@pytest.fixture
def tools(tmp_path: Path) -> SessionTools:
    return SessionTools(fresh_root(tmp_path / "memory"))


def test_no_tool_takes_an_actor() -> None:
    for name, fn in inspect.getmembers(SessionTools, inspect.isfunction):
        assert "actor" not in inspect.signature(fn).parameters, name


def test_friction_is_recorded_as_the_session_with_its_warnings(tools: SessionTools) -> None:
    done = tools.friction("gave three options", contradicts="h-00000000", session="s-9")
    assert done.actor == SESSION and done.contradicts == "h-00000000"
    assert done.warnings and "no hypothesis h-00000000" in done.warnings[0]
    [rec] = [r for r in EvidenceLog(tools.root).iter_all() if r.id == done.id]
    assert (rec.kind, rec.actor, rec.session) == ("friction", "session", "s-9")


def test_the_live_bus_and_hypotheses_are_the_sessions_to_write(tools: SessionTools) -> None:
    entry = tools.live_set("thread", "stopped at the parser")
    assert [(e.key, e.text) for e in entries(tools.root)] == [("thread", "stopped at the parser")]
    assert entry.key == "thread"
    raised = tools.hypothesis_add("the user wants one answer", when="asked how", do="answer once")
    assert raised.state == "emerging" and raised.id.startswith("h-")
    # A session's hypothesis waits for the nightly run; one in the register takes proposals.
    with pytest.raises(NotFound, match=raised.id):
        tools.hypothesis_propose(raised.id, do="give one command")
    known = add_hypothesis(tools.root, "the user reads the first line only")
    proposal = tools.hypothesis_propose(known.id, do="put the answer first")
    assert proposal.hypothesis == known.id and proposal.do == "put the answer first"
    assert "2 distinct days" in proposal.note
    [rec] = [r for r in EvidenceLog(tools.root).iter_all() if r.id == proposal.id]
    assert rec.actor == SESSION


def test_boot_and_the_register_read_without_changing_anything(tools: SessionTools) -> None:
    known = add_hypothesis(tools.root, "the user wants one answer")
    def layers() -> dict[str, bytes]:  # private caches (.ea/) may be refreshed
        return {k: v for k, v in snapshot(tools.root.path).items() if not k.startswith(".ea/")}

    before = layers()
    text = tools.boot()
    assert text.startswith("# Boot context") and "## Live Bus" in text
    assert [(h.id, h.state) for h in tools.hypotheses().hypotheses] == [(known.id, known.state)]
    assert layers() == before


def test_no_root_is_refused_before_any_tool(tmp_path: Path) -> None:
    from evolving_agent.paths import MemoryRoot

    with pytest.raises(InvalidInput, match="no memory root"):
        SessionTools(MemoryRoot(tmp_path / "nowhere"))
