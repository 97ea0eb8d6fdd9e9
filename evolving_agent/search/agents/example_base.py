"""What the bundled example agents (``tsp-example``, ``circles-example``) share: a
session's memory as a small JSON file under the run's agent state, and the best visible
candidate's file to restart from.  No model: they stand in for a coding agent in tests,
the demo and the benchmarks."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, ClassVar

from evolving_agent.search.agents.base import Agent, TurnRequest, TurnResult
from evolving_agent.search.reducer import better
from evolving_agent.search.workspace import head, read_file_at


class ExampleAgent(Agent):
    """An example agent's session file and peer reading; ``STATE_DIR`` names its folder
    under ``agent-state/``."""

    STATE_DIR: ClassVar[str]

    def turn_rng(self, request: TurnRequest) -> random.Random:
        """This turn's randomness, from the run's seed, the round, the agent and the turn:
        the same seed repeats a run's edits, teams included."""
        return random.Random(f"{request.seed}:{request.round}:{request.agent}:{request.turn}")

    def refused(self, request: TurnRequest, missing: Path) -> TurnResult | None:
        """The turn's failure when the workspace has no ``missing`` (the agent only knows
        its bundled example), else None."""
        if missing.is_file():
            return None
        return TurnResult(
            session_id=request.session_id,
            error=f"the {self.name} agent only knows its bundled example (no {missing.name})",
        )

    def best_peer_file(self, request: TurnRequest, name: str) -> str | None:
        """``name`` as the best visible candidate has it, if that candidate is not the
        workspace's HEAD (None: nothing better to restart from)."""
        current = head(request.workspace)
        scored = [v for v in request.visible if v.score is not None]
        if not scored:
            return None
        best = scored[0]
        for v in scored[1:]:
            assert v.score is not None and best.score is not None
            if better(v.score, best.score, minimize=request.minimize):
                best = v
        if best.commit == current:
            return None
        return read_file_at(request.workspace, best.commit, name)

    def _path(self, request: TurnRequest) -> Path | None:
        if request.state_dir is None:
            return None
        return request.state_dir / self.STATE_DIR / f"{request.session_id}.json"

    def _load(self, request: TurnRequest) -> dict[str, Any]:
        path = self._path(request)
        if request.new_session or path is None or not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, request: TurnRequest, session: dict[str, Any]) -> None:
        path = self._path(request)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(session))
        tmp.replace(path)
