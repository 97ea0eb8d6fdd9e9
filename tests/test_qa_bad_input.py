"""Bad input a new user actually typed during QA: one line, the right exit code, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

from freezegun import freeze_time

from evolving_agent.memory.root import init_root
from tests.helpers import run_cli, run_proc


def _root(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    init_root(path)
    return path


# Issue 11 changed these on purpose: a bad file on disk never breaks boot (or the Claude
# Code hook); it is skipped and named on stderr and in the context's notice.


def test_boot_with_a_non_utf8_bias_skips_it_and_names_the_file(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "today" / "bias.md").write_bytes(b"\xff\xfe lead with the answer\n")
    result = run_cli("--root", str(root), "boot")
    assert result.exit_code == 0
    assert f"warning: {root / 'today' / 'bias.md'}: not UTF-8 text; skipped\n" in result.stderr
    assert "## Today's bias\n(no bias yet" in result.stdout


def test_boot_with_a_non_utf8_canon_note_serves_committed_canon(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "canon" / "notes.md").write_bytes(b"caf\xe9\n")
    result = run_cli("--root", str(root), "boot")
    assert result.exit_code == 0
    note = root / "canon" / "notes.md"
    assert f"warning: {note}: not in the last writer commit (added by hand)\n" in result.stderr
    assert "## notes.md" not in result.stdout


def test_evidence_import_of_a_non_utf8_line_names_file_and_line(tmp_path: Path) -> None:
    root = _root(tmp_path)
    good = {"ts": "2026-11-29T10:00:00Z", "kind": "raw", "text": "fine"}
    file = tmp_path / "events.jsonl"
    file.write_bytes(json.dumps(good).encode() + b"\n" + b'{"text": "\xff"}\n')
    proc = run_proc("--root", str(root), "evidence", "import", str(file))
    assert proc.returncode == 4
    assert proc.stderr.decode() == f"error: {file}:2: not UTF-8 text\n"
    assert run_cli("--root", str(root), "evidence", "show", "--date", "2026-11-29").output == (
        "(no evidence that day)\n"
    )


def test_evidence_append_refuses_empty_text_like_friction_does(tmp_path: Path) -> None:
    root = _root(tmp_path)
    result = run_cli("--root", str(root), "evidence", "append", "--kind", "raw", "  ")
    assert result.exit_code == 4
    assert result.output == "error: evidence text is empty: say what happened\n"
    assert not list((root / "evidence").glob("*.jsonl"))


def test_evidence_import_refuses_a_line_with_empty_text(tmp_path: Path) -> None:
    root = _root(tmp_path)
    file = tmp_path / "events.jsonl"
    file.write_text(json.dumps({"ts": "2026-11-29T10:00:00Z", "kind": "raw", "text": ""}) + "\n")
    result = run_cli("--root", str(root), "evidence", "import", str(file))
    assert result.exit_code == 4
    assert result.output == f"error: {file}:1: text: the text is empty\n"
    assert not list((root / "evidence").glob("*.jsonl"))


def test_evidence_import_of_a_json_line_that_is_not_an_object(tmp_path: Path) -> None:
    root = _root(tmp_path)
    file = tmp_path / "events.jsonl"
    file.write_text("[1, 2]\n")
    result = run_cli("--root", str(root), "evidence", "import", str(file))
    assert result.exit_code == 4
    assert result.output == f"error: {file}:1: not a JSON object\n"


def test_init_where_the_root_is_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a directory\n")
    proc = run_proc("init", env={"EVOLVING_AGENT_ROOT": str(afile)})
    assert proc.returncode == 4
    assert proc.stderr.decode() == f"error: {afile} is a file, not a directory\n"
    assert afile.read_text() == "not a directory\n"


def test_a_root_that_is_a_file_is_not_offered_to_init(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    proc = run_proc("boot", env={"EVOLVING_AGENT_ROOT": str(afile)})
    assert proc.returncode == 4
    assert proc.stderr.decode() == (
        f"error: no memory root at {afile}: it is a file, not a directory "
        "(pass --root or set $EVOLVING_AGENT_ROOT to a directory)\n"
    )


def test_root_flag_naming_a_file_is_the_same_error_as_the_variable(tmp_path: Path) -> None:
    # A newcomer's `--root FILE` got click's "Invalid value for '--root'" and exit 2, while
    # $EVOLVING_AGENT_ROOT=FILE got the core's line and exit 4 (what troubleshooting shows).
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    expected = (
        f"error: no memory root at {afile}: it is a file, not a directory "
        "(pass --root or set $EVOLVING_AGENT_ROOT to a directory)\n"
    )
    for args in (("--root", str(afile), "live", "show"), ("live", "show", "--root", str(afile))):
        proc = run_proc(*args)
        assert (proc.returncode, proc.stderr.decode()) == (4, expected), args
    proc = run_proc("init", "--root", str(afile))
    assert (proc.returncode, proc.stderr.decode()) == (
        4,
        f"error: {afile} is a file, not a directory\n",
    )


def test_a_group_alone_prints_its_help_on_stderr_with_exit_2() -> None:
    # What troubleshooting.md says after "One line": a newcomer typing `evolving-agent live`
    # got the group's help and exit 2, which the page did not mention.
    proc = run_proc("live")
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert err.startswith("Usage: evolving-agent live [OPTIONS] COMMAND [ARGS]...")
    assert "  set " in err and "  clear " in err


def test_a_missing_editor_is_one_error_line_not_clicks_capitalised_error(tmp_path: Path) -> None:
    # A newcomer's `canon edit` with a wrong $EDITOR printed click's "Error: …", not the
    # "error: …" line every other failure prints.
    root = _root(tmp_path)
    before = (root / "canon" / "identity.yaml").read_bytes()
    proc = run_proc(
        "--root", str(root), "canon", "edit", env={"EDITOR": str(tmp_path / "no-editor")}
    )  # fmt: skip
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert err.startswith(f"error: {tmp_path / 'no-editor'}: Editing failed")
    assert err.count("\n") == 1
    assert (root / "canon" / "identity.yaml").read_bytes() == before


def test_write_refuses_a_malformed_identity_and_commits_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path)
    before = (root / "canon" / "identity.yaml").read_text()
    result = run_cli(
        "--root", str(root), "write", "--as", "human", "canon", "identity.yaml",
        input="name: [unclosed\n",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == (
        f"error: {root / 'canon' / 'identity.yaml'}:2: malformed YAML: "
        "expected ',' or ']', but got '<stream end>'\n"
    )
    assert (root / "canon" / "identity.yaml").read_text() == before
    assert run_cli("--root", str(root), "canon", "log").output.count("\n") == 1
    assert run_cli("--root", str(root), "boot").exit_code == 0


def test_write_refuses_an_identity_with_an_unknown_field(tmp_path: Path) -> None:
    root = _root(tmp_path)
    result = run_cli(
        "--root", str(root), "write", "--as", "human", "canon", "identity.yaml",
        input="name: A\nnmae: typo\n",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == (
        f"error: {root / 'canon' / 'identity.yaml'}:2: nmae: Extra inputs are not permitted\n"
    )


def test_write_refuses_a_policy_that_would_lock_every_writer_out(tmp_path: Path) -> None:
    root = _root(tmp_path)
    result = run_cli(
        "--root", str(root), "write", "--as", "human", "canon", "policy.yaml",
        input="review:\n  monthly_limit: -1\n",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == (
        f"error: {root / 'canon' / 'policy.yaml'}:2: review.monthly_limit: "
        "Input should be greater than or equal to 0\n"
    )
    assert run_cli("--root", str(root), "friction", "still works").exit_code == 0


def test_piping_into_head_is_not_an_unexpected_error(tmp_path: Path) -> None:
    """`evidence show | head` closes the pipe early; that is not a failure to report."""
    import subprocess
    import sys

    root = _root(tmp_path)
    # More than a pipe buffer (64 KiB) of lines, so the CLI is still writing when the
    # reader leaves.
    file = tmp_path / "many.jsonl"
    line = {"ts": "2026-11-29T10:00:00Z", "kind": "raw", "text": "a line of evidence " * 3}
    file.write_text((json.dumps(line) + "\n") * 3000)
    # An import records its lines now (issue 11): freeze "now" on the day shown below.
    with freeze_time("2026-11-29 10:00:00"):
        assert run_cli("--root", str(root), "evidence", "import", str(file)).exit_code == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "evolving_agent", "--root", str(root)]
        + ["evidence", "show", "--date", "2026-11-29"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(9) == b"10:00:00 "
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ""


def test_live_set_refuses_empty_text_and_points_at_clear(tmp_path: Path) -> None:
    root = _root(tmp_path)
    result = run_cli("--root", str(root), "live", "set", "thread", " ")
    assert result.exit_code == 4
    assert result.output == (
        "error: Live Bus text for 'thread' is empty (to remove the entry: "
        "evolving-agent live clear thread)\n"
    )
    assert run_cli("--root", str(root), "live", "show").output == "(the Live Bus is empty)\n"


def test_verify_reports_a_damaged_evidence_line_as_tampering(tmp_path: Path) -> None:
    """A cut last line no longer blocks the day (issue 11, hole 9): the next append
    moves the bytes aside and goes on, and since the writer had anchored that line,
    verify reports the cut as tampering."""
    root = _root(tmp_path)
    run_cli("--root", str(root), "friction", "one")
    run_cli("--root", str(root), "friction", "two")
    (day_file,) = (root / "evidence").glob("*.jsonl")
    day_file.write_bytes(day_file.read_bytes()[:-20])  # the last line cut short
    appended = run_cli("--root", str(root), "friction", "three")
    assert appended.exit_code == 0
    assert len(list((root / "evidence" / "torn").iterdir())) == 1
    result = run_cli("--root", str(root), "verify")
    assert result.exit_code == 5
    lines = result.output.splitlines()
    assert lines[0] == "error: verify found 1 problem(s):"
    assert lines[1].startswith(f"{day_file}:2: 1 anchored record(s) had been cut from the end")
    assert len(lines) == 2


def test_verify_reports_garbage_bytes_in_evidence_as_tampering(tmp_path: Path) -> None:
    root = _root(tmp_path)
    run_cli("--root", str(root), "friction", "one")
    (day_file,) = (root / "evidence").glob("*.jsonl")
    with day_file.open("ab") as fh:
        fh.write(b"\xff\xfe not a record\n")
    result = run_cli("--root", str(root), "verify", "--json")
    assert result.exit_code == 5
    report = json.loads(result.output[: result.output.rindex("}") + 1])
    assert report["evidence_records"] == 1
    assert len(report["problems"]) == 1
    assert report["problems"][0].startswith(f"{day_file}:2: unreadable record (")


def test_a_job_for_an_absurdly_old_date_is_refused_not_crashed(tmp_path: Path) -> None:
    root = _root(tmp_path)
    for job in ("nightly", "weekly", "monthly"):
        result = run_cli("--root", str(root), "run", job, "--date", "0001-01-01")
        assert result.exit_code == 4, job
        assert result.output == (
            "error: 0001-01-01 is before 1970-01-01: no evidence is that old\n"
        ), job
    assert not (root / ".ea" / "runs").exists() or not list((root / ".ea" / "runs").iterdir())


def test_search_run_with_a_non_utf8_task_file_is_a_one_line_error(tmp_path: Path) -> None:
    candidate = tmp_path / "cand"
    candidate.mkdir()
    (candidate / "x.txt").write_text("1\n")
    task = tmp_path / "task.md"
    task.write_bytes(b"\xff\xfe improve x\n")
    out = tmp_path / "run"
    result = run_cli(
        "search", "run", "--candidate", str(candidate), "--task", str(task),
        "--score", "cat {candidate}/x.txt", "--agent", "builtin", "--policy", "single",
        "--turns", "1", "--out", str(out), "--quiet",
    )  # fmt: skip
    assert result.exit_code == 4
    assert result.output == f"error: {task}: not UTF-8 text\n"
    assert not out.exists()


def test_an_argument_that_is_not_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    """A Latin-1 terminal passes bytes Python cannot store as UTF-8 text."""
    import subprocess
    import sys

    root = _root(tmp_path)
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"evolving_agent", b"--root", str(root).encode()]
        + [b"friction", b"caf\xe9 felt off"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 4
    assert proc.stderr.decode() == (
        "error: argument 'caf\\xe9 felt off' is not UTF-8 text; "
        "set a UTF-8 locale or pass the text as UTF-8\n"
    )
    assert not list((root / "evidence").glob("*.jsonl"))


def test_schedule_names_the_same_root_twice_serves_it_once(tmp_path: Path) -> None:
    """`schedule run --roots A,A/` said 'another scheduler already serves A' (its own lock)."""
    from evolving_agent.jobs.scheduler import JobScheduler
    from evolving_agent.paths import MemoryRoot

    root = _root(tmp_path)
    result = run_cli("schedule", "show", "--json", "--roots", f"{root},{root}/,{root}")
    assert result.exit_code == 0
    assert [(r["root"], r["job"]) for r in json.loads(result.output)] == [
        (str(root), "nightly"),
        (str(root), "weekly"),
        (str(root), "monthly"),
    ]
    sched = JobScheduler([MemoryRoot(root), MemoryRoot(root / "canon" / "..")])
    assert [r.path for r in sched.roots] == [MemoryRoot(root).path]
    sched.acquire()  # raised "another scheduler already serves" on its own first lock
    sched.release()


def test_a_root_copied_without_its_git_history(tmp_path: Path) -> None:
    """Copying a root without .git: verify reports it, git-backed commands say why."""
    import shutil

    root = _root(tmp_path)
    shutil.rmtree(root / ".git")
    result = run_cli("--root", str(root), "verify")
    assert result.exit_code == 5
    assert result.output == (
        "error: verify found 1 problem(s):\n"
        f"{root / '.git'}: git history is missing; Canon changes cannot be checked\n"
    )
    expected = (
        f"error: no git repository at {root}: a memory root keeps Canon's history in git "
        "(restore its .git directory from a backup)\n"
    )
    for args in (("canon", "log"), ("write", "--as", "human", "canon", "notes.md")):
        result = run_cli("--root", str(root), *args, input="x\n")
        assert result.exit_code == 4, args
        assert result.output == expected, args
    assert not (root / "canon" / "notes.md").exists()


def test_a_hand_edited_live_bus_entry_is_skipped_with_a_one_line_warning(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path)
    (root / "live" / "thread.json").write_text('{"key": "thread"}\n')
    result = run_cli("--root", str(root), "live", "show")
    assert result.exit_code == 0
    assert result.stderr == (
        f"warning: {root / 'live' / 'thread.json'}: malformed Live Bus entry: text: "
        "Field required; skipped\n"
    )
    assert result.stdout == "(the Live Bus is empty)\n"
    (root / "live" / "thread.json").write_text("{not json\n")
    result = run_cli("--root", str(root), "boot")
    assert result.exit_code == 0
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"warning: {root / 'live' / 'thread.json'}: malformed Live Bus")
