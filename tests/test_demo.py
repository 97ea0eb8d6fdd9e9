"""The demo, as a newcomer runs it: a real subprocess on a fresh directory."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import git

from evolving_agent.demo import demo_month
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_cli, run_proc
from tests.helpers.fixtures import KeptDemo


def test_demo_runs_offline_and_leaves_a_root_that_verify_accepts(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = run_proc(
        "demo", "--dir", str(out), env={"NO_PROXY": "*", "HTTPS_PROXY": "http://0.0.0.0:9"}
    )
    assert proc.returncode == 0, proc.stderr.decode()
    text = proc.stdout.decode()
    for step in ("1. A memory root", "3. Authority", "4. A simulated month", "6. A forget-team"):
        assert step in text
    assert "refused: write denied: actor 'nightly' may not write canon/identity.yaml" in text

    root = MemoryRoot(out / "memory")
    report = verify_root(root)
    assert report.ok, report.problems
    assert run_cli("--root", str(root.path), "verify").exit_code == 0

    # The month changed Today and carried typed hypotheses forward.
    boot = json.loads(run_cli("--root", str(root.path), "boot", "--format", "json").output)
    assert boot["carry"]["type"] is not None
    # An approval and its revert are in Canon's history, with provenance.
    messages = [c.message for c in git.Repo(root.path).iter_commits()]
    assert any("Review-Id: rev-" in m for m in messages)
    assert len(messages) == 3  # init, approval, revert

    run = out / "search-run"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["policy"] == "forget-team"
    assert summary["best_score"] < summary["seed_score"]
    assert len((run / "log.jsonl").read_text().splitlines()) == 12
    assert (run / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"report: {run / 'report.md'}" in text


def test_demo_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    result = run_cli("demo", "--dir", str(tmp_path))
    assert result.exit_code == 4
    assert "is not empty" in result.output
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_demo_month_is_the_last_full_month() -> None:
    assert demo_month(date(2026, 11, 30)) == (date(2026, 10, 1), 31)
    assert demo_month(date(2026, 3, 1)) == (date(2026, 2, 1), 28)


def test_demo_keep_leaves_a_lived_month_with_its_review_pending(kept_demo: KeptDemo) -> None:
    root = MemoryRoot(kept_demo.directory / "memory")
    start, _days = demo_month(date.today())
    review_id = f"rev-{start:%Y-%m}-1"
    assert f"   left pending for you: {review_id}: " in kept_demo.stdout
    assert f"Kept: {root.path} has lived a month; 1 review(s) wait for you:" in kept_demo.stdout
    assert f"   export EVOLVING_AGENT_ROOT={root.path}" in kept_demo.stdout
    assert verify_root(root).ok
    listed = run_cli("--root", str(root.path), "review", "list", "--pending", "--ids")
    assert listed.output == f"{review_id}\n"
    # Nothing was approved for the reader: Canon is still the template, one commit.
    assert len(list(git.Repo(root.path).iter_commits())) == 1
    days = {p.stem[:7] for p in root.evidence.glob("*.jsonl")}
    assert f"{start:%Y-%m}" in days
