"""What a newcomer trips over first: where --root goes, usage errors, declining, hints."""

from __future__ import annotations

import json
import sys
from datetime import datetime, tzinfo
from pathlib import Path

import pytest
from click.testing import CliRunner
from freezegun import freeze_time

from evolving_agent.cli import cli
from evolving_agent.jobs.scheduler import JobScheduler, load_state
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.search.runner import new_dir
from tests.helpers import run_cli, run_proc
from tests.test_docs import ALL_COMMANDS, _command


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    """A root that neither $EVOLVING_AGENT_ROOT nor ./memory points at."""
    root = init_root(tmp_path / "elsewhere")
    monkeypatch.setenv("EVOLVING_AGENT_ROOT", str(tmp_path / "nothing-here"))
    monkeypatch.chdir(tmp_path)
    return root


# -- --root before or after the subcommand ------------------------------------------------


@pytest.mark.parametrize("path", [p for p in ALL_COMMANDS if p], ids=" ".join)
def test_every_command_accepts_root_after_itself(path: tuple[str, ...]) -> None:
    options = {o for p in _command(path).params for o in getattr(p, "opts", [])}
    assert "--root" in options


@pytest.mark.parametrize(
    "args",
    [
        ["boot", "--format", "json"],
        ["canon", "log"],
        ["review", "list"],
        ["hypothesis", "list", "--json"],
        ["evidence", "show"],
        ["schedule", "show"],
    ],
    ids=" ".join,
)
def test_root_after_the_subcommand_means_the_same_as_before_it(
    elsewhere: MemoryRoot, args: list[str]
) -> None:
    before = run_cli("--root", str(elsewhere.path), *args)
    after = run_cli(*args, "--root", str(elsewhere.path))
    assert before.exit_code == 0, before.output
    assert after.exit_code == 0, after.output
    assert after.output == before.output
    assert run_cli(*args).exit_code == 4  # and without it the root is really not found


@pytest.mark.slow
def test_root_after_a_nested_command_in_a_real_process(elsewhere: MemoryRoot) -> None:
    proc = run_proc("live", "set", "thread", "parser refactor", "--root", str(elsewhere.path))
    assert proc.returncode == 0, proc.stderr
    entry = json.loads((elsewhere.live / "thread.json").read_text(encoding="utf-8"))
    assert entry["text"] == "parser refactor"
    approve = run_proc("review", "approve", "rev-2026-11-1", "--yes", "--root", str(elsewhere.path))
    assert approve.returncode == 4  # reached the root: the review is what is missing
    assert approve.stderr.decode().startswith("error: no review 'rev-2026-11-1'")


def test_the_last_root_given_wins(elsewhere: MemoryRoot, tmp_path: Path) -> None:
    result = run_cli("--root", str(tmp_path / "nothing"), "boot", "--root", str(elsewhere.path))
    assert result.exit_code == 0
    assert result.output.startswith("# Boot context")


# -- usage errors: one line ----------------------------------------------------------------


USAGE_ERRORS = [
    (
        ["boot", "--bogus"],
        "error: No such option '--bogus'. (try 'evolving-agent boot --help')",
    ),
    (["nosuch"], "error: No such command 'nosuch'. (try 'evolving-agent --help')"),
    (["--bogus"], "error: No such option '--bogus'. (try 'evolving-agent --help')"),
    (
        ["review", "approve"],
        "error: Missing argument 'ID'. (try 'evolving-agent review approve --help')",
    ),
    (
        ["boot", "--format", "yaml"],
        "error: Invalid value for '--format': 'yaml' is not one of 'markdown', 'json', "
        "'claude-hook'. (try 'evolving-agent boot --help')",
    ),
]


@pytest.mark.parametrize(("args", "expected"), USAGE_ERRORS)
def test_usage_errors_are_one_line_and_exit_2(args: list[str], expected: str) -> None:
    result = CliRunner().invoke(cli, args, prog_name="evolving-agent")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == expected + "\n"


def test_a_usage_error_from_a_real_process_is_one_line() -> None:
    args, expected = USAGE_ERRORS[0]
    proc = run_proc(*args)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr.decode() == expected + "\n"


def test_troubleshooting_shows_usage_errors_as_the_cli_prints_them() -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "troubleshooting.md").read_text()
    section = page.split("## Usage errors", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    shown = section.splitlines()
    assert shown
    assert set(shown) <= {expected for _args, expected in USAGE_ERRORS}


def test_a_bare_group_still_shows_its_help() -> None:
    result = run_cli("review")
    assert "Commands:" in result.output and "approve" in result.output


# -- init's hint leads to a root that verify accepts -----------------------------------------


@pytest.mark.slow
def test_init_hint_names_canon_edit_and_following_it_keeps_verify_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_cli("init")
    assert result.output.splitlines()[1] == (
        "next: run 'evolving-agent canon edit' to say who the assistant is, "
        "then 'evolving-agent boot'"
    )
    other = run_cli("init", str(tmp_path / "my root"))
    assert f"'evolving-agent canon edit --root '{tmp_path / 'my root'}''" in other.output

    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('name: Assistant', 'name: Ada'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    edited = run_proc("canon", "edit")
    assert edited.returncode == 0, edited.stderr
    assert run_proc("verify").returncode == 0
    assert run_cli("boot").output.startswith("# Boot context: Ada")


# -- schedule show: "never" until a job ran ------------------------------------------------


def test_schedule_show_says_never_after_the_first_start_until_a_job_runs(
    tmp_path: Path,
) -> None:
    root = init_root(tmp_path / "memory")
    with freeze_time("2026-11-20 12:00:00"):
        assert JobScheduler([root]).catch_up() == []  # the first start sets a baseline
    with freeze_time("2026-11-20 13:00:00"):
        shown = json.loads(run_cli("schedule", "show", "--json").output)
    assert [(s["job"], s["last_run"]) for s in shown] == [
        ("nightly", None),
        ("weekly", None),
        ("monthly", None),
    ]
    text = run_cli("schedule", "show").output
    assert text.count("last never") == 3
    state = load_state(root)
    assert state is not None and state.last_run == {}
    # The baseline still counts: a night missed after it is caught up, once.
    with freeze_time("2026-11-21 12:00:00"):  # a Saturday: one nightly fire missed
        ran = [job for _root, job in JobScheduler([root]).catch_up()]
    assert ran == ["nightly"]
    assert "last never" not in run_cli("schedule", "show").output.splitlines()[0]


# -- default run folders never collide --------------------------------------------------------


def test_new_dir_gives_each_caller_its_own_folder(tmp_path: Path) -> None:
    base = tmp_path / "runs" / "search-20261130-120000-forget-team"
    made = [new_dir(base) for _ in range(3)]
    assert [p.name for p in made] == [base.name, f"{base.name}-2", f"{base.name}-3"]
    assert all(p.is_dir() for p in made)


@pytest.mark.slow
def test_two_search_runs_started_in_the_same_second_get_two_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evolving_agent.demo import example_dir
    from evolving_agent.search import runner

    class SameSecond(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> SameSecond:
            return cls(2026, 11, 30, 12, 0, 0, tzinfo=tz)

    monkeypatch.setattr(runner, "datetime", SameSecond)
    monkeypatch.chdir(tmp_path)
    example = example_dir()
    args = [
        "search", "run", "--quiet",
        "--candidate", str(example / "candidate"), "--task", str(example / "task.md"),
        "--score", f"{sys.executable} {example / 'score.py'}", "--minimize",
        "--agent", "builtin", "--policy", "single", "--rounds", "1", "--turns", "1",
    ]  # fmt: skip
    for _ in range(2):
        result = run_cli(*args)
        assert result.exit_code == 0, result.output
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert runs == ["search-20261130-120000-single", "search-20261130-120000-single-2"]
    for name in runs:
        assert (tmp_path / "runs" / name / "summary.json").is_file()


# -- the slow-clock tour's plumbing: a kept demo, pending ids for scripts -----------------


def test_demo_takes_dir_or_keep_not_both(tmp_path: Path) -> None:
    result = run_cli("demo", "--dir", str(tmp_path / "a"), "--keep", str(tmp_path / "b"))
    assert result.exit_code == 2
    assert result.output.startswith("error: give either --dir or --keep, not both")
    assert list(tmp_path.iterdir()) == []


def test_demo_keep_twice_names_the_directory_not_an_option_never_given(tmp_path: Path) -> None:
    # A newcomer re-running the tour's `demo --keep demo` was told to "pass --dir".
    kept = tmp_path / "demo"
    kept.mkdir()
    (kept / "memory").mkdir()
    result = run_cli("demo", "--keep", str(kept))
    assert result.exit_code == 4
    assert result.output == (
        f"error: {kept} is not empty; choose a new or empty directory "
        "(or remove it to run the demo again)\n"
    )
    assert [p.name for p in kept.iterdir()] == ["memory"]


def test_review_list_pending_ids_is_what_a_script_needs(tmp_path: Path) -> None:
    from tests.helpers.review import add, queue, set_identity

    root = init_root(tmp_path / "memory")
    set_identity(root)
    queue(root, "rev-2026-11-1", add("Ask first."))
    queue(root, "rev-2026-11-2", add("Say less."))
    assert run_cli("review", "approve", "rev-2026-11-1", "--yes").exit_code == 0
    assert run_cli("review", "list", "--ids").output == "rev-2026-11-1\nrev-2026-11-2\n"
    assert run_cli("review", "list", "--pending", "--ids").output == "rev-2026-11-2\n"
    pending = json.loads(run_cli("review", "list", "--pending", "--json").output)
    assert [r["id"] for r in pending] == ["rev-2026-11-2"]
