"""A fake model for reflector tests: reads the rendered prompt, answers valid JSON.

Run as a script it is a ``command`` reflector (prompt on stdin, JSON on stdout); the
loopback OpenAI server in the tests calls :func:`answer` for its message content.
``EA_FAKE_MODE`` selects a misbehaviour: ``garbage`` (not JSON), ``self`` (a bias that
is a self-description), ``repeat`` (yesterday's carry type), ``flaky`` (garbage on the
first call, recorded in ``EA_FAKE_COUNTER``, then valid).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def context_of(prompt: str) -> dict[str, Any]:
    start = prompt.index("Context:") + len("Context:")
    obj, _ = json.JSONDecoder().raw_decode(prompt[start:].lstrip())
    return dict(obj)


def answer(prompt: str, mode: str = "ok") -> str:
    if mode == "garbage":
        return "Sure! Here is my reflection: the day went well."
    ctx = context_of(prompt)
    if "candidates" in ctx:
        return json.dumps(
            {
                "proposals": [
                    {
                        "hypothesis": c["id"],
                        "section": "habits",
                        "text": f"Habit: {c['text']}",
                        "rationale": "Supported on several distinct days, never contradicted.",
                    }
                    for c in ctx["candidates"]
                ]
            }
        )
    hyps = ctx["hypotheses"]
    if not hyps:
        return "{}"
    prev = (ctx["previous_carry"] or {}).get("type")
    ctype = prev if mode == "repeat" and prev else ctx["allowed_carry_types"][-1]
    untagged = [f for f in ctx["friction"] if not f["supports"] and not f["contradicts"]]
    bias = (
        "I am a careful assistant who listens."
        if mode == "self"
        else "When about to offer options nobody asked for, stop and give one answer."
    )
    return json.dumps(
        {
            "readings": [
                {"event": f["id"], "hypothesis": hyps[0]["id"], "relation": "supports"}
                for f in untagged
            ],
            "hypothesis": hyps[0]["id"],
            "carry_type": ctype,
            "carry_text": f"Model carry: {hyps[0]['text']}",
            "bias": bias,
        }
    )


def main() -> None:
    prompt = sys.stdin.read()
    mode = os.environ.get("EA_FAKE_MODE", "ok")
    counter = os.environ.get("EA_FAKE_COUNTER")
    if counter:
        path = Path(counter)
        calls = int(path.read_text()) + 1 if path.exists() else 1
        path.write_text(str(calls))
        if mode == "flaky":
            mode = "garbage" if calls == 1 else "ok"
    print(answer(prompt, mode))


if __name__ == "__main__":
    main()
