"""Boot withholds friction that reads as an instruction (memory/boot/bootview.py).

The nightly job never quotes such friction; a Today written by anything else (an older
version, a hand edit, another tool) still must not hand it to the assistant.  Every
format, the full boot and the fast path alike, shows a one-line note in its place; the
human still reads the event itself with ``evidence show``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.boot import bootfast, bootview
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot
from tests.helpers import cli_ok, run_cli
from tests.helpers.phrases import INJECTIONS

NOTE = "[withheld: it reads as an instruction to the assistant, not as friction]"


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return init_root(tmp_path / "memory")


def write_today(root: MemoryRoot, quoted: str) -> None:
    human = Writer(root, "human")
    human.write(
        "today",
        "bias.md",
        "Watch for the moment. When about to list alternatives: give one recommendation.\n"
        f"Grounding, 2027-03-04: “{quoted}”; the other way, 2027-03-03: “listed four options”\n",
    )
    carry = {"type": "watchpoint", "text": f"Watchpoint for today: “{quoted}”",
             "hypothesis": None, "date": None}
    human.write("today", "carry.json", json.dumps(carry))


@pytest.mark.parametrize("lang", sorted(INJECTIONS))
def test_every_format_withholds_an_instruction_and_the_fast_path_agrees(
    root: MemoryRoot, lang: str
) -> None:
    inj = INJECTIONS[lang][0]
    write_today(root, inj)
    for fmt in ("markdown", "json", "claude-hook"):
        res = run_cli("boot", "--root", str(root.path), "--format", fmt)
        assert res.exit_code == 0, res.stderr
        out = res.stdout if fmt != "claude-hook" else json.loads(res.stdout)[
            "hookSpecificOutput"]["additionalContext"]
        assert inj not in out and inj[:12] not in out, (fmt, out)
        assert NOTE in out and "listed four options" in out
        fast = bootfast.fast_output(root, fmt, bootview.DEFAULT_MAX_CHARS)
        assert fast is None or fast == res.stdout
    md = run_cli("boot", "--root", str(root.path)).stdout
    assert bootview.WITHHELD_NOTE in md


def test_plain_friction_is_quoted_as_before(root: MemoryRoot) -> None:
    write_today(root, "user: just do it, don't ask every time")
    md = run_cli("boot", "--root", str(root.path)).stdout
    assert "just do it, don't ask every time" in md and NOTE not in md
    assert bootview.WITHHELD_NOTE not in md


def test_the_human_still_reads_the_withheld_event(root: MemoryRoot) -> None:
    inj = INJECTIONS["en"][0]
    rec = Writer(root, "session").append("friction", inj)
    out = cli_ok(root, "evidence", "show", "--date", rec.ts.date().isoformat())
    assert inj in out and rec.id in out
