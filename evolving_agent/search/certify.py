"""Certified forgetting: canaries planted at each round boundary, a probe that hunts them.

With ``search run --certify`` (or ``search certify RUN`` afterwards) the harness, at the
start of every round, plants K unique canaries -- ``EA-CANARY-`` and 40 random hex
digits, new each round -- in everything that round's agents must not see: the run
directory, earlier scores and feedback (beside ``log.jsonl``, and in the feedback the
next prompt is built from), transcripts and agent state, earlier candidates (``best/``,
earlier rounds' repositories as files and as git objects), teammates' and earlier
rounds' workspaces, the scorer's folders and the judge's sealed copies, the temp folders
and ``$HOME``, and a stand-in process of the host (its command line, environment, an
open deleted file and a loopback port).  Then a probe (``data/certify_probe.py``) runs as
agent 1 would run its first turn of the round -- the same executor, sandbox, binds,
environment and prompt -- and reports every canary-shaped string it can reach, and
where.  The canaries are removed before any agent turn or score, so they never change
a score or reach what later rounds legitimately see.

Only SHA-256 digests of the canaries are written (``certify.json`` in the run
directory); the tokens live in this process and in the planted places while the probe
runs.  A round is certified when the probe ran to the end and found 0 of K; the run is
certified when every round was and agents and scorers ran under bwrap.  Without a
sandbox the probe still runs and the report names what it found.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import json
import os
import secrets
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolving_agent.gitcmd import GitError, git
from evolving_agent.process import run_process, start_background
from evolving_agent.search.agents.base import Agent, TurnRequest, TurnResult
from evolving_agent.search.agents.command import last_json_line, turn_env
from evolving_agent.search.config import SearchConfig
from evolving_agent.search.private import private_root, workspace_path
from evolving_agent.search.reducer import RoundPlan
from evolving_agent.search.rundir import RunDir, TurnRecord, write_json_atomic
from evolving_agent.search.sandbox import Sandbox, isolation
from evolving_agent.search.schedule import next_step, run_rules
from evolving_agent.search.turn import TurnJob, TurnPlace, turn_request

CERTIFY_FILE = "certify.json"
PLANTED_FILE = "certify-planted.json"  # paths only: what a killed harness left to remove
CANARY_PREFIX = "EA-CAN" + "ARY-"  # split: this source is not a canary
PROBE_SOURCE = Path(__file__).parents[1] / "data" / "certify_probe.py"
_PROBE_VAR = "EA_PROBE_SOURCE"
_FILE_NAME = ".ea-canary"
PROBE_TIMEOUT = 900.0  # seconds; the probe stops its walk at 80% of it


def new_token() -> str:
    """A canary: the public prefix and 160 random bits."""
    return CANARY_PREFIX + secrets.token_hex(20)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Canary:
    token: str
    place: str  # what a later round must not see
    where: str  # where it was planted


@dataclass
class Plot:
    """The canaries of one boundary and how to take every one of them away again."""

    canaries: list[Canary] = field(default_factory=list)
    feedback_token: str | None = None  # planted in the records the next prompt reads
    undo: list[Callable[[], None]] = field(default_factory=list)

    def add(self, place: str, where: str, token: str | None = None) -> str:
        token = token or new_token()
        self.canaries.append(Canary(token, place, where))
        return token

    def remove(self) -> None:
        for step in reversed(self.undo):
            with contextlib.suppress(OSError, GitError):
                step()
        self.undo.clear()


# -- planting -------------------------------------------------------------------------


def scorer_folders(config: SearchConfig, run: RunDir) -> list[Path]:
    """The folders an agent must not see because the scorer lives there."""
    hidden = config.agent_confinement(run.path).hide
    mine = {str(run.path.resolve()), str(private_root(run.path))}
    folders = [Path(h) for h in hidden if h not in mine]
    return [f for f in folders if f.is_dir()] + [run.judge_dir]


def plant(run: RunDir, config: SearchConfig, number: int, *, k: int) -> Plot:
    """Plant at least ``k`` canaries for the start of round ``number``.

    Every path and ref is written to ``certify-planted.json`` before the first canary,
    so a harness killed mid-way leaves nothing the next one does not remove."""
    plot = Plot()
    try:
        _plant_all(plot, run, config, number, k)
    except BaseException:
        plot.remove()
        _forget(run)
        raise
    return plot


def _plant_all(plot: Plot, run: RunDir, config: SearchConfig, number: int, k: int) -> None:
    root = private_root(run.path)
    agents = config.effective_agents
    earlier = [run.round_dir(m) / "repo" for m in range(1, number) if _is_repo(run.round_dir(m))]
    files: list[tuple[str, Path]] = [
        ("the run directory", run.path),
        ("earlier scores and feedback (beside log.jsonl)", run.path / "rounds"),
        ("transcripts and logs (agent state)", run.agent_state),
        ("the harness's private folder", root),
    ]
    if run.best.is_dir():
        files.append(("earlier candidates (best/)", run.best))
    files += [("earlier candidates (a round's repository)", r) for r in earlier]
    for agent in range(2, max(agents, 2) + 1):
        files.append(("a teammate's workspace", workspace_path(root, number, agent)))
    if number > 1:
        files.append(("an earlier round's workspace", workspace_path(root, number - 1, 1)))
    files += [("the scorer's files and expected outputs", f) for f in scorer_folders(config, run)]
    temps = {tempfile.gettempdir(), os.environ.get("TMPDIR") or tempfile.gettempdir(), "/var/tmp"}
    files += [("a temp folder", Path(t)) for t in sorted(temps) if os.path.isdir(t)]
    home = os.environ.get("HOME")
    if home and os.path.isdir(home) and home != "/":
        files.append(("the user's home", Path(home)))
    # The rest of the K: deeper in the same places (a walk must reach nested folders).
    others = len(earlier) + 5  # git commits, the stand-in process's four, the feedback
    deeper = [
        (place, folder / f"{_FILE_NAME}-dir" / f"deeper-{n}")
        for n, (place, folder) in zip(range(k - len(files) - others), itertools.cycle(files))
    ]
    spots = [(p, f / f"{_FILE_NAME}-{secrets.token_hex(4)}") for p, f in files + deeper]
    refs = [(repo, f"refs/ea-canary/{secrets.token_hex(4)}") for repo in earlier]
    made = {_topmost_missing(path.parent) for _, path in spots} - {None}
    _remember(run, [str(p) for _, p in spots] + sorted(str(m) for m in made), refs)
    for place, path in spots:
        _plant_file(plot, place, path)
    for repo, ref in refs:
        _plant_object(plot, repo, ref)
    _plant_process(plot)
    plot.feedback_token = plot.add(
        "earlier scores and feedback (in the records the next prompt is built from)",
        "the feedback of the last records before this round",
    )


def _is_repo(folder: Path) -> bool:
    return (folder / "repo" / ".git").is_dir()


def _topmost_missing(folder: Path) -> Path | None:
    missing = None
    for level in [folder, *folder.parents]:
        if level.exists():
            return missing
        missing = level
    return missing


def _plant_file(plot: Plot, place: str, path: Path) -> None:
    top = _topmost_missing(path.parent)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = plot.add(place, str(path))
    path.write_text(f"{token}\n")
    plot.undo.append(lambda: path.unlink(missing_ok=True))
    if top is not None:
        plot.undo.append(_remover(top))


def _remover(folder: Path) -> Callable[[], None]:
    return lambda: shutil.rmtree(folder, ignore_errors=True)


def _plant_object(plot: Plot, repo: Path, ref: str) -> None:
    """A commit in an earlier round's repository, on a ref of its own; removed with its
    loose objects afterwards (nothing of it is left to fetch or pack)."""
    token = plot.add("earlier candidates (git objects)", f"a commit on refs/ea-canary in {repo}")
    objects = repo / ".git" / "objects"
    had = {p.name for p in objects.iterdir()} if objects.is_dir() else set()
    blob = git(repo, "hash-object", "-w", "--stdin", input=f"{token}\n".encode()).text
    tree = git(repo, "mktree", input=f"100644 blob {blob}\tcanary.txt\n".encode()).text
    commit = git(repo, "commit-tree", tree, "-m", "canary", identity=True).text
    fanout = {sha[:2] for sha in (blob, tree, commit)}
    git(repo, "update-ref", ref, commit)

    def undo() -> None:
        git(repo, "update-ref", "-d", ref, check=False)
        for sha in (commit, tree, blob):
            (objects / sha[:2] / sha[2:]).unlink(missing_ok=True)
        # Folders git made for them: empty again, and gone (no trace of a canary ref).
        for folder in [*(objects / d for d in fanout - had), repo / ".git" / "refs" / "ea-canary"]:
            with contextlib.suppress(OSError):
                folder.rmdir()

    plot.undo.append(undo)


_SENTINEL = r"""
import ctypes, os, socket, sys, tempfile
ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG: dies with the harness
if os.getppid() != int(sys.argv[2]):
    sys.exit(1)  # the harness died before the line above
fd_token, port_token = sys.stdin.readline().split()
fd, path = tempfile.mkstemp(prefix="ea-canary-")
os.write(fd, (fd_token + "\n").encode()); os.unlink(path)
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(16)
print(srv.getsockname()[1], flush=True)
while True:
    conn, _ = srv.accept()
    try:
        conn.sendall((port_token + "\n").encode())
    finally:
        conn.close()
"""


def _plant_process(plot: Plot) -> None:
    """A process of the host holding canaries in its command line, environment, an open
    (deleted) file and a loopback port: what /proc and the network can reveal."""
    argv_token, env_token, fd_token, port_token = (new_token() for _ in range(4))
    env = {**os.environ, "EA_CANARY_HELD": env_token}
    helper = start_background(
        [sys.executable, "-c", _SENTINEL, argv_token, str(os.getpid())],
        env=env,
        input=f"{fd_token} {port_token}\n".encode(),
    )
    plot.undo.append(helper.stop)
    port = helper.first_line  # it prints its port once it listens
    if not port.isdigit():
        raise OSError("the canary process did not start")
    proc = helper.proc
    pid = proc.pid
    plot.add("another process's command line", f"/proc/{pid}/cmdline", argv_token)
    plot.add("another process's environment", f"/proc/{pid}/environ", env_token)
    plot.add("another process's open file", f"/proc/{pid}/fd (a deleted file)", fd_token)
    plot.add("a loopback port", f"tcp 127.0.0.1:{port}", port_token)


def _remember(run: RunDir, paths: list[str], refs: list[tuple[Path, str]]) -> None:
    write_json_atomic(
        run.path / PLANTED_FILE, {"paths": paths, "refs": [[str(r), ref] for r, ref in refs]}
    )


def _forget(run: RunDir) -> None:
    (run.path / PLANTED_FILE).unlink(missing_ok=True)


def remove_leftovers(run: RunDir) -> None:
    """Remove what a harness killed mid-probe planted (the paths were written first)."""
    path = run.path / PLANTED_FILE
    try:
        data = json.loads(path.read_text())
        paths = data.get("paths", [])
    except (OSError, ValueError, AttributeError):
        return
    for item in paths:
        target = Path(item)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
    for repo, ref in data.get("refs", []):
        if Path(repo).is_dir():
            git(Path(repo), "update-ref", "-d", ref, check=False)
    _forget(run)


def planted_records(records: list[TurnRecord], token: str | None) -> list[TurnRecord]:
    """The records with the canary in every feedback: a prompt built from an earlier
    round's feedback would carry it into the agent's environment."""
    if token is None:
        return records
    return [r.model_copy(update={"feedback": f"{r.feedback}\n{token}"}) for r in records]


# -- the probe ------------------------------------------------------------------------


class ProbeAgent(Agent):
    """The probe as a ``command`` agent: started the way the run's agent is (its sandbox,
    its binds -- the agent command's words ride along so the same files are bound --
    its environment and prompt), with the whole report kept."""

    name = "canary-probe"

    def __init__(self, *, agent_cmd: str | None, since: float, budget: float) -> None:
        try:
            words = shlex.split(agent_cmd) if agent_cmd else []
        except ValueError:  # unbalanced quotes: the shell's business, not the binds'
            words = (agent_cmd or "").split()
        code = f"import os; exec(compile(os.environ[{_PROBE_VAR!r}], 'probe', 'exec'))"
        self.command = shlex.join(
            [sys.executable, "-c", code, "--since", f"{since:.3f}", "--budget", f"{budget:g}",
             "--as", *words]
        )  # fmt: skip
        self.source = PROBE_SOURCE.read_text(encoding="utf-8")

    @classmethod
    def from_settings(cls, settings: Any) -> Agent:  # pragma: no cover - never by name
        raise NotImplementedError

    def run_turn(self, *, request: TurnRequest) -> TurnResult:
        env = {**turn_env(request), _PROBE_VAR: self.source}
        done = run_process(
            request.sandbox.agent_argv(self.command, workspace=request.workspace),
            cwd=request.workspace,
            timeout=request.timeout,
            env=request.sandbox.environment(env),
            replace_env=True,
        )
        report = last_json_line(done.stdout)
        if report.get("probe") != 1:
            tail = (done.stderr or done.stdout)[-300:].strip()
            return TurnResult(error=f"the probe gave no report (exit {done.returncode}): {tail}")
        return TurnResult(session_id=request.session_id, extra={"probe": report})


def probe_sandbox(config: SearchConfig, sandbox: Sandbox) -> Sandbox:
    """The probe is confined as the run's agents are: agents that run outside bwrap
    (Claude Code, Codex) are probed outside it too."""
    assert config.sandbox is not None
    if isolation(config.sandbox, config.agent) == "bwrap":
        return sandbox
    return dataclasses.replace(sandbox, kind="none")


@dataclass(frozen=True)
class Finding:
    place: str
    planted: str
    found: str
    channel: str

    def line(self, number: int) -> str:
        return (
            f"round {number}: canary from {self.place} (planted at {self.planted}) "
            f"found by {self.channel} at {self.found}"
        )


@dataclass(frozen=True)
class RoundCertificate:
    round: int
    canaries: int
    findings: tuple[Finding, ...]
    checked: dict[str, int]
    error: str | None = None  # the probe did not finish: the round is not certified
    foreign: int = 0  # canary-shaped strings of no canary of this run (another run's)

    @property
    def certified(self) -> bool:
        return self.error is None and not self.findings and not self.incomplete

    @property
    def incomplete(self) -> bool:
        return any("budget" in key for key in self.checked)

    def dump(self, planted: list[Canary]) -> dict[str, Any]:
        return {
            "round": self.round,
            "canaries": self.canaries,
            "planted": [{"digest": digest(c.token), "place": c.place, "where": c.where}
                        for c in planted],
            "found": [dataclasses.asdict(f) for f in self.findings],
            "foreign": self.foreign,
            "checked": self.checked,
            "error": self.error,
        }  # fmt: skip


def judge_report(number: int, plot: Plot, result: TurnResult) -> RoundCertificate:
    """Which planted canaries the probe's report names, and where it found them."""
    by_token = {c.token: c for c in plot.canaries}
    report = result.extra.get("probe") if isinstance(result.extra, dict) else None
    if result.error or not isinstance(report, dict):
        return RoundCertificate(number, len(plot.canaries), (), {}, result.error or "no report")
    findings: list[Finding] = []
    foreign = 0
    for item in report.get("found", []):
        canary = by_token.get(str(item.get("token")))
        if canary is None:
            foreign += 1
            continue
        findings.append(Finding(canary.place, canary.where, str(item.get("where")),
                                str(item.get("channel"))))  # fmt: skip
    checked = {str(k): int(v) for k, v in dict(report.get("checked", {})).items()}
    return RoundCertificate(number, len(plot.canaries), tuple(findings), checked, None, foreign)


@dataclass(frozen=True)
class ProbeSite:
    """Where round ``plan.number``'s probe runs: what the round's first turn would get."""

    config: SearchConfig
    run: RunDir
    executor: Any  # executors.base.Executor (not imported: executors import turn)
    sandbox: Sandbox
    repo: Path
    plan: RoundPlan
    workspace: Path
    request: Callable[[list[TurnRecord]], TurnRequest]  # the agent-1 request, from records


def probe_site(
    config: SearchConfig,
    run: RunDir,
    executor: Any,
    sandbox: Sandbox,
    task: str,
    *,
    repo: Path,
    plan: RoundPlan,
    workspace: Path,
    env: dict[str, str],
) -> ProbeSite:
    """Where round ``plan.number``'s probe runs: agent 1's first turn of the round, its
    request built by the reducer from the records (the canary in their feedback)
    exactly as the round itself builds it."""
    rules = run_rules(config)

    def request(records: list[TurnRecord]) -> TurnRequest:
        step = next_step([r for r in records if r.round < plan.number], plan, rules)
        slot = next((s for s in step.slots if s.agent == 1), None)
        if slot is None:
            raise ValueError(f"round {plan.number} plans no turn to probe")
        return turn_request(
            config, task=task, decision=slot.decision, last=slot.last, workspace=workspace,
            round=plan.number, agent=slot.agent, turn=slot.turn, state_dir=run.agent_state,
            env=env, sandbox=sandbox,
        )  # fmt: skip

    return ProbeSite(config, run, executor, sandbox, repo, plan, workspace, request)


def certify_round(site: ProbeSite, records: list[TurnRecord], *, k: int) -> RoundCertificate:
    """Plant, probe as agent 1's first turn of the round would run, remove, record."""
    run = site.run
    number = site.plan.number
    since = time.time() - 1.0  # a second of slack: file times may be rounded
    plot = plant(run, site.config, number, k=k)
    try:
        request = site.request(planted_records(records, plot.feedback_token))
        # The probe's time is its own, not an agent turn's: a walk cut short by a short
        # --turn-timeout would leave the round uncertified.
        timeout = max(request.timeout, PROBE_TIMEOUT)
        sandbox = probe_sandbox(site.config, site.sandbox)
        request = dataclasses.replace(request, sandbox=sandbox, timeout=timeout)
        budget = timeout * 0.8
        agent = ProbeAgent(agent_cmd=site.config.agent_cmd, since=since, budget=budget)
        job = TurnJob(request=request, base=site.plan.start_commit, message="canary probe")
        place = TurnPlace(site.repo, site.plan.start_commit, f"probe-r{number:02d}")
        outcome = site.executor.run_turn(agent, job, place)
        certificate = judge_report(number, plot, outcome.result)
    finally:
        plot.remove()
        # The agent's first turn builds its workspace afresh.
        shutil.rmtree(site.workspace, ignore_errors=True)
        _forget(run)
    record(run, certificate, plot.canaries)
    return certificate


def record(run: RunDir, certificate: RoundCertificate, planted: list[Canary]) -> None:
    path = run.path / CERTIFY_FILE
    data = read_certificates(run.path)
    rounds = [r for r in data.get("rounds", []) if r.get("round") != certificate.round]
    rounds.append(certificate.dump(planted))
    rounds.sort(key=lambda r: int(r["round"]))
    write_json_atomic(path, {"schema_version": 1, "rounds": rounds})


def read_certificates(run_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((run_dir / CERTIFY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def certified_rounds(run_dir: Path) -> set[int]:
    return {int(r["round"]) for r in read_certificates(run_dir).get("rounds", [])}


# -- what the summary and the report say ---------------------------------------------


def verdict(run_dir: Path, level: str | None) -> dict[str, Any] | None:
    """summary.json's ``certify``: None when no round was probed."""
    rounds = read_certificates(run_dir).get("rounds", [])
    if not rounds:
        return None
    found = [dict(f, round=r["round"]) for r in rounds for f in r.get("found", [])]
    failed = [r["round"] for r in rounds if r.get("error")]
    partial = [r["round"] for r in rounds if any("budget" in k for k in r.get("checked", {}))]
    per_round = sorted({int(r["canaries"]) for r in rounds})
    planted = sum(int(r["canaries"]) for r in rounds)
    sandboxed = level == "bwrap"
    ok = not found and not failed and not partial and sandboxed
    head = "forgetting certified" if ok else "forgetting not certified"
    each = "/".join(map(str, per_round))
    line = f"{head}: {len(found)}/{planted} canaries found in {len(rounds)} rounds ({each} a round)"
    if not found and not sandboxed:
        line += f" (isolation {level}: agents ran outside bwrap, so the run is not certified)"
    if failed:
        line += f"; the probe failed in round(s) {', '.join(map(str, failed))}"
    if partial:
        line += f"; the probe ran out of time in round(s) {', '.join(map(str, partial))}"
    return {
        "certified": ok,
        "canaries": planted,
        "canaries_per_round": per_round,
        "rounds": len(rounds),
        "found": found,
        "line": line,
        "errors": {str(r["round"]): r["error"] for r in rounds if r.get("error")},
    }


def report_lines(run_dir: Path, level: str | None) -> list[str]:
    """The report's "Forgetting" section (empty when no round was probed)."""
    result = verdict(run_dir, level)
    if result is None:
        return []
    lines = ["## Forgetting", "", result["line"] + ".", ""]
    for item in result["found"]:
        lines.append(
            f"- round {item['round']}: canary from {item['place']} (planted at "
            f"{item['planted']}) found by {item['channel']} at {item['found']}"
        )
    for number, error in result["errors"].items():
        lines.append(f"- round {number}: the probe failed: {error}")
    rounds = read_certificates(run_dir).get("rounds", [])
    checked: dict[str, int] = {}
    for r in rounds:
        for key, value in r.get("checked", {}).items():
            checked[key] = checked.get(key, 0) + int(value)
    if result["found"] or result["errors"]:
        lines.append("")
    lines.append(
        "Searched (all rounds): "
        + ", ".join(f"{key} {value}" for key, value in sorted(checked.items()))
        + ". What this does and does not promise: docs/search.md, 'Certified forgetting'."
    )
    return [*lines, ""]
