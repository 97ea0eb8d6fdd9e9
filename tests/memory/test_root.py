"""init, root resolution, boot formats and boot's independence from Evidence."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from evolving_agent.memory.boot import build_boot
from evolving_agent.memory.evidence import EvidenceLog
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
