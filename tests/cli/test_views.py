"""Every human view renders root text neutralised, through a real pseudo-terminal.

Guards the issue's door "the human's own views can be rewritten by the session":
friction that erases the canon-write line above it, a commit message that forges an
init line with ``\\r``, a hypothesis trigger that writes the clipboard (OSC 52), bidi
overrides and zero-width characters in Live Bus notes and reviews.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.ops.events import record_friction
from evolving_agent.memory.ops.hypotheses import add_hypothesis
from evolving_agent.memory.ops.live import set_entry
from evolving_agent.memory.ops.review_trace import queue_pending
from evolving_agent.paths import MemoryRoot
from evolving_agent.review.models import PendingReview
from evolving_agent.textsafe import one_line
from tests.helpers.fixtures import isolated_env
from tests.helpers.roots import fresh_root
from tests.helpers.terminal import run_with_typeahead

ERASE = "ok" + "\x1b[1A\x1b[2K" * 6
FORGE = "x\r\x1b[2K0123456789  2026-01-01  init     -               init memory root"
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
DCS = "\x1bP+q544e\x1b\\"
BIDI = "safe \u202egnp.exe\u202c and\u200b hidden\u2066x\u2069"
C1 = "\x9b2J csi in one byte, \x85 next line"
HOSTILE = [ERASE, FORGE, OSC52, DCS, BIDI, C1]

# Bytes a terminal acts on.  A pty turns "\n" into "\r\n" (ONLCR), so a bare "\r" is
# one not followed by "\n".
FORBIDDEN = [b"\x1b", b"\x07", b"\xc2\x9b", b"\xc2\x85", b"\x08"]
FORBIDDEN_CHARS = ["\u202e", "\u202c", "\u200b", "\u2066", "\u2069"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[MemoryRoot, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("views")
    env = {**os.environ, **isolated_env(tmp), "USER": "alice", "LINES": "200", "PAGER": "cat"}
    old = dict(os.environ)
    os.environ.update(env)
    try:
        root = fresh_root(tmp / "memory")
        for text in HOSTILE:
            record_friction(root, "session", text)
        ident = (root.canon / "identity.yaml").read_text()
        Writer(root, "human").write(
            "canon", "identity.yaml", ident + "# " + BIDI + "\n", message=FORGE
        )
        add_hypothesis(root, "one answer", when=OSC52, do=BIDI, actor="session")
        set_entry(root, "session", "thread", BIDI + " " + ERASE)
        review = PendingReview(
            id="rev-2026-11-1",
            month="2026-11",
            diff={"section": "habits", "op": "add", "text": "Ask first " + BIDI},  # type: ignore[arg-type]
            hypothesis="h-x",
            proposals=["prop-x"],
            evidence_ids=["ev-000000000000"],
            rationale=ERASE + OSC52 + BIDI,
            created=datetime(2026, 12, 1, tzinfo=UTC),
        )
        queue_pending(
            Writer(root, "monthly"), review.id, review.model_dump_json(), by="monthly", run="t"
        )
    finally:
        os.environ.clear()
        os.environ.update(old)
    return root, env


def _on_pty(args: list[str], env: dict[str, str]) -> bytes:
    """What ``python -m evolving_agent ARGS`` shows on a terminal; it must exit 0."""
    code, shown, _left = run_with_typeahead(args, b"", env)
    assert code == 0, shown.decode(errors="replace")
    return shown


VIEWS = [
    ["evidence", "show"],
    ["evidence", "show", "--json"],
    ["canon", "log"],
    ["canon", "show"],
    ["canon", "diff", "HEAD~1"],
    ["review", "list"],
    ["review", "show", "rev-2026-11-1"],
    ["review", "list", "--json"],
    ["hypothesis", "list"],
    ["hypothesis", "show", "h-1"],
    ["live", "show"],
    ["live", "show", "--json"],
    ["boot"],
]


@pytest.mark.slow
@pytest.mark.parametrize("args", VIEWS, ids=" ".join)
def test_a_view_on_a_terminal_obeys_no_control_text(
    hostile: tuple[MemoryRoot, dict[str, str]], args: list[str]
) -> None:
    root, env = hostile
    if args[:2] == ["hypothesis", "show"]:
        args = ["hypothesis", "show", _hypothesis_id(root, env)]
    out = _on_pty(["--root", str(root.path), *args], env)
    for bad in FORBIDDEN:
        assert bad not in out, (bad, out)
    text = out.decode("utf-8")
    assert "\r" not in text.replace("\r\n", "\n"), "a bare carriage return overwrites a line"
    for ch in FORBIDDEN_CHARS:
        assert ch not in text
    shown = "\\u001b" in text or "\\u202e" in text
    assert shown or args == ["boot"], "the hostile text is shown, not dropped"
    if "--json" in args:
        json.loads(text.replace("\r\n", "\n"))  # neutralised JSON is still JSON


def _hypothesis_id(root: MemoryRoot, env: dict[str, str]) -> str:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "evolving_agent",
            "--root",
            str(root.path),
            "hypothesis",
            "list",
            "--json",
        ],
        capture_output=True,
        env=env,
        check=True,
    ).stdout
    return str(json.loads(out)[0]["id"])


@pytest.mark.slow
def test_a_forged_init_line_in_a_commit_message_stays_on_the_human_commit_line(
    hostile: tuple[MemoryRoot, dict[str, str]],
) -> None:
    # Guards: canon edit -m $'x\r\x1b[2K<fake init line>' showed two init lines.
    root, env = hostile
    lines = _on_pty(["--root", str(root.path), "canon", "log"], env).decode().splitlines()
    assert len(lines) == 2
    assert "  human  " in lines[0] and lines[0].endswith(one_line(FORGE))
    assert "init: memory root created" in lines[1] and "\\u000d" not in lines[1]


@pytest.mark.slow
def test_neutralised_json_decodes_to_the_original_text(
    hostile: tuple[MemoryRoot, dict[str, str]],
) -> None:
    root, env = hostile
    out = _on_pty(["--root", str(root.path), "live", "show", "--json"], env)
    entry = json.loads(out.decode().replace("\r\n", "\n"))[0]
    assert entry["text"].startswith("safe \u202egnp.exe")  # exact text, shown safely


@pytest.mark.slow
def test_a_long_view_goes_through_the_pager_with_safe_defaults(
    hostile: tuple[MemoryRoot, dict[str, str]], tmp_path: Path
) -> None:
    root, env = hostile
    seen = tmp_path / "paged"
    pager = (
        f"{sys.executable} -c \"import os,sys; open({str(seen)!r},'w')"
        ".write(os.environ.get('LESS','')+'|'+sys.stdin.read())\""
    )
    env = {**env, "PAGER": pager, "LINES": "3"}
    env.pop("LESS", None)
    _on_pty(["--root", str(root.path), "evidence", "show"], env)
    less, _, body = seen.read_text().partition("|")
    assert less == "FRX" and "friction" in body and "\x1b" not in body
    seen.unlink()
    _on_pty(["--root", str(root.path), "--no-pager", "evidence", "show"], env)
    assert not seen.exists()


@pytest.mark.slow
def test_lines_pasted_after_a_long_view_are_not_fed_to_the_pager(
    hostile: tuple[MemoryRoot, dict[str, str]], tmp_path: Path
) -> None:
    # Newcomer snag: pasting several commands, a pager opened by a long view read the
    # lines pasted after it as its keystrokes, and the shell never ran them.
    root, env = hostile
    seen = tmp_path / "paged"
    pager = f"{sys.executable} -c \"open({str(seen)!r},'w')\""
    env = {**env, "PAGER": pager, "LINES": "3"}
    pasted = b"evolving-agent canon log\n"
    code, shown, left = run_with_typeahead(
        ["--root", str(root.path), "evidence", "show"], pasted, env
    )
    assert code == 0
    assert not seen.exists()  # printed as it is, no pager
    assert b"friction" in shown
    assert left == pasted  # still waiting, for the shell


