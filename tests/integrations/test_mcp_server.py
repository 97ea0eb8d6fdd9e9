"""The MCP server, driven by the official SDK's own client over real stdio.

One ``python -m evolving_agent --root ROOT mcp`` process serves the whole session (the
``mcp_server`` fixture in conftest.py), reached through ``stdio_client`` and
``ClientSession`` exactly as Claude Code or Codex would.  The tests share its root, so
each one checks what its own calls changed: the records it added, its own keys and texts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.memory.ops.hypotheses import add_hypothesis, list_hypotheses
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from tests.helpers.fixtures import McpServer

if TYPE_CHECKING:  # mcp costs ~1 s of CPU to import: collecting the fast part need not
    from mcp import ClientSession
    from mcp.types import CallToolResult

BIAS = "When I am about to write 'or you could also…', stop: did the user ask for options?"
TOOLS = {"friction", "live_set", "boot", "hypotheses", "hypothesis_add", "hypothesis_propose"}


@pytest.fixture
def server(mcp_server: McpServer) -> McpServer:
    """The session's server, its root holding a bias and a carry for boot to show."""
    human = Writer(mcp_server.root, "human")
    if not (mcp_server.root.today / "bias.md").exists():
        human.write("today", "bias.md", BIAS + "\n")
        human.write(
            "today",
            "carry.json",
            json.dumps({"type": "watchpoint", "text": "unasked options", "hypothesis": "h-1"}),
        )
    return mcp_server


def text_of(result: CallToolResult) -> str:
    from mcp.types import TextContent

    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def all_records(root: MemoryRoot) -> list[EvidenceRecord]:
    return list(EvidenceLog(root).iter_all())


def git_head(root: MemoryRoot) -> str:
    return subprocess.run(
        ["git", "-C", str(root.path), "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def new_records(root: MemoryRoot, before: list[EvidenceRecord]) -> list[EvidenceRecord]:
    """Records appended since ``before`` was read (Evidence only grows)."""
    now = all_records(root)
    assert now[: len(before)] == before
    return now[len(before) :]


def test_friction_arrives_once_as_session_and_canon_and_today_are_untouched(
    server: McpServer,
) -> None:
    root = server.root
    canon_before, today_before = snapshot(root.canon), snapshot(root.today)
    head_before = git_head(root)
    records_before = all_records(root)

    async def body(s: ClientSession) -> CallToolResult:
        return await s.call_tool(
            "friction",
            {"text": "offered three options unasked; stopped at one", "supports": "h-1"},
        )

    result = server.call(body)

    assert result.is_error is False
    new = new_records(root, records_before)
    assert len(new) == 1
    rec = new[0]
    assert (rec.kind, rec.actor, rec.text, rec.supports, rec.contradicts) == (
        "friction",
        "session",
        "offered three options unasked; stopped at one",
        "h-1",
        None,
    )
    assert result.structured_content is not None
    assert result.structured_content["id"] == rec.id
    assert result.structured_content["actor"] == "session"
    assert snapshot(root.canon) == canon_before
    assert snapshot(root.today) == today_before
    assert git_head(root) == head_before
    report = verify_root(root)
    assert report.problems == []


def test_concurrent_friction_calls_each_arrive_once_on_an_intact_chain(
    server: McpServer,
) -> None:
    root = server.root
    records_before = all_records(root)
    texts = [f"concurrent friction number {i}" for i in range(12)]

    async def body(s: ClientSession) -> list[CallToolResult]:
        results: list[CallToolResult] = []

        async def call(text: str) -> None:
            results.append(await s.call_tool("friction", {"text": text}))

        async with anyio.create_task_group() as tg:
            for text in texts:
                tg.start_soon(call, text)
        return results

    results = server.call(body)

    assert [r.is_error for r in results] == [False] * len(texts)
    new = new_records(root, records_before)
    assert sorted(r.text for r in new) == sorted(texts)
    assert {(r.kind, r.actor) for r in new} == {("friction", "session")}
    assert verify_root(root).problems == []


def test_live_set_and_boot_over_mcp(server: McpServer) -> None:
    root = server.root

    async def body(s: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        set_result = await s.call_tool(
            "live_set", {"key": "thread", "text": "parser refactor; stopped at tests"}
        )
        return set_result, await s.call_tool("boot", {})

    set_result, boot_result = server.call(body)

    assert set_result.is_error is False
    entry = json.loads((root.live / "thread.json").read_text(encoding="utf-8"))
    assert (entry["key"], entry["text"], entry["actor"]) == (
        "thread",
        "parser refactor; stopped at tests",
        "session",
    )
    assert boot_result.is_error is False
    boot = text_of(boot_result)
    assert boot.startswith("# Boot context: Assistant\n")
    assert f"## Today's bias\n{BIAS}\n" in boot
    assert "**watchpoint** (hypothesis h-1): unasked options" in boot
    assert '- `thread`: "parser refactor; stopped at tests"' in boot
    assert verify_root(root).problems == []


def test_tool_schemas_expose_no_actor_or_layer(server: McpServer) -> None:
    async def body(s: ClientSession) -> dict[str, dict[str, Any]]:
        listed = await s.list_tools()
        return {t.name: t.input_schema for t in listed.tools}

    schemas = server.call(body)

    assert set(schemas) == TOOLS
    params = {name: set(schema.get("properties", {})) for name, schema in schemas.items()}
    assert params == {
        "friction": {"text", "supports", "contradicts", "session"},
        "live_set": {"key", "text"},
        "boot": set(),
        "hypotheses": set(),
        "hypothesis_add": {"text", "when", "do", "stakes"},
        "hypothesis_propose": {"hypothesis", "when", "do"},
    }
    for props in params.values():
        assert not props & {"actor", "as", "layer", "area", "relpath", "path"}


def test_the_session_proposes_a_counter_move_as_a_proposal(server: McpServer) -> None:
    root = server.root
    h = add_hypothesis(root, "A pattern the session will shape for MCP")
    records_before = all_records(root)

    async def body(s: ClientSession) -> CallToolResult:
        return await s.call_tool(
            "hypothesis_propose",
            {"hypothesis": h.id, "do": "finish what was asked first", "actor": "human"},
        )

    result = server.call(body)

    assert result.is_error is False
    (rec,) = new_records(root, records_before)
    assert (rec.kind, rec.actor) == ("hypothesis-proposal", "session")
    assert rec.data == {"hypothesis": h.id, "when": None, "do": "finish what was asked first"}
    # The register is untouched: a proposal reaches the bias only through evidence.
    assert [x.do for x in list_hypotheses(root) if x.id == h.id] == [None]


def test_the_session_raises_a_hypothesis_as_session(server: McpServer) -> None:
    root = server.root
    records_before = all_records(root)

    async def body(s: ClientSession) -> CallToolResult:
        return await s.call_tool(
            "hypothesis_add",
            {
                "text": "I open with a plan nobody asked for",
                "when": "about to write 'Let me first organise'",
                "do": "answer first, plan only if asked",
                "actor": "human",
            },
        )

    result = server.call(body)

    assert result.is_error is False
    (rec,) = [r for r in new_records(root, records_before) if r.kind == "hypothesis"]
    assert rec.actor == "session"
    snap = rec.data["hypothesis"]
    assert (snap["origin"], snap["state"]) == ("session", "emerging")
    assert snap["do"] == "answer first, plan only if asked"


def test_a_smuggled_actor_argument_still_acts_as_session(server: McpServer) -> None:
    root = server.root
    canon_before = snapshot(root.canon)
    records_before = all_records(root)

    async def body(s: ClientSession) -> CallToolResult:
        return await s.call_tool(
            "friction", {"text": "felt off", "actor": "human", "layer": "canon"}
        )

    result = server.call(body)

    assert result.is_error is False
    (rec,) = new_records(root, records_before)
    assert (rec.kind, rec.actor, rec.text) == ("friction", "session", "felt off")
    assert snapshot(root.canon) == canon_before


def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(server: McpServer) -> None:
    root = server.root
    records_before = all_records(root)
    live_before = snapshot(root.live)
    log_before = server.stderr_log.stat().st_size

    async def body(s: ClientSession) -> list[CallToolResult]:
        return [
            await s.call_tool("live_set", {"key": "../escape", "text": "x"}),
            await s.call_tool("friction", {"text": "   "}),
            await s.call_tool("friction", {"text": "still serving after two errors"}),
        ]

    bad_key, empty, ok = server.call(body)

    assert bad_key.is_error is True
    assert text_of(bad_key).endswith(
        "invalid Live Bus key '../escape': use letters, digits, '.', '_' or '-' (max 64)"
    )
    assert empty.is_error is True
    assert text_of(empty).endswith("friction text is empty: describe what felt off")
    assert ok.is_error is False
    assert [(r.kind, r.text) for r in new_records(root, records_before)] == [
        ("friction", "still serving after two errors")
    ]
    assert snapshot(root.live) == live_before
    assert not (root.path / "escape.json").exists()
    with server.stderr_log.open("rb") as log:
        log.seek(log_before)
        assert b"Traceback" not in log.read()


def test_hypotheses_tool_lists_the_register_and_friction_can_cite_it(server: McpServer) -> None:
    root = server.root
    h = add_hypothesis(root, "the user wants one answer, not a menu of options")
    records_before = all_records(root)

    async def body(s: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        listed = await s.call_tool("hypotheses", {})
        cited = await s.call_tool(
            "friction", {"text": "listed four libraries; one was asked for", "supports": h.id}
        )
        return listed, cited

    listed, cited = server.call(body)

    assert listed.is_error is False
    register = [{"id": x.id, "text": x.text, "state": x.state} for x in list_hypotheses(root)]
    assert {"id": h.id, "text": h.text, "state": "emerging"} in register
    assert listed.structured_content == {"hypotheses": register}
    assert cited.is_error is False
    (rec,) = new_records(root, records_before)
    assert (rec.kind, rec.actor, rec.supports) == ("friction", "session", h.id)


def test_friction_citing_an_unknown_hypothesis_warns_as_the_cli_does(server: McpServer) -> None:
    root = server.root
    known = add_hypothesis(root, "the user reads the first line only")
    records_before = all_records(root)

    async def body(s: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        unknown = await s.call_tool(
            "friction", {"text": "cited a hypothesis nobody raised", "contradicts": "h-nope"}
        )
        cited = await s.call_tool(
            "friction", {"text": "put the answer on line three", "supports": known.id}
        )
        return unknown, cited

    unknown, cited = server.call(body)

    # Recorded all the same (an unattended caller must not lose the event) ...
    assert unknown.is_error is False
    first, second = new_records(root, records_before)
    assert (first.contradicts, second.supports) == ("h-nope", known.id)
    # ... with the CLI's warning word for word; a known id warns nothing.
    assert unknown.structured_content is not None
    assert unknown.structured_content["warnings"] == [
        "no hypothesis h-nope in the register; the event is recorded, but no job will "
        "count it for a hypothesis (see 'evolving-agent hypothesis list')"
    ]
    assert cited.structured_content is not None
    assert cited.structured_content["warnings"] == []


def test_mcp_refuses_a_missing_root_with_one_line_and_exit_4(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    proc = subprocess.run(
        [sys.executable, "-m", "evolving_agent", "--root", str(missing), "mcp"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 4
    assert proc.stdout == ""
    assert proc.stderr == (
        f"error: no memory root at {missing} (run 'evolving-agent init {missing}' "
        "or pass --root / set $EVOLVING_AGENT_ROOT)\n"
    )
