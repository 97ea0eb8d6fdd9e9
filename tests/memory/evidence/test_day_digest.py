"""The bounded day: what the nightly job keeps of a day, and a model's prompt that stops growing."""

from __future__ import annotations

import json
import sys
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest

from evolving_agent.memory.authority import ScopedReader
from evolving_agent.memory.evidence import day_digest as digest
from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.reflectors.context import NightlyContext
from tests.helpers import run_proc
from tests.helpers.reflector_fakes import context_of, friction_of
from tests.helpers.roots import fresh_root

DAY = date(2026, 11, 20)


def flooded(path: Path, untagged: int, tagged: int = 0) -> tuple[MemoryRoot, str]:
    """A root whose DAY holds ``untagged`` untagged friction events, with ``tagged``
    supports of one hypothesis spread through them."""
    root = fresh_root(path)
    hyp = add_hypothesis(
        root, "give one answer, not a menu", ts=datetime.combine(DAY - timedelta(days=1), time(8))
    ).id
    base = datetime.combine(DAY, time(6)).astimezone()
    every = max(1, untagged // max(1, tagged)) if tagged else 0
    drafts: list[EvidenceDraft] = []

    def add(kind: str, text: str, supports: str | None = None) -> None:
        # one second apart, in the order they are added
        ts = base + timedelta(seconds=len(drafts))
        drafts.append(
            EvidenceDraft(ts=ts, kind=kind, actor="session", text=text, supports=supports)
        )

    n_tagged = 0
    for i in range(untagged):
        add("friction", f"offered a menu again, case {i:05d}")
        if tagged and i % every == 0 and n_tagged < tagged:
            n_tagged += 1
            add("friction", f"menu, tagged {i:05d}", supports=hyp)
    add("raw", "a raw event no reflector reads")
    EvidenceLog(root).append_many(drafts)
    return root, hyp


def context(root: MemoryRoot) -> NightlyContext:
    return NightlyContext(DAY, ScopedReader(root, "nightly", (DAY, DAY)), None)


def test_an_ordinary_day_is_kept_whole(tmp_path) -> None:
    # Meaning unchanged on a normal day: the digest is exactly the day's friction.
    root, _ = flooded(tmp_path / "m", 30, tagged=6)
    ctx = context(root)
    whole = [r.id for r in EvidenceLog(root).read_day(DAY) if r.kind == "friction"]
    assert [r.id for r in ctx.friction] == whole
    assert ctx.digest.friction_left_out == 0 and ctx.digest.other_records == 1
    assert "friction_not_quoted" not in ctx.as_prompt_data()


def test_a_flooded_day_keeps_the_first_and_last_untagged_and_the_latest_tagged(tmp_path) -> None:
    root, hyp = flooded(tmp_path / "m", 1_000, tagged=40)
    whole = [r for r in EvidenceLog(root).read_day(DAY) if r.kind == "friction"]
    untagged = [r.id for r in whole if not r.supports]
    tagged = [r.id for r in whole if r.supports == hyp]
    ctx = context(root)
    kept = [r.id for r in ctx.friction]
    assert [r.id for r in ctx.untagged] == (
        untagged[: digest.UNTAGGED_FIRST] + untagged[-digest.UNTAGGED_LAST :]
    )
    assert [r.id for r in ctx.friction if r.supports] == tagged[-digest.PER_LINK :]
    assert kept == [r.id for r in whole if r.id in set(kept)]  # still in day order
    dig = ctx.digest
    assert dig.friction_total == 1_040
    assert dig.friction_left_out == 1_040 - len(kept)
    assert sum(dig.left_out.values()) == 40 - digest.PER_LINK
    assert dig.untagged_left_out == 1_000 - digest.UNTAGGED_FIRST - digest.UNTAGGED_LAST


def test_every_counting_day_of_a_tag_keeps_its_events(tmp_path) -> None:
    # The distinct-day rules count each day a tag was recorded on: a flood of one day's
    # support must not push out the only event that counts on another.
    root = fresh_root(tmp_path / "m")
    hyp = add_hypothesis(root, "keep answers short", ts=datetime(2026, 11, 1, 8)).id
    log = EvidenceLog(root)
    base = datetime.combine(DAY, time(6)).astimezone()
    early = EvidenceDraft(
        ts=base,
        kind="friction",
        actor="session",
        text="old import",
        supports=hyp,
        data={"recorded": "2026-11-19"},
    )
    flood = [
        EvidenceDraft(
            ts=base + timedelta(seconds=i + 1),
            kind="friction",
            actor="session",
            text=f"again {i}",
            supports=hyp,
        )
        for i in range(50)
    ]
    first = log.append_many([early, *flood])[0]
    assert first.id in {r.id for r in context(root).friction}


def test_a_model_prompt_stops_growing_with_the_day(tmp_path) -> None:
    small, _ = flooded(tmp_path / "small", 600, tagged=30)
    large, _ = flooded(tmp_path / "large", 2_400, tagged=120)
    sizes = []
    for root in (small, large):
        ctx = context(root)
        block, data = ctx.friction_block(), ctx.as_prompt_data()
        sizes.append(len(block) + len(json.dumps(data)))
        quoted = json.loads(
            block[
                block.index("[", block.index("BEGIN UNTRUSTED FRICTION")) : block.index(
                    "END UNTRUSTED FRICTION"
                )
            ]
        )
        assert len(quoted) == digest.UNTAGGED_FIRST + digest.UNTAGGED_LAST + digest.PER_LINK
        assert "more friction events of the day" in data["friction_not_quoted"]
    assert abs(sizes[0] - sizes[1]) <= 4  # only the digits of the count differ


RECORDER = """
import os, sys
prompt = sys.stdin.read()
out = os.environ["EA_TEST_PROMPT"]
if '"day": "2026-11-20"' in prompt and not os.path.exists(out):  # not the catch-up day
    open(out, "w").write(prompt)
print("{}")
"""


@pytest.mark.slow
def test_a_flooded_day_through_run_nightly_is_bounded_and_says_so(tmp_path) -> None:
    # Guards the flood door: a day of thousands of friction events (a script looping
    # over the MCP tool) is reflected within bounds, and the run says what it left out.
    root, _ = flooded(tmp_path / "m", 3_000, tagged=20)
    script = tmp_path / "record.py"
    script.write_text(RECORDER)
    prompt_file = tmp_path / "prompt.txt"
    done = run_proc(
        "--root",
        str(root.path),
        "run",
        "nightly",
        "--date",
        DAY.isoformat(),
        "--json",
        "--reflector",
        "command",
        "--reflector-cmd",
        f"{sys.executable} {script}",
        env={"EA_TEST_PROMPT": str(prompt_file)},
    )
    assert done.returncode == 0, done.stderr.decode()
    prompt = prompt_file.read_text()
    assert len(friction_of(prompt)) == digest.UNTAGGED_FIRST + digest.UNTAGGED_LAST + 10
    assert context_of(prompt)["friction_not_quoted"].startswith("2960 more friction events")
    result = json.loads(done.stdout)
    notes = result["plan"]["notes"]
    assert any("2960 of the day's 3020 friction events were counted" in n for n in notes)
    state = json.loads((root.today / "nightly.json").read_text())
    assert len(state["untagged"]) <= 100
