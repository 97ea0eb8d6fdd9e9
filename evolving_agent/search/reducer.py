"""The reducer: the one place that decides what happens before each turn.

Pure functions over the search state (the turn records so far and the current
round's plan) and a policy preset.  Nothing here touches disk, git or the clock, so
every policy's behaviour can be tested with hand-written records.

Before each turn of each agent, ``decide`` answers:

* may this agent take a turn now (its quota for the round, the round's budget)?
* does the round end now, and why (``plateau``, ``shrinking``, ``budget``)?
* does the agent's session continue, or start fresh?
* which candidates may it see (round start, own history, peers' best)?  A round's
  first turn sees only the round start, so every agent starts identically (under
  ``keep-notes`` it also keeps its session and sees every earlier round's history).

``plan_round`` splits what is left of the turn and money budgets evenly over the
rounds still to come, so a round that ended early hands its turns to the next.

Plateau forgetting (``forget_on_plateau=K``) ends the round when either signal fires
on the current round's turns, in completion order:

* ``plateau``: none of the last K turns improved the team best;
* ``shrinking``: over the last ``m = max(2, ceil(K/2))`` turns the lines changed never
  grew, the first of them changed something and the last was empty (the agents have
  talked themselves into a "practical limit").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evolving_agent.search.presets import Preset
from evolving_agent.search.rundir import ForgetReason, TurnRecord


@dataclass(frozen=True)
class Visible:
    """A candidate the agent is allowed to see."""

    kind: str  # "start" (the round's starting candidate), "own", "peer-best"
    commit: str
    score: float | None
    round: int
    agent: int | None = None
    turn: int | None = None


@dataclass(frozen=True)
class RoundPlan:
    """What a round may spend; fixed when the round starts."""

    number: int
    start_commit: str
    start_score: float
    quotas: tuple[int, ...]  # turns per agent (index 0 = agent 1)
    budget_usd: float | None = None
    budget_tokens: int | None = None


@dataclass(frozen=True)
class SearchState:
    """What the reducer reads: every record so far and the current round."""

    records: tuple[TurnRecord, ...]
    round: RoundPlan
    closing: str | None = None  # set once the round has been told to end


@dataclass(frozen=True)
class Decision:
    run_turn: bool
    new_session: bool = False
    session_id: str | None = None  # the session to continue (None when new)
    visible: tuple[Visible, ...] = ()
    end_round: str | None = None  # the round ends now, for this reason


STOP = Decision(run_turn=False)


def better(score: float, than: float, *, minimize: bool, floor: float = 0.0) -> bool:
    """Is ``score`` an improvement on ``than`` by more than the noise floor?"""
    gain = than - score if minimize else score - than
    return gain > floor


def plan_round(
    *,
    number: int,
    previous: Sequence[TurnRecord],
    shares: Sequence[int],
    rounds: int,
    start_commit: str,
    start_score: float,
    budget_usd: float | None = None,
    budget_tokens: int | None = None,
) -> RoundPlan | None:
    """The plan of round ``number`` given the records of earlier rounds.

    Returns None when nothing is left to spend (all turns done, or budget exhausted).
    """
    rounds_left = max(1, rounds - number + 1)
    quotas = []
    for index, share in enumerate(shares):
        done = sum(1 for r in previous if r.agent == index + 1)
        quotas.append(math.ceil(max(0, share - done) / rounds_left))
    if sum(quotas) == 0:
        return None
    usd = tokens = None
    if budget_usd is not None:
        left = budget_usd - sum(r.cost_usd or 0.0 for r in previous)
        if left <= 0:
            return None
        usd = left / rounds_left
    if budget_tokens is not None:
        left_tokens = budget_tokens - sum(r.tokens for r in previous)
        if left_tokens <= 0:
            return None
        tokens = math.ceil(left_tokens / rounds_left)
    return RoundPlan(number, start_commit, start_score, tuple(quotas), usd, tokens)


def plateau_signal(round_records: Sequence[TurnRecord], k: int) -> ForgetReason | None:
    """``plateau`` / ``shrinking`` if the round's turns say so (see module doc)."""
    ordered = sorted(round_records, key=lambda r: r.seq)
    if len(ordered) >= k and not any(r.improved for r in ordered[-k:]):
        return "plateau"
    m = max(2, math.ceil(k / 2))
    if len(ordered) >= m:
        window = [r.lines_changed for r in ordered[-m:]]
        never_grew = all(b <= a for a, b in zip(window, window[1:], strict=False))
        if never_grew and window[0] > 0 and ordered[-1].empty:
            return "shrinking"
    return None


def visible_for(
    state: SearchState, *, preset: Preset, agent: int, minimize: bool
) -> tuple[Visible, ...]:
    """Round start, own history and (if the team shares) each peer's best candidate.

    With a fresh repository per round only this round's candidates exist; with
    ``fork-and-flush`` and the no-forget policies the whole history stays visible.
    """
    rnd = state.round
    scope = [r for r in state.records if (r.round == rnd.number or not preset.fresh_repo)]
    seen = [Visible("start", rnd.start_commit, rnd.start_score, rnd.number)]
    for r in sorted(scope, key=lambda r: r.seq):
        if r.agent == agent and not r.empty:
            seen.append(Visible("own", r.commit, r.score, r.round, r.agent, r.turn))
    if preset.share_peers:
        peers = sorted({r.agent for r in scope} - {agent})
        for peer in peers:
            scored = [r for r in scope if r.agent == peer and r.score is not None]
            if not scored:
                continue
            best = scored[0]
            for r in scored[1:]:
                assert r.score is not None and best.score is not None
                if better(r.score, best.score, minimize=minimize):
                    best = r
            seen.append(Visible("peer-best", best.commit, best.score, best.round, peer, best.turn))
    return tuple(seen)


def decide(
    state: SearchState,
    *,
    preset: Preset,
    agent: int,
    minimize: bool,
    forget_on_plateau: int | None = None,
) -> Decision:
    """What agent ``agent`` (1-based) may do before its next turn."""
    if state.closing is not None:
        return STOP
    rnd = state.round
    in_round = [r for r in state.records if r.round == rnd.number]
    mine = sorted((r for r in in_round if r.agent == agent), key=lambda r: r.seq)
    if len(mine) >= rnd.quotas[agent - 1]:
        return STOP
    if rnd.budget_usd is not None and sum(r.cost_usd or 0.0 for r in in_round) >= rnd.budget_usd:
        return Decision(run_turn=False, end_round="budget")
    if rnd.budget_tokens is not None and sum(r.tokens for r in in_round) >= rnd.budget_tokens:
        return Decision(run_turn=False, end_round="budget")
    if forget_on_plateau is not None and preset.forgets:
        reason = plateau_signal(in_round, forget_on_plateau)
        if reason is not None:
            return Decision(run_turn=False, end_round=reason)
    # Sessions live within a round: the first turn of a round is always a new one --
    # except under keep-notes, where an agent's session continues across rounds.
    history = mine
    if preset.keeps_notes:
        history = sorted((r for r in state.records if r.agent == agent), key=lambda r: r.seq)
    session = next((r.session for r in reversed(history) if r.session), None)
    new_session = not history or session is None
    if not mine and not preset.keeps_notes:
        # Identical first instructions: a round's first turn sees only its start.
        visible: tuple[Visible, ...] = (
            Visible("start", rnd.start_commit, rnd.start_score, rnd.number),
        )
    else:
        visible = visible_for(state, preset=preset, agent=agent, minimize=minimize)
    return Decision(
        run_turn=True,
        new_session=new_session,
        session_id=None if new_session else session,
        visible=visible,
    )
