"""Canary rounds (certify.py): real runs under real bwrap, the probe's channels one by
one, and the deliberate leaks it must find and name.

The end-to-end runs use ``--sandbox-net off``: with the network on, an agent under bwrap
shares the host's loopback, and the canary port is found (as it should be).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.gitcmd import git
from evolving_agent.search.agents.base import TurnRequest
from evolving_agent.search.certify import (
    CANARY_PREFIX,
    PLANTED_FILE,
    PROBE_SOURCE,
    Plot,
    ProbeAgent,
    digest,
    judge_report,
    new_token,
    plant,
    remove_leftovers,
)
from evolving_agent.search.rundir import RunDir, SearchSummary
from evolving_agent.search.runner import run_search
from evolving_agent.search.sandbox import Sandbox
from tests.helpers.search import (
    PY,
    config,
    isolated,
    make_candidate,
    make_task,
    records,
    write_agent,
    write_scorer,
)

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
SHAPE = re.compile(re.escape(CANARY_PREFIX) + r"[0-9a-f]{40}")
# What every probe must have searched: each channel counted at least once.
CHANNELS = ("environment variables", "processes", "files seen", "files read", "git objects")


BUMP = "write(value() + 1)\n"  # logs nothing: under bwrap its folder is read-only
BUMP_INLINE = (  # the same, as a one-line program (no script, so no script folder)
    "import pathlib as p; f = p.Path('value.txt'); f.write_text(str(float(f.read_text()) + 1))"
)


def _setup(tmp: Path, agent: str = BUMP) -> dict[str, Any]:
    make_candidate(tmp)
    make_task(tmp)
    return {"score_cmd": write_scorer(tmp), "agent_cmd": write_agent(tmp, agent)}


def _certificates(run_dir: Path) -> list[dict[str, Any]]:
    rounds: list[dict[str, Any]] = json.loads((run_dir / "certify.json").read_text())["rounds"]
    return rounds


def _no_canary_left(run_dir: Path) -> None:
    """No planted file remains and no file of the run holds a canary (certify.json keeps
    digests only)."""
    for cert in _certificates(run_dir):
        for item in cert["planted"]:
            if item["where"].startswith("/") and not item["where"].startswith("/proc"):
                assert not Path(item["where"]).exists(), item
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert not SHAPE.search(path.read_bytes().decode(errors="replace")), path
    assert not (run_dir / PLANTED_FILE).exists()


# -- real runs under bwrap ---------------------------------------------------------------


# A team run under bwrap, two rounds of four turns, with canary rounds or without.
UNDER_BWRAP = {"agents": 2, "rounds": 2, "turns": 4, "sandbox": "bwrap", "sandbox_net": False}


def _scores(run_dir: Path) -> list[Any]:
    return [(r["round"], r["agent"], r["score"], r["feedback"]) for r in records(run_dir)]


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> SearchSummary:
    """The certified run under bwrap, shared: one test reads its certificates, the other
    compares its scores with the same run uncertified."""
    tmp = tmp_path_factory.mktemp("certified")
    with isolated(tmp):
        return run_search(config(tmp, **_setup(tmp), **UNDER_BWRAP, certify=True))


@needs_bwrap
@pytest.mark.slow
def test_a_probe_that_tries_every_channel_finds_none_under_bwrap_on_local(
    certified: SearchSummary,
) -> None:
    summary = certified
    assert summary.certify is not None
    assert summary.certify["certified"] is True, summary.certify
    assert summary.certify["line"].startswith("forgetting certified: 0/")
    assert summary.certify["line"].endswith("canaries found in 2 rounds (24 a round)")
    certs = _certificates(summary.run_dir)
    assert [c["round"] for c in certs] == [1, 2]
    for cert in certs:
        assert cert["canaries"] >= 20 and cert["found"] == [] and cert["error"] is None
        for channel in CHANNELS:
            assert cert["checked"].get(channel, 0) > 0, (channel, cert["checked"])
        digests = [p["digest"] for p in cert["planted"]]
        assert len(set(digests)) == len(digests)  # unique
    places = {p["place"] for p in certs[1]["planted"]}
    for needed in (
        "the run directory", "transcripts and logs (agent state)", "a teammate's workspace",
        "an earlier round's workspace", "the scorer's files and expected outputs",
        "earlier candidates (git objects)", "a temp folder", "another process's environment",
        "another process's command line", "another process's open file", "a loopback port",
        "earlier scores and feedback (in the records the next prompt is built from)",
    ):  # fmt: skip
        assert needed in places
    # Round 2's canaries are not round 1's.
    assert not {p["digest"] for p in certs[0]["planted"]} & {
        p["digest"] for p in certs[1]["planted"]
    }
    _no_canary_left(summary.run_dir)
    # The probe is no turn: the log holds the 4 turns, and they scored as usual.
    assert [r["score"] for r in records(summary.run_dir)] == [1.0, 1.0, 2.0, 2.0]
    report = subprocess.run(
        [PY, "-m", "evolving_agent", "search", "report", str(summary.run_dir)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert report.returncode == 0
    md = (summary.run_dir / "report.md").read_text()
    assert "## Forgetting\n\nforgetting certified: 0/" in md


@needs_bwrap
@pytest.mark.slow
def test_certify_does_not_change_a_single_score(certified: SearchSummary, tmp_path: Path) -> None:
    run_search(config(tmp_path, **_setup(tmp_path), **UNDER_BWRAP, certify=False))
    assert _scores(certified.run_dir) == _scores(tmp_path / "run")


@needs_bwrap
@pytest.mark.slow
def test_a_path_passed_with_sandbox_ro_is_found_and_named(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    # An agent with no script of its own (its script's folder, here tmp_path, is bound
    # with every hidden path inside it masked: a --sandbox-ro inside it stays masked).
    setup["agent_cmd"] = f'{PY} -c "{BUMP_INLINE}"'
    judge = tmp_path / "judge"  # the scorer's folder, made visible on purpose
    cfg = config(
        tmp_path, **setup, policy="forget", rounds=1, turns=1, sandbox="bwrap",
        sandbox_net=False, sandbox_ro=[str(judge)], certify=True,
    )  # fmt: skip
    summary = run_search(cfg)
    assert summary.certify is not None and summary.certify["certified"] is False
    found = summary.certify["found"]
    assert found and {f["place"] for f in found} == {"the scorer's files and expected outputs"}
    for item in found:
        assert item["found"] == item["planted"] and item["found"].startswith(str(judge))
        assert item["channel"] == "file"
    assert summary.certify["line"].startswith(f"forgetting not certified: {len(found)}/")
    _no_canary_left(summary.run_dir)


@pytest.mark.slow
def test_without_a_sandbox_it_reports_what_it_found_and_cannot_certify(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    cfg = config(
        tmp_path, **setup, policy="single", turns=1, sandbox="none", certify=True,
        turn_timeout=20,
    )  # fmt: skip
    summary = run_search(cfg)  # no refusal: the run runs
    assert summary.certify is not None and summary.certify["certified"] is False
    channels = {f["channel"] for f in summary.certify["found"]}
    # By absolute path and through /proc, everything is in reach.
    assert {"file", "/proc environ", "/proc cmdline", "/proc fd", "network"} <= channels
    places = {f["place"] for f in summary.certify["found"]}
    assert {"the run directory", "the scorer's files and expected outputs"} <= places
    _no_canary_left(summary.run_dir)


# -- the probe's channels, one by one (real bwrap) ---------------------------------------


def _request(workspace: Path, sandbox: Sandbox, env: dict[str, str]) -> TurnRequest:
    return TurnRequest(
        workspace=workspace, prompt="probe", session_id="s", new_session=True, round=2,
        agent=1, turn=1, timeout=120, env=env, sandbox=sandbox,
    )  # fmt: skip


def _workspace(tmp: Path) -> Path:
    ws = tmp / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "a.txt").write_text("start\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "start", identity=True)
    return ws


@needs_bwrap
@pytest.mark.slow
def test_leaks_left_in_the_workspace_and_environment_are_found_by_channel(tmp_path: Path) -> None:
    """A file left in the candidate, an unreachable packed git object of its own
    repository and an environment variable passed through: each named, with where."""
    ws = _workspace(tmp_path)
    plot = Plot()
    in_file = plot.add("an earlier candidate", "a file left in the candidate")
    in_git = plot.add("an earlier candidate", "an unreachable packed object")
    in_env = plot.add("the harness's environment", "a variable passed through")
    unseen = plot.add("the run directory", str(tmp_path / "hidden"))
    (ws / "notes").mkdir()
    (ws / "notes" / "left.txt").write_text(f"kept from before: {in_file}\n")
    blob = git(ws, "hash-object", "-w", "--stdin", input=f"{in_git}\n".encode()).text
    git(ws, "repack", "-a", "-d", "-q")  # packed, and reachable from nothing
    (tmp_path / "hidden").write_text(unseen)
    since = os.stat(ws / "notes" / "left.txt").st_mtime - 5
    agent = ProbeAgent(agent_cmd=None, since=since, budget=100)
    result = agent.run_turn(
        request=_request(ws, Sandbox(kind="bwrap", network=False), {"LEAKED": in_env})
    )
    cert = judge_report(2, plot, result)
    assert cert.error is None, result.error
    where = {f.planted: (f.channel, f.found) for f in cert.findings}
    assert where["a file left in the candidate"] == ("file", str(ws / "notes" / "left.txt"))
    assert where["an unreachable packed object"][0] == "git object"
    assert blob in where["an unreachable packed object"][1]
    assert where["a variable passed through"] == ("environment", "environment variable LEAKED")
    assert str(tmp_path / "hidden") not in where  # outside the sandbox: not in reach
    lines = [f.line(2) for f in cert.findings]
    assert (
        f"round 2: canary from an earlier candidate (planted at a file left in the candidate) "
        f"found by file at {ws / 'notes' / 'left.txt'}"
    ) in lines


@needs_bwrap
@pytest.mark.slow
def test_the_probe_reads_a_deleted_file_held_open_by_another_process_only_without_bwrap(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    plot = Plot()
    token = plot.add("another process's open file", "a deleted file")
    held = tmp_path / "held"
    held.write_text(token)
    holder = subprocess.Popen(
        [PY, "-c", f"import sys; f = open({str(held)!r}); print('ok', flush=True); sys.stdin.read()"],  # noqa: E501
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ok\n"
        held.unlink()
        # A short walk: /proc, the channel under test, is searched before the walk.
        agent = ProbeAgent(agent_cmd=None, since=time.time() - 5, budget=3)
        seen = judge_report(1, plot, agent.run_turn(request=_request(ws, Sandbox(), {})))
        confined = judge_report(
            1, plot,
            agent.run_turn(request=_request(ws, Sandbox(kind="bwrap", network=False), {})),
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert any(
        f.channel == "/proc fd" and f.found.startswith(f"/proc/{holder.pid}/fd/")
        for f in seen.findings
    )
    assert confined.findings == () and confined.error is None


# -- planting ----------------------------------------------------------------------------


def test_canaries_are_unique_unguessable_and_only_digests_are_recorded(tmp_path: Path) -> None:
    tokens = {new_token() for _ in range(2000)}
    assert len(tokens) == 2000
    assert all(SHAPE.fullmatch(t) for t in tokens)
    assert digest("x") != digest("y") and len(digest("x")) == 64


def test_a_killed_harness_leaves_nothing_that_the_next_start_does_not_remove(
    tmp_path: Path,
) -> None:
    setup = _setup(tmp_path)
    cfg = config(tmp_path, **setup, policy="forget", rounds=1, turns=1, sandbox="none")
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    (run.path / "rounds").mkdir()
    cfg = cfg.model_copy(update={"out": run.path, "workdir": tmp_path})
    plot = plant(run, cfg, 1, k=24)
    try:
        assert len(plot.canaries) >= 24
        files = [
            Path(c.where)
            for c in plot.canaries
            if not c.where.startswith("/proc") and Path(c.where).is_file()
        ]
        assert files and all(SHAPE.search(f.read_text()) for f in files)
        # The record of what to remove names paths, never a token.
        assert not SHAPE.search((run.path / PLANTED_FILE).read_text())
        remove_leftovers(run)  # as a new harness does after a SIGKILL
        assert not any(f.exists() for f in files)
        assert not (run.path / PLANTED_FILE).exists()
    finally:
        plot.remove()


# -- the probe's matcher (Hypothesis) ------------------------------------------------------


def _probe_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("certify_probe", PROBE_SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("certify_probe", module)
    spec.loader.exec_module(module)
    return module


PROBE = _probe_module()


@settings(max_examples=200, deadline=None)
@given(
    before=st.binary(max_size=200),
    after=st.binary(max_size=200),
    body=st.text("0123456789abcdef", min_size=40, max_size=40),
)
def test_a_canary_is_found_wherever_it_sits_in_any_bytes(
    before: bytes, after: bytes, body: str
) -> None:
    token = CANARY_PREFIX + body
    probe = PROBE.Probe(0.0, float("inf"))
    probe.hit(before + token.encode() + after, "file", "f")
    assert (token, "f") in probe.found


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=400))
def test_bytes_without_a_canary_never_report_one(data: bytes) -> None:
    probe = PROBE.Probe(0.0, float("inf"))
    probe.hit(data, "file", "f")
    assert all(SHAPE.fullmatch(token) for token, _ in probe.found)
    if CANARY_PREFIX.encode() not in data:
        assert probe.found == {}


def test_the_probe_source_never_matches_itself() -> None:
    assert not SHAPE.search(PROBE_SOURCE.read_text())


def _tree(*roots: Path) -> dict[str, bytes | None]:
    """Every path under ``roots`` with its content (None for a folder)."""
    found: dict[str, bytes | None] = {}
    for root in roots:
        for path in [root, *root.rglob("*")] if root.exists() else []:
            found[str(path)] = path.read_bytes() if path.is_file() else None
    return found


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(
    agents=st.integers(1, 4),
    number=st.integers(1, 3),
    k=st.integers(20, 40),
    best=st.booleans(),
)
def test_planting_then_removing_leaves_every_folder_as_it_was(
    tmp_path_factory: pytest.TempPathFactory, agents: int, number: int, k: int, best: bool
) -> None:
    _plant_and_remove(tmp_path_factory.mktemp("plant"), agents, number, k, best)


def test_removing_an_earlier_rounds_canary_commit_leaves_no_empty_git_folder(
    tmp_path: Path,
) -> None:
    # Shrunk by Hypothesis: the objects' fan-out folders (objects/c2 …) and
    # refs/ea-canary stayed behind, empty, after the commit was removed.
    _plant_and_remove(tmp_path, agents=1, number=2, k=20, best=False)


def _plant_and_remove(tmp: Path, agents: int, number: int, k: int, best: bool) -> None:
    setup = _setup(tmp)
    cfg = config(
        tmp, **setup, policy="forget-team", agents=agents, rounds=3, turns=12, sandbox="none"
    )
    run = RunDir(tmp / "run")
    for m in range(1, number + 1):  # the round repositories a run has made by now
        repo = run.round_dir(m) / "repo"
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        (repo / "value.txt").write_text(f"{m}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"round {m}", identity=True)
    if best:
        (run.path / "best").mkdir()
        (run.path / "best" / "value.txt").write_text("1\n")
    from evolving_agent.search.private import private_root

    roots = (run.path, private_root(run.path), tmp / "judge")
    before = _tree(*roots)
    refs = {m: git(run.round_dir(m) / "repo", "for-each-ref").text for m in range(1, number + 1)}
    plot = plant(run, cfg, number, k=k)
    try:
        assert len(plot.canaries) >= k
        assert len({c.token for c in plot.canaries}) == len(plot.canaries)
        planted = {c.place for c in plot.canaries}
        assert "the scorer's files and expected outputs" in planted
        assert ("earlier candidates (git objects)" in planted) == (number > 1)
        assert sum(c.place == "a teammate's workspace" for c in plot.canaries) >= max(agents - 1, 1)
    finally:
        plot.remove()
    (run.path / PLANTED_FILE).unlink(missing_ok=True)  # certify_round's step after remove
    assert _tree(*roots) == before
    for m in range(1, number + 1):
        repo = run.round_dir(m) / "repo"
        assert git(repo, "for-each-ref").text == refs[m]
        # No object of a canary is left to fetch: every object holds no canary.
        objects = git(repo, "cat-file", "--batch-all-objects", "--batch").stdout
        assert not SHAPE.search(objects.decode(errors="replace"))
    for canary in plot.canaries:
        if canary.where.startswith("/") and not canary.where.startswith("/proc"):
            assert not Path(canary.where).exists()


def test_agents_that_run_outside_bwrap_are_probed_outside_it(tmp_path: Path) -> None:
    from evolving_agent.search.certify import probe_sandbox

    setup = _setup(tmp_path)
    confined = Sandbox(kind="bwrap", network=False)
    claude = config(tmp_path, **setup, agent="claude", sandbox="bwrap")
    command = config(tmp_path, **setup, sandbox="bwrap")
    assert probe_sandbox(claude, confined).kind == "none"
    assert probe_sandbox(command, confined) == confined
