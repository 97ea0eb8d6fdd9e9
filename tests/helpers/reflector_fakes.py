"""A fake model for reflector tests: reads the rendered prompt, answers valid JSON.

Run as a script it is a ``command`` reflector (prompt on stdin, JSON on stdout); the
loopback OpenAI server in the tests calls :func:`answer` for its message content.
``EA_FAKE_MODE`` selects a misbehaviour: ``garbage`` (not JSON), ``self`` (a bias that
is a self-description), ``third`` (a third-person self-description), ``quota`` (the
killed quota design), ``oneline`` (a 1-line bias), ``nocite`` (a carry citing no
hypothesis), ``empty`` (``{}`` whatever the day), ``repeat`` (yesterday's carry type),
``invert`` (a bias that drops the counter-move), ``release`` (release whatever the
stakes), ``flaky`` (garbage on the first call, recorded in ``EA_FAKE_COUNTER``, then valid).
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


def friction_of(prompt: str) -> list[dict[str, Any]]:
    """The fenced, untrusted friction block of the prompt."""
    start = prompt.index("BEGIN UNTRUSTED FRICTION")
    body = prompt[prompt.index("\n", start) + 1 : prompt.index("END UNTRUSTED FRICTION")]
    data = json.loads(body)
    return data if isinstance(data, list) else []


BIASES = {
    "self": "I am a careful assistant who listens.\nThat is who I am.",
    "third": "The assistant tends to over-explain simple things.\nIt is too eager to please.",
    "quota": "Log at least 3 friction events before the end of the day.\nBe honest.",
    "oneline": "When about to offer options nobody asked for, stop and give one answer.",
    "invert": "When about to act: do the opposite of the usual advice.\nGrounding: none.",
}


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
                        "text": f"Habit: {c['claim']}",
                        "rationale": "Supported on several distinct days, never contradicted.",
                    }
                    for c in ctx["candidates"]
                ]
            }
        )
    hyps = ctx["hypotheses"]
    if not hyps or mode == "empty":
        return "{}"
    prev = (ctx["yesterday"] or {}).get("carry_type")
    fits = hyps[0].get("carry_types_that_fit") or ctx["allowed_carry_types"]
    ctype = prev if mode == "repeat" and prev else fits[-1]
    if mode == "release":
        ctype = "release" if "release" in ctx["allowed_carry_types"] else "refusal"
    today = [f for f in friction_of(prompt) if f["day"] == ctx["day"]]
    untagged = [f for f in today if not f["supports"] and not f["contradicts"]]
    h = hyps[0]
    first = (
        f"When {h['when'] or 'it comes up'}: {h['do']}."
        if h["do"]
        else f"When it comes up, check whether this holds: “{h['claim']}”."
    )
    quote = today[0]["quote"] if today else "nothing today"
    bias = BIASES.get(mode, f"{first}\nGrounding: “{quote}”")
    if h["stakes"] == "high" and mode not in BIASES:
        bias += "\nAt stake: hard to undo; ask first."
    return json.dumps(
        {
            "readings": [
                {"event": f["id"], "hypothesis": h["id"], "relation": "supports"} for f in untagged
            ],
            "hypothesis": None if mode == "nocite" else h["id"],
            "carry_type": ctype,
            "carry_text": f"Model carry: {h['claim']}",
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
