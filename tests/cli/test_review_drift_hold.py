"""The terminal keeps the page's hold: a review the drift watch holds is named as held by
`review list` and `review show`, `review approve` refuses it with the way out, and
`drift ack` (the human's look) releases it."""

from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.review.store import list_reviews, load_review
from tests.helpers import run_proc
from tests.helpers.life import live_three_reviews
from tests.helpers.roots import fresh_root


@pytest.mark.slow
def test_a_held_review_is_refused_until_drift_ack(tmp_path: Path) -> None:
    root = fresh_root(tmp_path / "memory")
    live_three_reviews(root)
    held, free = (r.id for r in list_reviews(root)[:2])
    hid = load_review(root, held).pending.hypothesis
    session = Writer(root, "session")
    for i in range(14):
        text = "The answer was too long." if i % 2 == 0 else "Not enough information."
        day = date(2026, 10, 12) + timedelta(days=i)
        session.append(
            "friction", text, supports=hid, ts=datetime.combine(day, time(14)).astimezone()
        )
    cli = ("--root", str(root.path))
    from evolving_agent.review.hold import holds

    notice = holds(root)[hid].notice()  # the hold's own words (review/pendulum.py's title)
    assert notice.startswith("held by the drift watch: pendulum: friction swung 13 times")
    assert notice.endswith(f"acknowledge with 'evolving-agent drift ack {hid}'")
    listed = run_proc(*cli, "review", "list").stdout.decode().splitlines()
    assert [line.endswith(f"[{notice}]") for line in listed] == [
        r.id == held for r in list_reviews(root)
    ]
    shown = run_proc(*cli, "review", "show", held)
    assert shown.returncode == 0 and notice in shown.stdout.decode()
    assert b"held by" not in run_proc(*cli, "review", "show", free).stdout
    as_json = json.loads(run_proc(*cli, "review", "show", held, "--json").stdout)
    assert as_json["held_by"]["acknowledge"] == f"evolving-agent drift ack {hid}"
    assert [f["kind"] for f in as_json["held_by"]["flags"]] == ["pendulum"]

    refused = run_proc(*cli, "review", "approve", held, "--yes")
    assert refused.returncode == 3  # denied, as the monthly limit is
    assert (
        refused.stderr.decode()
        == f"error: refused: review {held} is {notice} (the flag's evidence: "
        "'evolving-agent drift'); nothing was written\n"
    )
    assert load_review(root, held).status == "pending"

    nothing = run_proc(*cli, "drift", "ack", "h-00000000")
    assert nothing.returncode == 4 and b"nothing holds h-00000000 now" in nothing.stderr
    acked = run_proc(*cli, "drift", "ack", hid, "--approver", "owner")
    assert acked.returncode == 0, acked.stderr
    out = acked.stdout.decode()
    assert out.startswith("looked at: pendulum: friction swung 13 times")
    assert "acknowledged " + hid + ": 14 evidence id(s), recorded as Evidence ev-" in out
    record = [r for r in EvidenceLog(root).iter_all() if r.kind == "review"][-1]
    assert record.data["action"] == "drift-ack" and record.data["by"] == "owner"
    assert (root.area_dir("decisions") / record.data["file"]).is_file()

    assert b"held by" not in run_proc(*cli, "review", "list").stdout
    approved = run_proc(*cli, "review", "approve", held, "--yes")
    assert approved.returncode == 0, approved.stderr
    assert load_review(root, held).status == "approved"
