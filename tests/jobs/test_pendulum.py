"""The pendulum: two weeks of "too long" / "not enough information" taking turns.

The feedback swings every day, in English and in Japanese, tagged and untagged; the
bias must not swing with it (no two opposite instructions on consecutive mornings) and
nothing may be queued for Canon.  Both lives run through the real CLI under a frozen
clock, once per module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from evolving_agent.memory.ops.hypotheses import fold_root, hypothesis_id
from evolving_agent.paths import MemoryRoot
from tests.helpers import cli_ok
from tests.helpers.roots import fresh_root

START = date(2027, 5, 3)  # a Monday
DAYS = 28  # two weeks of swinging, then two more weeks so the floor could have been met
LONG_EN = ["the answer was too long", "user: the answer was too long again"]
SHORT_EN = ["not enough information in the answer", "user: not enough information, again"]
LONG_JA = ["回答が長すぎると言われた", "また回答が長すぎると言われた"]
SHORT_JA = ["情報が足りないと言われた", "また情報が足りないと言われた"]
BRIEF = (
    "The user wants short answers",
    "about to write a long answer",
    "lead with the answer in three sentences",
)
DETAIL = (
    "The user wants every detail",
    "about to leave something out",
    "include the details the user needs",
)


def friction_of(i: int) -> tuple[str, bool]:
    """Day ``i``'s one event and whether it says "too long" (else "not enough")."""
    long = i % 2 == 0
    english = (i // 7) % 2 == 0
    texts = (LONG_EN if long else SHORT_EN) if english else (LONG_JA if long else SHORT_JA)
    return texts[(i // 2) % 2], long


def says(text: str) -> str | None:
    """Which way a bias pulls: "shorter", "more", or None when it names both sides (it
    shows the swing instead of following it) or neither."""
    short = any(w in text for w in ("too long", "長すぎ", "short answers", "three sentences"))
    more = any(w in text for w in ("not enough", "足りない", "every detail", "details"))
    return None if short == more else "shorter" if short else "more"


@dataclass
class Swing:
    root: MemoryRoot
    biases: dict[date, str] = field(default_factory=dict)
    monthly: list[str] = field(default_factory=list)


def live(root: MemoryRoot, tagged: bool) -> Swing:
    sw = Swing(root)
    brief, detail = hypothesis_id(BRIEF[0]), hypothesis_id(DETAIL[0])
    if tagged:
        with freeze_time(f"{START} 08:00:00"):
            for text, when, do in (BRIEF, DETAIL):
                cli_ok(root, "hypothesis", "add", text, "--when", when, "--do", do)
    for i in range(DAYS):
        day = START + timedelta(days=i)
        text, long = friction_of(i)
        args = ["friction", text]
        if tagged:
            args += ["--supports", brief if long else detail]
        with freeze_time(f"{day} 11:00:00"):
            cli_ok(root, *args)
        nxt = day + timedelta(days=1)
        with freeze_time(f"{nxt} 03:00:00"):
            cli_ok(root, "run", "nightly")
            if day.weekday() == 6:
                cli_ok(root, "run", "weekly")
            sw.biases[nxt] = json.loads(cli_ok(root, "boot", "--format", "json"))["bias"]
    for first in ("2027-06-01", "2027-07-01"):
        with freeze_time(f"{first} 04:00:00"):
            sw.monthly.append(cli_ok(root, "run", "monthly"))
    return sw


@pytest.fixture(scope="module", params=["untagged", "tagged"])
def swing(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Swing:
    root = fresh_root(Path(tmp_path_factory.mktemp(f"pendulum-{request.param}")) / "memory")
    return live(root, request.param == "tagged")


@pytest.mark.slow
def test_the_bias_does_not_swing_with_the_feedback(swing: Swing) -> None:
    mornings = sorted(swing.biases)
    directions = [says(swing.biases[m]) for m in mornings]
    pulls = [(m, d) for m, d in zip(mornings, directions, strict=True) if d]
    # No swing and back (shorter, more, shorter) on consecutive mornings ...
    for (m1, a), (m2, b), (m3, c) in zip(pulls, pulls[1:], pulls[2:], strict=False):
        if (m3 - m1).days == 2:
            assert not (a == c != b), (m2, swing.biases[m2])
    # ... and at most one change of direction in the whole four weeks.
    changes = sum(1 for (_, a), (_, b) in zip(pulls, pulls[1:], strict=False) if a != b)
    assert changes <= 1, [(str(m), d) for m, d in pulls]


@pytest.mark.slow
def test_nothing_is_queued_for_canon(swing: Swing) -> None:
    assert not list(swing.root.area_dir("pending").glob("*.json"))
    assert not list(swing.root.area_dir("proposals").glob("*.json"))
    for h in fold_root(swing.root).values():
        assert h.proposed is None, h.text
