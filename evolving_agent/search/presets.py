"""Policies are reducer presets: a few flags the reducer reads, nothing more.

=============== ======= ===== ======= ============== =========================
policy          agents  share rounds  at a boundary  workspace at a boundary
=============== ======= ===== ======= ============== =========================
single          1       no    1       -              -
parallel        N       no    1       -              -
team            N       yes   1       -              -
forget          1       no    R       new sessions   new one-commit repository
forget-team     N       yes   R       new sessions   new one-commit repository
fork-and-flush  N       yes   R       new sessions   same repository (history kept)
keep-notes      N       yes   R       same sessions  same repository, shared notes
=============== ======= ===== ======= ============== =========================

At every boundary all agents restart from the team's best candidate.  ``keep-notes``
is the arm that argues for memory (CORAL's accumulate arm): it keeps everything the
forgetting policies throw away -- sessions continue across rounds, every round's
candidates stay visible, and the agents share a notes file that lives for the whole
run (``notes.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from evolving_agent.errors import UsageError


@dataclass(frozen=True)
class Preset:
    """How a policy shapes what the reducer allows."""

    name: str
    single_agent: bool
    share_peers: bool
    forgets: bool  # has round boundaries (restarts from the team's best)
    fresh_repo: bool  # a boundary also drops every candidate history
    # A boundary resets nothing but the workspace: sessions, history and the shared
    # notes file carry over (so its rounds are restarts, never forgetting).
    keeps_notes: bool = False

    @property
    def resets_sessions(self) -> bool:
        """Does a round boundary start every agent on a new session?"""
        return self.forgets and not self.keeps_notes


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("single", single_agent=True, share_peers=False, forgets=False, fresh_repo=False),
        Preset("parallel", single_agent=False, share_peers=False, forgets=False, fresh_repo=False),
        Preset("team", single_agent=False, share_peers=True, forgets=False, fresh_repo=False),
        Preset("forget", single_agent=True, share_peers=False, forgets=True, fresh_repo=True),
        Preset("forget-team", single_agent=False, share_peers=True, forgets=True, fresh_repo=True),
        Preset(
            "fork-and-flush", single_agent=False, share_peers=True, forgets=True, fresh_repo=False
        ),
        Preset(
            "keep-notes",
            single_agent=False,
            share_peers=True,
            forgets=True,
            fresh_repo=False,
            keeps_notes=True,
        ),  # fmt: skip
    )
}


def preset_for(policy: str) -> Preset:
    """The preset named ``policy``; an unknown name lists the valid ones."""
    try:
        return PRESETS[policy]
    except KeyError:
        raise UsageError(
            f"unknown policy {policy!r}; choose one of: {', '.join(PRESETS)}"
        ) from None
