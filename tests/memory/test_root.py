"""init, root resolution, boot formats and boot's independence from Evidence."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import git
import pytest

from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.root import init_root
from evolving_agent.paths import MemoryRoot, resolve_root
from tests.helpers import run_cli, run_proc


def test_init_creates_layers_template_schedule_and_one_commit(tmp_path: Path) -> None:
    result = run_cli("init", str(tmp_path / "r"))
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == f"created memory root at {tmp_path / 'r'}"
    root = tmp_path / "r"
    for layer in ("canon", "live", "today", "evidence"):
        assert (root / layer).is_dir()
    assert "# Canon: who this assistant is." in (root / "canon/identity.yaml").read_text()
    assert "nightly:" in (root / "schedule.yaml").read_text()
    commits = list(git.Repo(root).iter_commits())
    assert len(commits) == 1
    assert sorted(commits[0].stats.files) == [
        ".gitignore",
        "canon/identity.yaml",
        "canon/policy.yaml",
        "canon/probes.yaml",  # the human's probes of Canon (docs/probes.md)
        "crons/nightly.md",  # the jobs' prompts are the human's, tracked like Canon
        "crons/weekly.md",
        "schedule.yaml",
    ]


def test_init_refuses_an_existing_root(tmp_path: Path) -> None:
    init_root(tmp_path / "r")
    result = run_cli("init", str(tmp_path / "r"))
    assert result.exit_code == 4
    assert "a memory root already exists" in result.output


def test_root_precedence_flag_then_env_then_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVOLVING_AGENT_ROOT", str(tmp_path / "from-env"))
    assert resolve_root(str(tmp_path / "flag")) == tmp_path / "flag"
    assert resolve_root(None) == tmp_path / "from-env"
    monkeypatch.delenv("EVOLVING_AGENT_ROOT")
    monkeypatch.chdir(tmp_path)
    assert resolve_root(None) == tmp_path / "memory"


def test_commands_on_a_missing_root_say_how_to_create_one(tmp_path: Path) -> None:
    result = run_cli("--root", str(tmp_path / "nope"), "boot")
    assert result.exit_code == 4
    assert "no memory root at" in result.output
    assert "evolving-agent init" in result.output


def test_boot_markdown_json_and_claude_hook(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    assert run_cli("live", "set", "thread", "parser refactor, stopped at tests").exit_code == 0
    md = run_cli("boot")
    assert md.exit_code == 0
    assert md.output.startswith("# Boot context: Assistant\n")
    assert '- `thread`: "parser refactor, stopped at tests"' in md.output
    assert "(no bias yet" in md.output

    data = json.loads(run_cli("boot", "--format", "json").output)
    assert set(data) >= {"bias", "carry", "canon", "live"}
    assert set(data["carry"]) >= {"type", "text", "hypothesis"}
    assert data["live"] == {"thread": "parser refactor, stopped at tests"}
    assert data["canon"]["identity"]["name"] == "Assistant"

    (root.today / "bias.md").write_text("When I am about to offer options, stop.\n")
    hook = json.loads(run_proc("boot", "--format", "claude-hook").stdout)
    out = hook["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    assert "When I am about to offer options, stop." in out["additionalContext"]


def test_malformed_hand_edit_of_canon_never_breaks_boot(tmp_path: Path) -> None:
    # Issue 11 changed this on purpose: a hand edit is not served (it used to be parsed
    # and, when malformed, broke every boot); boot serves the last writer commit's Canon
    # and names the file on stderr and in the context.
    root = init_root(tmp_path / "memory")
    (root.canon / "identity.yaml").write_text("name: Ada\nvalues:\n  - ok\n  bad: [\n")
    proc = run_proc("boot")
    assert proc.returncode == 0
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert out.startswith("# Boot context: Assistant\n")
    assert f"warning: {root.canon / 'identity.yaml'}: changed behind the writer's back\n" in err
    assert "Traceback" not in err


def test_malformed_canon_yaml_through_the_writer_names_file_and_line(tmp_path: Path) -> None:
    root = init_root(tmp_path / "memory")
    result = run_cli(
        "write",
        "--as",
        "human",
        "canon",
        "identity.yaml",
        input="name: Ada\nvalues: []\nmood: sunny\n",
    )
    assert result.exit_code == 4
    assert (
        f"{root.canon / 'identity.yaml'}:3: mood: Extra inputs are not permitted" in result.output
    )
    assert run_cli("boot").output.startswith("# Boot context: Assistant\n")


def test_boot_never_reads_evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = init_root(tmp_path / "memory")
    before = build_boot(root)
    # Garbage in Evidence and a booby-trapped reader: boot must not notice either.
    (root.evidence / "2026-01-01.jsonl").write_text("{not json\n")

    def _trap(*_a: object, **_k: object) -> None:
        raise AssertionError("boot read Evidence")

    monkeypatch.setattr(EvidenceLog, "read_day", _trap)
    monkeypatch.setattr(EvidenceLog, "iter_all", _trap)
    assert build_boot(MemoryRoot(root.path)) == before


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryRoot:
    monkeypatch.setenv("USER", "alice")
    return init_root(tmp_path / "memory")


# Regression: an attack an outside review of the memory layer got through.
def test_jobs_and_the_scheduler_leave_nothing_readable_by_others_under_umask_0(
    tmp_path: Path,
) -> None:
    import json
    import os
    import stat
    import sys

    root = tmp_path / "private"
    program = f"""
import os, sys
os.umask(0)
from click.testing import CliRunner
from evolving_agent.cli import cli
def run(*args, input=None):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    if result.exit_code:
        sys.exit(f"{{args}}: {{result.output}}")
    return result.output
run("init", {str(root)!r})
hid = run("hypothesis", "add", "I over-explain", "--do", "answer first").split()[0]
run("friction", "over-explained again", "--supports", hid)
for job in ("nightly", "weekly", "monthly"):
    run("run", job)
run("review", "list")
run("schedule", "show")
run("boot", "--write-file", {str(tmp_path / "boot-copy.md")!r})
run("verify")
"""
    env = {**os.environ, "EVOLVING_AGENT_ROOT": str(root)}
    proc = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    leaks = [
        f"{path.relative_to(root)} {stat.S_IMODE(os.lstat(path).st_mode):o}"
        for path in root.rglob("*")
        if stat.S_IMODE(os.lstat(path).st_mode) & 0o077
    ]
    assert leaks == [], json.dumps(leaks)
    # The @import copy is the next session's context: nobody else may write it.
    assert stat.S_IMODE((tmp_path / "boot-copy.md").stat().st_mode) & 0o022 == 0


# Regression: an integrity hole (a hidden or forged change) found in review.
def test_everything_in_the_root_is_private_whatever_the_umask(tmp_path: Path) -> None:
    root = tmp_path / "private"
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"ts": "2026-01-02T10:00:00", "kind": "raw", "text": "x"}) + "\n")
    # One real process with a wide-open umask runs the commands (git children inherit
    # the umask too); CliRunner inside it keeps it to one interpreter start.
    program = f"""
import os, sys
os.umask(0)
from click.testing import CliRunner
from evolving_agent.cli import cli
def run(*args, input=None):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    if result.exit_code:
        sys.exit(f"{{args}}: {{result.output}}")
run("init", {str(root)!r})
run("friction", "felt off")
run("write", "--as", "human", "canon", "identity.yaml", input="name: Mine\\n")
run("write", "--as", "human", "today", "bias.md", input="bias")
run("live", "set", "thread", "on it")
run("evidence", "import", {str(events)!r})
with open({str(root / "schedule.yaml")!r}, "a") as fh:
    fh.write("# mine\\n")
run("accept", "schedule.yaml")
run("verify")
"""
    env = {**os.environ, "EVOLVING_AGENT_ROOT": str(root)}
    proc = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    leaks = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            mode = stat.S_IMODE(os.lstat(path).st_mode)
            if mode & 0o077:
                leaks.append(f"{path.relative_to(root)} {mode:o}")
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert leaks == []


# Bad input a new user typed during QA.
def test_init_where_the_root_is_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a directory\n")
    proc = run_proc("init", env={"EVOLVING_AGENT_ROOT": str(afile)})
    assert proc.returncode == 4
    assert proc.stderr.decode() == f"error: {afile} is a file, not a directory\n"
    assert afile.read_text() == "not a directory\n"


# Bad input a new user typed during QA.
def test_a_root_that_is_a_file_is_not_offered_to_init(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    proc = run_proc("boot", env={"EVOLVING_AGENT_ROOT": str(afile)})
    assert proc.returncode == 4
    assert proc.stderr.decode() == (
        f"error: no memory root at {afile}: it is a file, not a directory "
        "(pass --root or set $EVOLVING_AGENT_ROOT to a directory)\n"
    )


# Bad input a new user typed during QA.
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
