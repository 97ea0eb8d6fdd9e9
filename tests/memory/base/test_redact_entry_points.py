"""Every way text enters the root masks it, through the real CLI in real processes.

Guards the issue's list of entry points — friction, imports, hypothesis fields, the Live
Bus, ``canon edit -m`` and ``review edit`` messages, model prompts — with one line that
holds a key only the maintained detector knows (Mailchimp, Artifactory), one our gap
table knows (Anthropic) and one only our shell rules know (``curl -u user:pass``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from evolving_agent.memory.evidence.evidence import EvidenceDraft, EvidenceLog, _seal, genesis, now
from evolving_agent.paths import MemoryRoot
from tests.helpers import run_proc
from tests.helpers.fixtures import McpServer
from tests.helpers.review import add, queue, set_identity
from tests.helpers.roots import fresh_root
from tests.helpers.secrets import HIDDEN as HIDDEN_SHAPES

MAILCHIMP = "0123456789abcdef0123456789abcdef-us20"
ARTIFACTORY = "AKCp8" + "aB3xK9mQ2zR7tY5wP1nL8vC4" * 3
ANTHROPIC = "sk-ant-api03-" + "Zq7_" * 20
PASSWORD = "Tr0ub4dor9x"
LINE = f"deploy {MAILCHIMP} {ARTIFACTORY} {ANTHROPIC}; curl -u admin:{PASSWORD} host"
SECRETS = [MAILCHIMP, ARTIFACTORY[3:], ANTHROPIC[13:], PASSWORD]
# Keys hidden from the patterns (issue 31): a bare OpenSSH body, base64-wrapped, full-width,
# a ?key= parameter, a cloud key in prose, a key split by a newline.
HIDDEN = "\n".join(text for _, text, _ in HIDDEN_SHAPES)
SECRETS += [piece for _, _, piece in HIDDEN_SHAPES]

EDITOR_SCRIPT = """\
import sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
open(path, "w", encoding="utf-8").write(text.replace({old!r}, {new!r}))
"""


def _cli(root: MemoryRoot, *args: str, env: dict[str, str] | None = None) -> str:
    proc = run_proc("--root", str(root.path), *args, env={"USER": "alice", **(env or {})})
    assert proc.returncode == 0, (args, proc.stderr.decode()[-1500:])
    return proc.stdout.decode()


def _leaks(root: MemoryRoot) -> list[str]:
    """Every file (outside git's compressed objects) and git message holding a secret."""
    found = [
        str(p)
        for p in root.path.rglob("*")
        if p.is_file()
        and "objects" not in p.parts
        and any(s.encode() in p.read_bytes() for s in SECRETS)
    ]
    log = subprocess.run(
        ["git", "log", "--all", "--format=%B"], cwd=root.path, capture_output=True, text=True
    ).stdout
    return found + [f"git log: {s}" for s in SECRETS if s in log]


@pytest.fixture(scope="module")
def lived(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryRoot, Path]:
    """One root that took LINE through every CLI entry point."""
    tmp = tmp_path_factory.mktemp("entry")
    root = fresh_root(tmp / "memory")
    set_identity(root)
    queue(root, "rev-2026-11-1", add("Ask before offering options."))
    queue(root, "rev-2026-11-2", add("Keep answers short."))

    _cli(root, "friction", LINE)
    _cli(root, "friction", HIDDEN)
    _cli(root, "friction", "x", "--session", MAILCHIMP)
    _cli(root, "live", "set", "thread", LINE)
    # Hypothesis fields are short (--when under 120 characters): one key each.
    when, do = f"I see {MAILCHIMP}", f"curl -u admin:{PASSWORD} {ARTIFACTORY}"
    _cli(root, "hypothesis", "add", f"claim {ANTHROPIC}", "--when", when, "--do", do)
    batch = tmp / "in.jsonl"
    batch.write_text(
        json.dumps({"ts": "2026-11-02T10:00:00+00:00", "kind": "raw", "text": LINE}) + "\n"
        + json.dumps({"ts": "2026-11-02T10:01:00+00:00", "kind": "raw", "text": HIDDEN}) + "\n"
    )
    _cli(root, "evidence", "import", str(batch))

    canon_editor = tmp / "canon_ed.sh"
    canon_editor.write_text('#!/bin/sh\necho "# touched" >> "$1"\n')
    canon_editor.chmod(0o755)
    _cli(root, "canon", "edit", "notes.md", "-m", LINE, env={"EDITOR": str(canon_editor)})
    _cli(root, "canon", "edit", "notes.md", "-m", HIDDEN, env={"EDITOR": str(canon_editor)})

    review_editor = tmp / "review_ed.py"
    review_editor.write_text(
        EDITOR_SCRIPT.format(old="Ask before offering options.", new=f"Ask first {LINE}")
    )
    _cli(
        root, "review", "edit", "rev-2026-11-1", env={"EDITOR": f"{sys.executable} {review_editor}"}
    )
    _cli(root, "review", "reject", "rev-2026-11-2", "--reason", LINE)
    return root, tmp


@pytest.mark.slow
def test_no_entry_point_stores_a_key(lived: tuple[MemoryRoot, Path]) -> None:
    root, _ = lived
    assert _leaks(root) == []
    day = "".join(p.read_text() for p in root.evidence.glob("*.jsonl"))
    # Each kind of rule did its part.
    for marker in ("mailchimp-access-key", "artifactory-credentials", "anthropic-key", "password"):
        assert f"[REDACTED:{marker}]" in day


@pytest.mark.slow
@pytest.mark.parametrize(
    "view",
    [
        ["evidence", "show"],
        ["live", "show"],
        ["hypothesis", "list"],
        ["canon", "log"],
        ["review", "show", "rev-2026-11-1"],
        ["review", "list"],
        ["boot"],
    ],
    ids=lambda v: " ".join(v),
)
def test_no_view_shows_a_key(lived: tuple[MemoryRoot, Path], view: list[str]) -> None:
    out = _cli(lived[0], *view)
    assert [s for s in SECRETS if s in out] == []


@pytest.mark.slow
def test_a_key_recorded_raw_never_reaches_the_model_prompt(tmp_path: Path) -> None:
    # An honest old record from before the detector (sealed raw, chain valid): the prompt
    # built from it is masked by the detector on its way out.
    root = fresh_root(tmp_path / "memory")
    draft = EvidenceDraft(ts=now(), kind="friction", actor="session", text=f"old {LINE}")
    path = EvidenceLog(root).day_file(draft.day())
    path.write_bytes(_seal(draft, genesis(draft.day()))[1])
    prompt = tmp_path / "prompt.txt"
    script = f"import sys; open({str(prompt)!r}, 'w').write(sys.stdin.read()); sys.exit(3)"
    cmd = f'{sys.executable} -c "{script}"'
    _cli(root, "run", "nightly", "--date", date.today().isoformat(), "--reflector-cmd", cmd)
    sent = prompt.read_text()
    assert "[REDACTED:mailchimp-access-key]" in sent
    assert [s for s in SECRETS if s in sent] == []


@pytest.mark.slow
def test_the_mcp_tools_mask_like_the_cli(mcp_server: McpServer) -> None:
    # The session's own door: friction, live_set and hypothesis_add over MCP.
    async def body(s):  # type: ignore[no-untyped-def]
        return [
            await s.call_tool("friction", {"text": f"mcp {LINE}"}),
            await s.call_tool("friction", {"text": f"mcp {HIDDEN}"}),
            await s.call_tool("live_set", {"key": "mcp-thread", "text": LINE}),
            await s.call_tool(
                "hypothesis_add",
                {"text": f"mcp claim {ANTHROPIC}", "when": f"key {MAILCHIMP}", "do": "stop"},
            ),
        ]

    results = mcp_server.call(body)
    assert [r.is_error for r in results] == [False, False, False, False], results
    assert _leaks(mcp_server.root) == []
    day = "".join(p.read_text() for p in mcp_server.root.evidence.glob("*.jsonl"))
    assert "mcp deploy [REDACTED:mailchimp-access-key]" in day
