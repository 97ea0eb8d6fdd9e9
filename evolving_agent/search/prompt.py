"""What an agent is told each turn.

A new session gets the task text verbatim plus the candidates the reducer lets it
see; at a round start that is only the round's starting candidate, so every agent
gets the identical first instructions.  A continued session gets a short follow-up:
its last score and feedback and the candidates it may see now.  No agent is told
its own number, so prompts stay identical across agents.
"""

from __future__ import annotations

from evolving_agent.search.reducer import Decision, Visible
from evolving_agent.search.rundir import TurnRecord


def build_prompt(*, task: str, decision: Decision, minimize: bool, last: TurnRecord | None) -> str:
    direction = "lower is better" if minimize else "higher is better"
    seen = "\n".join(_line(v) for v in decision.visible)
    candidates = f"Candidates you may inspect with `git show COMMIT` ({direction}):\n{seen}"
    if decision.new_session or last is None:
        return (
            f"{task.rstrip()}\n\n---\n"
            "Your workspace holds the current candidate. Edit files in place; the harness "
            "commits and scores whatever you leave (ignored files are not scored).\n"
            f"{candidates}\n"
        )
    score = "failed" if last.score is None else f"{last.score:g}"
    outcome = "no edit" if last.empty else f"{last.lines_changed} lines changed"
    feedback = last.feedback.strip() or "(none)"
    return (
        f"Your last candidate ({outcome}) scored {score}.\nScorer feedback:\n{feedback}\n\n"
        f"{candidates}\nKeep improving the candidate in your workspace.\n"
    )


def _line(v: Visible) -> str:
    score = "failed" if v.score is None else f"{v.score:g}"
    who = {
        "start": "round start",
        "own": f"your turn {v.turn}",
        "peer-best": f"a teammate's best (turn {v.turn})",
    }.get(v.kind, v.kind)
    return f"- {v.commit[:12]}  score {score}  ({who})"
