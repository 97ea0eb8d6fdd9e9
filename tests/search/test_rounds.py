"""Round set-up and resume: a run directory that moved still finds its own repository."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from evolving_agent.cli import cli
from tests.helpers.search import git_out, hostile_task


# Regression: an attack an outside review of `search run` got through.
def test_a_moved_or_copied_run_directory_resumes_on_its_own_repository(tmp_path: Path) -> None:
    """round.json names the round repository by absolute path and git's worktree
    registrations name the original worktrees: resuming a moved run failed with
    "unexpected FileNotFoundError" (exit 1), a copied one with "git worktree add
    failed ... checked out at <the original>"."""
    import shutil

    flag = tmp_path / "fixed"
    _, args = hostile_task(tmp_path, f"[ -e {flag} ] || {{ echo 'invalid API key' >&2; exit 2; }}\n"
                              "echo $(( $(cat n.txt) + 1 )) > n.txt\n")  # fmt: skip
    args[args.index("--turns") + 1] = "6"
    run = tmp_path / "run"
    assert CliRunner().invoke(cli, [*args, "--out", str(run)]).exit_code == 4  # stopped early
    flag.write_text("")
    shutil.copytree(run, tmp_path / "copy", symlinks=True)
    for where in ("copy", "moved"):  # the copy while the original is still there
        if where == "moved":
            run.rename(tmp_path / "moved")
        result = CliRunner().invoke(cli, ["search", "resume", str(tmp_path / where), "--quiet"])
        assert result.exit_code == 0, (where, result.output)
        assert "best 4 (seed 1, +3) after 6/6 turns" in result.output, result.output
        assert (
            git_out(tmp_path / where / "rounds" / "r01" / "repo", "worktree", "list").count(
                str(tmp_path / where)
            )
            == 2
        )  # the repository and its one worktree, both in this run directory
