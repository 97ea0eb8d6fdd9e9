"""``run JOB --date D``: which dates a job accepts before it plans anything."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import new_root, run_cli


# Bad input a new user typed during QA.
def test_a_job_for_an_absurdly_old_date_is_refused_not_crashed(tmp_path: Path) -> None:
    root = new_root(tmp_path)
    for job in ("nightly", "weekly", "monthly"):
        result = run_cli("--root", str(root), "run", job, "--date", "0001-01-01")
        assert result.exit_code == 4, job
        assert result.output == (
            "error: 0001-01-01 is before 1970-01-01: no evidence is that old\n"
        ), job
    assert not (root / ".ea" / "runs").exists() or not list((root / ".ea" / "runs").iterdir())
