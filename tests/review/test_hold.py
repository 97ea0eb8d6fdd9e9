"""The drift watch's hold (review/hold.py): what holds, and what the human's look is.

Guards the hold against a look the human did not take: with signing on, an
acknowledgement is a signed decision, and a planted unsigned one releases nothing.
"""

from __future__ import annotations

import json
import subprocess
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.hold import NothingHeld, acknowledge, holds
from tests.helpers import run_cli
from tests.helpers.roots import fresh_root

START = date(2026, 11, 2)


def _pendulum(root: MemoryRoot) -> tuple[str, list[str]]:
    hid = add_hypothesis(
        root, "Keep answers short", ts=datetime.combine(START, time(8)).astimezone()
    ).id
    session = Writer(root, "session")
    ids = [
        session.append(
            "friction",
            "The answer was too long." if i % 2 == 0 else "Not enough information.",
            supports=hid,
            ts=datetime.combine(START + timedelta(days=i), time(10)).astimezone(),
        ).id
        for i in range(10)  # two complaints taking turns on 8 or more days (review/pendulum.py)
    ]
    return hid, ids


def test_a_look_releases_only_what_it_saw(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    hid, ids = _pendulum(root)
    hold = holds(root)[hid]
    assert hold.evidence_ids == ids and hold.summary.startswith("pendulum: friction swung 9 times")
    ack = acknowledge(root, hid, by="owner")
    saved = json.loads(ack.path.read_text())
    assert (saved["hypothesis"], saved["evidence_ids"], saved["by"]) == (hid, ids, "owner")
    assert holds(root) == {}
    with pytest.raises(NothingHeld):
        acknowledge(root, hid, by="owner")  # nothing to look at twice
    # The pendulum swings on: new evidence needs a new look.
    Writer(root, "session").append(
        "friction",
        "The answer was too long.",
        supports=hid,
        ts=datetime.combine(START + timedelta(days=10), time(10)).astimezone(),
    )
    assert hid in holds(root)


def test_with_signing_on_a_look_is_signed_and_a_planted_one_releases_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fresh_root(tmp_path / "memory")
    key = tmp_path / "human_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    assert run_cli("--root", str(root.path), "signing", "enable", "--key", str(key)).exit_code == 0
    hid, ids = _pendulum(root)
    # A file that says the human looked, written without the key (the assistant's shell).
    planted = root.area_dir("decisions") / "drift-acks" / f"{hid}-planted.json"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text(
        json.dumps(
            {
                "hypothesis": hid,
                "evidence_ids": ids,
                "flags": [],
                "by": "owner",
                "ts": "2026-11-20T10:00:00+00:00",
            }
        )
    )
    assert hid in holds(root)
    verify = run_cli("--root", str(root.path), "verify")
    assert (
        verify.exit_code == 5
        and f"{planted}: a human decision without a valid signature" in verify.output
    )
    planted.unlink()
    ack = acknowledge(root, hid, by="owner")
    assert ack.path.with_name(ack.path.name + ".sig").is_file()
    assert holds(root) == {}
    assert run_cli("--root", str(root.path), "verify").exit_code == 0
