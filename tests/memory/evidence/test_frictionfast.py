"""The friction fast path (memory/evidence/frictionfast.py): the same record and every guard of the
full path, without click, pydantic, apscheduler or asyncio.  Real console processes
(``python -m evolving_agent``, which is what the hooks run), real roots, real git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog
from evolving_agent.memory.evidence.frictionfast import parse_argv
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_proc
from tests.helpers.roots import fresh_root

pytestmark = pytest.mark.slow  # real processes, one per case

HEAVY = ("pydantic", "apscheduler", "asyncio", "click", "ruamel", "git", "filelock")

# Runs the console script's main() and reports, at exit, which heavy modules it loaded.
PROBE = """
import atexit, json, sys
heavy = {heavy!r}
atexit.register(lambda: print(json.dumps(sorted(m for m in heavy if m in sys.modules)),
                              file=sys.stderr))
sys.argv = ["evolving-agent", *{argv!r}]
from evolving_agent.launch import main
main()
"""


def _loaded(*argv: str, env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY, argv=list(argv))],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    *_, last = proc.stderr.strip().splitlines()
    return proc.returncode, json.loads(last), proc.stdout


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def _friction(root: MemoryRoot) -> list[dict[str, object]]:
    return [r.model_dump(mode="json") for r in EvidenceLog(root).iter_all() if r.kind != "job"]


def test_a_friction_write_loads_no_pydantic_scheduler_or_asyncio(root: MemoryRoot) -> None:
    # Guards the speed of the command hooks run most: a heavy import on this path is
    # what made a friction write 12x a bare Python start.
    code, heavy, out = _loaded("--root", str(root.path), "friction", "the answer buried it")
    assert code == 0
    assert heavy == []
    [record] = EvidenceLog(root).iter_all()
    assert out.strip() == record.id and record.text == "the answer buried it"


def test_the_full_path_still_loads_them_when_asked_to(root: MemoryRoot) -> None:
    # The probe can fail: --supports needs the register, so the full CLI runs (and
    # refuses the unknown id: exit 4).
    code, heavy, _ = _loaded("--root", str(root.path), "friction", "x", "--supports", "h-none")
    assert code == 4
    assert "pydantic" in heavy and "click" in heavy


ZONES = {"UTC": "Z", "Asia/Kolkata": "+05:30", "America/St_Johns": "-03:30"}


def _zone(ts: str) -> str:
    return "Z" if ts.endswith("Z") else ts[-6:]


@pytest.mark.parametrize("tz", list(ZONES))
def test_the_fast_record_is_the_full_paths_and_verifies(root: MemoryRoot, tz: str) -> None:
    env = {"TZ": tz}
    fast = run_proc("--root", str(root.path), "friction", "felt off", "--as", "human", env=env)
    full = run_proc(  # $EVOLVING_AGENT_RAISE sends every command down the full path
        "--root", str(root.path), "friction", "felt off", "--as", "human",
        env={**env, "EVOLVING_AGENT_RAISE": "1"},
    )  # fmt: skip
    assert fast.returncode == full.returncode == 0, (fast.stderr, full.stderr)
    one, two = _friction(root)
    mine = ("id", "prev", "hash", "ts")
    assert {k: v for k, v in one.items() if k not in mine} == {
        k: v for k, v in two.items() if k not in mine
    }
    assert _zone(str(one["ts"])) == _zone(str(two["ts"])) == ZONES[tz]  # written alike
    assert two["prev"] == one["hash"]  # one chain
    verify = run_proc("--root", str(root.path), "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_keys_in_the_text_and_session_are_masked(root: MemoryRoot) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwx1234"
    proc = run_proc("--root", str(root.path), "friction", f"pasted {key}", "--session", key)
    assert proc.returncode == 0, proc.stderr
    raw = b"".join(p.read_bytes() for p in root.evidence.glob("*.jsonl"))
    assert key.encode() not in raw and b"[REDACTED:openai-key]" in raw


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["friction", "   "], "friction text is empty"),
        (["friction", "x" * (16 * 1024 + 1)], "the limit is 16,384"),
        (["friction", "x", "--session", "two\nlines"], "--session must be one line"),
    ],
)
def test_bad_input_is_the_full_paths_one_line_and_nothing_is_written(
    root: MemoryRoot, args: list[str], words: str
) -> None:
    proc = run_proc("--root", str(root.path), *args)
    assert proc.returncode == 4
    assert words in proc.stderr.decode() and len(proc.stderr.decode().splitlines()) == 1
    assert _friction(root) == []


def test_no_root_is_the_usual_error(tmp_path: Path) -> None:
    proc = run_proc("--root", str(tmp_path / "nowhere"), "friction", "x")
    assert proc.returncode == 4
    assert "no memory root at" in proc.stderr.decode()


def test_a_policy_that_denies_the_session_evidence_is_obeyed(root: MemoryRoot) -> None:
    # Guards the permission check: the fast path must not append what the policy denies.
    Writer(root, "human").write(
        "canon", "policy.yaml", "schema_version: 1\nwrite:\n  evidence: [human]\n"
    )
    proc = run_proc("--root", str(root.path), "friction", "let me in")
    assert proc.returncode == 3, proc.stderr
    kinds = [r.kind for r in EvidenceLog(root).iter_all()]
    assert "friction" not in kinds and "write-denied" in kinds


def test_a_symlinked_day_file_is_refused_and_its_target_untouched(
    root: MemoryRoot, tmp_path: Path
) -> None:
    # Guards the symlink refusal: an append through a link would land in another file.
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    run_proc("--root", str(root.path), "friction", "first")
    [day_file] = root.evidence.glob("*.jsonl")
    day_file.unlink()
    day_file.symlink_to(target)
    proc = run_proc("--root", str(root.path), "friction", "second")
    assert proc.returncode == 4
    assert "symlink" in proc.stderr.decode()
    assert target.read_text() == "keep\n"


def test_a_torn_tail_is_moved_aside_before_the_append(root: MemoryRoot) -> None:
    run_proc("--root", str(root.path), "friction", "first")
    [day_file] = root.evidence.glob("*.jsonl")
    with day_file.open("ab") as fh:
        fh.write(b'{"half a rec')  # a writer killed mid-line
    proc = run_proc("--root", str(root.path), "friction", "second")
    assert proc.returncode == 0, proc.stderr
    kinds = [r.kind for r in EvidenceLog(root).iter_all()]
    assert kinds == ["friction", "repair", "friction"]
    assert list((root.evidence / "torn").glob("*.part"))


def test_an_event_on_a_reflected_day_is_refused(root: MemoryRoot) -> None:
    (root.today / "nightly.json").write_text(json.dumps({"last_date": "2999-01-01"}))
    proc = run_proc("--root", str(root.path), "friction", "from the past")
    assert proc.returncode == 4
    assert "already reflected 2999-01-01" in proc.stderr.decode()


@pytest.mark.parametrize(
    "argv",
    [
        ["friction", "x"],
        ["--root", "r", "friction", "x", "--as", "human", "--session", "s"],
        ["friction", "--session=s", "x", "--root=r"],
        ["friction", "friction"],
    ],
)
def test_parse_accepts_the_plain_shapes(argv: list[str]) -> None:
    req = parse_argv(argv, {})
    assert req is not None and req.text in {"x", "friction"}


@pytest.mark.parametrize(
    "argv",
    [
        ["friction"],  # missing TEXT: click's usage error
        ["friction", "a", "b"],
        ["friction", "-x"],
        ["friction", "x", "--help"],
        ["friction", "x", "--supports", "h-1"],
        ["friction", "x", "--as", "god"],
        ["friction", "x", "--session", "a", "--session", "b"],
        ["--session", "s", "friction", "x"],
        ["--no-pager", "friction", "x"],
        ["live", "set", "friction", "x"],
        ["friction", "x", "--session"],
        ["friction", "\udcff"],
    ],
)
def test_parse_leaves_everything_else_to_the_full_path(argv: list[str]) -> None:
    assert parse_argv(argv, {}) is None


def test_parse_leaves_debugging_to_the_full_path() -> None:
    assert parse_argv(["friction", "x"], {"EVOLVING_AGENT_RAISE": "1"}) is None
