"""The MCP server, driven by the official SDK's own client over real stdio.

Each test spawns ``python -m evolving_agent --root ROOT mcp`` through ``stdio_client``
and talks to it with ``ClientSession``, exactly as Claude Code or Codex would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from evolving_agent.memory.authority import Writer
from evolving_agent.memory.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.memory.hypotheses import add_hypothesis
from evolving_agent.memory.root import init_root
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot

T = TypeVar("T")

BIAS = "When I am about to write 'or you could also…', stop: did the user ask for options?"
TOOLS = {"friction", "live_set", "boot", "hypotheses", "hypothesis_add"}


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    r = init_root(tmp_path / "memory")
    human = Writer(r, "human")
    human.write("today", "bias.md", BIAS + "\n")
    human.write(
        "today",
        "carry.json",
        json.dumps({"type": "watchpoint", "text": "unasked options", "hypothesis": "h-1"}),
    )
    return r


def run_session(
    root: MemoryRoot, tmp_path: Path, body: Callable[[ClientSession], Awaitable[T]]
) -> T:
    """Spawn the server, initialise an SDK client session, run ``body`` in it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "evolving_agent", "--root", str(root.path), "mcp"],
        env=dict(os.environ),  # git identity + isolated git config from conftest
        cwd=str(tmp_path),
    )

    async def main() -> T:
        with (tmp_path / "server-stderr.log").open("a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

    return anyio.run(main)


def text_of(result: CallToolResult) -> str:
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


def test_friction_arrives_once_as_session_and_canon_and_today_are_untouched(
    root: MemoryRoot, tmp_path: Path
) -> None:
    canon_before, today_before = snapshot(root.canon), snapshot(root.today)
    head_before = git_head(root)
    records_before = all_records(root)

    async def body(s: ClientSession) -> CallToolResult:
        return await s.call_tool(
            "friction",
            {"text": "offered three options unasked; stopped at one", "supports": "h-1"},
        )

    result = run_session(root, tmp_path, body)

    assert result.is_error is False
    new = all_records(root)[len(records_before) :]
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
    root: MemoryRoot, tmp_path: Path
) -> None:
    texts = [f"friction number {i}" for i in range(12)]

    async def body(s: ClientSession) -> list[CallToolResult]:
        results: list[CallToolResult] = []

        async def call(text: str) -> None:
            results.append(await s.call_tool("friction", {"text": text}))

        async with anyio.create_task_group() as tg:
            for text in texts:
                tg.start_soon(call, text)
        return results

    results = run_session(root, tmp_path, body)

    assert [r.is_error for r in results] == [False] * len(texts)
    frictions = [r for r in all_records(root) if r.kind == "friction"]
    assert sorted(r.text for r in frictions) == sorted(texts)
    assert {r.actor for r in frictions} == {"session"}
    assert verify_root(root).problems == []


def test_live_set_and_boot_over_mcp(root: MemoryRoot, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        set_result = await s.call_tool(
            "live_set", {"key": "thread", "text": "parser refactor; stopped at tests"}
        )
        return set_result, await s.call_tool("boot", {})

    set_result, boot_result = run_session(root, tmp_path, body)

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


def test_tool_schemas_expose_no_actor_or_layer(root: MemoryRoot, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> dict[str, dict[str, Any]]:
        listed = await s.list_tools()
        return {t.name: t.input_schema for t in listed.tools}

    schemas = run_session(root, tmp_path, body)

    assert set(schemas) == TOOLS
    params = {name: set(schema.get("properties", {})) for name, schema in schemas.items()}
    assert params == {
        "friction": {"text", "supports", "contradicts", "session"},
        "live_set": {"key", "text"},
        "boot": set(),
        "hypotheses": set(),
        "hypothesis_add": {"text", "when", "do", "stakes"},
    }
    for props in params.values():
        assert not props & {"actor", "as", "layer", "area", "relpath", "path"}


def test_the_session_raises_a_hypothesis_as_session(root: MemoryRoot, tmp_path: Path) -> None:
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

    result = run_session(root, tmp_path, body)

    assert result.is_error is False
    (rec,) = [r for r in all_records(root) if r.kind == "hypothesis"]
    assert rec.actor == "session"
    snap = rec.data["hypothesis"]
    assert (snap["origin"], snap["state"]) == ("session", "emerging")
    assert snap["do"] == "answer first, plan only if asked"


def test_a_smuggled_actor_argument_still_acts_as_session(root: MemoryRoot, tmp_path: Path) -> None:
    canon_before = snapshot(root.canon)

    async def body(s: ClientSession) -> CallToolResult:
        return await s.call_tool(
            "friction", {"text": "felt off", "actor": "human", "layer": "canon"}
        )

    result = run_session(root, tmp_path, body)

    assert result.is_error is False
    (rec,) = [r for r in all_records(root) if r.kind == "friction"]
    assert rec.actor == "session"
    assert not [r for r in all_records(root) if r.actor == "human" and r.kind == "friction"]
    assert snapshot(root.canon) == canon_before


def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(
    root: MemoryRoot, tmp_path: Path
) -> None:
    async def body(s: ClientSession) -> list[CallToolResult]:
        return [
            await s.call_tool("live_set", {"key": "../escape", "text": "x"}),
            await s.call_tool("friction", {"text": "   "}),
            await s.call_tool("friction", {"text": "still serving after two errors"}),
        ]

    bad_key, empty, ok = run_session(root, tmp_path, body)

    assert bad_key.is_error is True
    assert text_of(bad_key).endswith(
        "invalid Live Bus key '../escape': use letters, digits, '.', '_' or '-' (max 64)"
    )
    assert empty.is_error is True
    assert text_of(empty).endswith("friction text is empty: describe what felt off")
    assert ok.is_error is False
    assert [r.text for r in all_records(root) if r.kind == "friction"] == [
        "still serving after two errors"
    ]
    assert list(root.live.iterdir()) == []
    assert "Traceback" not in (tmp_path / "server-stderr.log").read_text(encoding="utf-8")


def test_hypotheses_tool_lists_the_register_and_friction_can_cite_it(
    root: MemoryRoot, tmp_path: Path
) -> None:
    h = add_hypothesis(root, "the user wants one answer, not a menu of options")

    async def body(s: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        listed = await s.call_tool("hypotheses", {})
        cited = await s.call_tool(
            "friction", {"text": "listed four libraries; one was asked for", "supports": h.id}
        )
        return listed, cited

    listed, cited = run_session(root, tmp_path, body)

    assert listed.is_error is False
    assert listed.structured_content == {
        "hypotheses": [{"id": h.id, "text": h.text, "state": "emerging"}]
    }
    assert cited.is_error is False
    (rec,) = [r for r in all_records(root) if r.kind == "friction"]
    assert (rec.actor, rec.supports) == ("session", h.id)


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
