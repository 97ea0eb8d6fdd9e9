"""What an assistant may do to its own memory from inside a session: the tool surface.

These functions are what the MCP server exposes, kept free of MCP so they are plain
library calls and easy to test.  Every one acts as ``session`` — hard-coded, never a
parameter — because nothing reachable by the assistant may act as ``human`` or as a
job (SPEC section 3).  The policy table then does the rest: a session may append to
Evidence and replace Live Bus entries, and may not touch Canon or Today.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pydantic import BaseModel, ConfigDict

from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.ops import events, live
from evolving_agent.memory.ops.hypotheses import add_hypothesis, list_hypotheses, propose_shape
from evolving_agent.memory.ops.live import LiveEntry
from evolving_agent.memory.root import require_root
from evolving_agent.paths import MemoryRoot

# The one actor every assistant-facing interface uses.  Deliberately a constant.
SESSION: Final = "session"


class FrictionRecorded(BaseModel):
    """What the friction tool answers: the new Evidence record's id and who wrote it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    actor: str
    ts: str
    supports: str | None = None
    contradicts: str | None = None
    # The same warnings the CLI prints (e.g. a hypothesis id not in the register).
    warnings: list[str] = []


class HypothesisView(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    text: str
    state: str


class HypothesesResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    hypotheses: list[HypothesisView]


class ProposalRecorded(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    hypothesis: str
    when: str | None = None
    do: str | None = None
    note: str


@dataclass(frozen=True)
class SessionTools:
    """The session's tools over one memory root."""

    root: MemoryRoot

    def __post_init__(self) -> None:
        require_root(self.root)

    def friction(
        self,
        text: str,
        *,
        supports: str | None = None,
        contradicts: str | None = None,
        session: str | None = None,
    ) -> FrictionRecorded:
        """Append one friction event to Evidence as ``session``."""
        result = events.record_friction(
            self.root, SESSION, text, session=session, supports=supports, contradicts=contradicts
        )
        rec = result.value
        return FrictionRecorded(
            id=rec.id,
            actor=rec.actor,
            ts=rec.ts.isoformat(),
            supports=rec.supports,
            contradicts=rec.contradicts,
            warnings=result.warnings,
        )

    def live_set(self, key: str, text: str) -> LiveEntry:
        """Set one Live Bus entry as ``session``."""
        return live.set_entry(self.root, SESSION, key, text)

    def boot(self) -> str:
        """The boot context as Markdown (Canon, Today, Live Bus; never Evidence history)."""
        return build_boot(self.root).markdown()

    def hypothesis_add(
        self,
        text: str,
        *,
        when: str | None = None,
        do: str | None = None,
        stakes: str = "low",
    ) -> HypothesisView:
        """Raise a hypothesis the assistant noticed, as ``session`` (state ``emerging``,
        origin ``session``): an Evidence record the next nightly run adopts."""
        h = add_hypothesis(self.root, text, when=when, do=do, stakes=stakes, actor=SESSION)
        return HypothesisView(id=h.id, text=h.text, state=h.state)

    def hypothesis_propose(
        self, hypothesis: str, *, when: str | None = None, do: str | None = None
    ) -> ProposalRecorded:
        """Propose a trigger and/or counter-move for a hypothesis, as ``session``.

        Recorded as the session's proposal: it reaches the bias only once friction
        supports the hypothesis on 2 distinct days from now, or the human adopts it."""
        rec = propose_shape(self.root, hypothesis, when=when, do=do)
        return ProposalRecorded(
            id=rec.id,
            hypothesis=hypothesis,
            when=rec.data.get("when"),
            do=rec.data.get("do"),
            note=(
                "recorded as the session's proposal; it is used once friction supports the "
                "hypothesis on 2 distinct days, or when the human adopts it"
            ),
        )

    def hypotheses(self) -> HypothesesResult:
        """The hypothesis register: id, text and qualitative state of each hypothesis.

        Read from Today's register cache through the session's read scope, never from
        the Evidence history (no score is exposed: there is none).
        """
        return HypothesesResult(
            hypotheses=[
                HypothesisView(id=h.id, text=h.text, state=h.state)
                for h in list_hypotheses(self.root)
            ]
        )
