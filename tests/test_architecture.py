"""The architecture is a checked contract, not a convention.

``.importlinter`` holds five import-linter contracts: the memory stack imports
downward only (cli > demo > integrations > jobs > review > reflectors > memory > paths >
process | gitcmd | fsio > errors | results), inside memory each room imports only the rooms
below it (sync > boot | verify > ops > authority | root > evidence > canon > base, every
module in one of them), the reflector contract (the interfaces, the answer and context
models, the names, the settings) imports no backend and no check, search never imports the
memory side, and no two sibling modules or packages import each other.  The first test
runs them on the real package (so plain ``pytest``, the README's test command, enforces
them); the others copy the package, add one import of the kind this codebase used to
have, and check the contracts refuse it and name it.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / ".importlinter"


def lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with this interpreter, finding ``evolving_agent`` in ``cwd`` first."""
    # Wide enough that an import chain is printed on one line, as the tests match it.
    env = {**os.environ, "PYTHONPATH": str(cwd), "COLUMNS": "200"}
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command as c; c()",
            "--config",
            str(CONFIG),
            "--no-cache",
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_package_keeps_every_contract() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 5 kept, 0 broken." in result.stdout


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package (code only), shared by the bad-graph tests."""
    dest = tmp_path_factory.mktemp("pristine")
    shutil.copytree(
        REPO / "evolving_agent",
        dest / "evolving_agent",
        ignore=shutil.ignore_patterns("__pycache__", "data"),
    )
    return dest


def with_import(pristine: Path, tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the package in which ``module`` also runs ``line``."""
    shutil.copytree(pristine / "evolving_agent", tmp_path / "evolving_agent")
    path = tmp_path / Path(*module.split(".")).with_suffix(".py")
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "line", "contract", "named"),
    [
        # An upward import: memory reaching for a job.
        (
            "evolving_agent.memory.ops.today",
            "from evolving_agent.jobs import scheduler",
            "The memory stack imports downward only",
            "evolving_agent.memory.ops.today -> evolving_agent.jobs.scheduler",
        ),
        # Today's cycles, as they were before this architecture was enforced:
        # verify re-applying a diff that lived in review/ ...
        (
            "evolving_agent.memory.verify",
            "from evolving_agent.review import models",
            "The memory stack imports downward only",
            "evolving_agent.memory.verify -> evolving_agent.review.models",
        ),
        # ... a reflector borrowing review's Section ...
        (
            "evolving_agent.reflectors.base",
            "from evolving_agent.review import store",
            "The memory stack imports downward only",
            "evolving_agent.reflectors.base -> evolving_agent.review.store",
        ),
        # ... Canon and the writer validating each other ...
        (
            "evolving_agent.memory.canon.canon",
            "from evolving_agent.memory import authority",
            "No import cycles between sibling modules or packages",
            ".canon -> .authority",
        ),
        # ... the git layer recording Canon snapshots (the snapshot check reads git's
        # formats from gitformat, so boot's fast path imports no gitrepo) ...
        (
            "evolving_agent.memory.canon.gitformat",
            "from evolving_agent.memory.canon import canon_snapshot",
            "No import cycles between sibling modules or packages",
            ".gitformat -> .canon_snapshot",
        ),
        # ... the search config naming its agents from the agents package (whose
        # backends import the reducer -> run state -> config) ...
        (
            "evolving_agent.search.config",
            "from evolving_agent.search.agents import make_agent",
            "No import cycles between sibling modules or packages",
            ".config -> .agents",
        ),
        # Inside memory, the back-arrows the rooms were split along: the Live Bus
        # listing through boot's view ...
        (
            "evolving_agent.memory.ops.live",
            "from evolving_agent.memory.boot import bootview",
            "Inside memory, each room imports only the rooms below it",
            "evolving_agent.memory.ops.live -> evolving_agent.memory.boot.bootview",
        ),
        # ... the day digest counting days through the register ...
        (
            "evolving_agent.memory.evidence.day_digest",
            "from evolving_agent.memory.ops import hypotheses",
            "Inside memory, each room imports only the rooms below it",
            "evolving_agent.memory.evidence.day_digest -> evolving_agent.memory.ops.hypotheses",
        ),
        # ... verify reading the deployment from sync's deploy ...
        (
            "evolving_agent.memory.verify",
            "from evolving_agent.memory.sync import deploy",
            "Inside memory, each room imports only the rooms below it",
            "evolving_agent.memory.verify -> evolving_agent.memory.sync.deploy",
        ),
        # ... the floor loading the Canon snapshot ...
        (
            "evolving_agent.memory.base.authority_table",
            "from evolving_agent.memory.canon import canon_snapshot",
            "Inside memory, each room imports only the rooms below it",
            "evolving_agent.memory.base.authority_table -> "
            "evolving_agent.memory.canon.canon_snapshot",
        ),
        # ... and two rooms of one floor leaning on each other.
        (
            "evolving_agent.memory.verify",
            "from evolving_agent.memory.boot import boot",
            "Inside memory, each room imports only the rooms below it",
            "evolving_agent.memory.verify -> evolving_agent.memory.boot.boot",
        ),
        # The reflector contract reaching for a backend, or an answer model for its check
        # (what an answer means is answer_check's alone) ...
        (
            "evolving_agent.reflectors.base",
            "from evolving_agent.reflectors import rules",
            "The reflector contract imports no backend and no check",
            "evolving_agent.reflectors.base -> evolving_agent.reflectors.rules",
        ),
        (
            "evolving_agent.reflectors.answers",
            "from evolving_agent.reflectors import answer_check",
            "The reflector contract imports no backend and no check",
            "evolving_agent.reflectors.answers -> evolving_agent.reflectors.answer_check",
        ),
        # ... and search reaching into the memory side.
        (
            "evolving_agent.search.stats",
            "from evolving_agent.memory.evidence import evidence",
            "search depends only on errors and the shared process and git runners",
            "evolving_agent.search.stats -> evolving_agent.memory.evidence.evidence",
        ),
    ],
)
def test_a_bad_import_breaks_its_contract_and_is_named(
    pristine: Path, tmp_path: Path, module: str, line: str, contract: str, named: str
) -> None:
    result = lint_imports(with_import(pristine, tmp_path, module, line))
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{contract} BROKEN" in result.stdout
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert named in broken


def test_a_module_in_no_room_of_memory_breaks_the_rooms_contract(
    pristine: Path, tmp_path: Path
) -> None:
    # Every module of memory/ sits in a named room: a new one must say where it goes.
    shutil.copytree(pristine / "evolving_agent", tmp_path / "evolving_agent")
    (tmp_path / "evolving_agent" / "memory" / "stray.py").write_text('"""Nowhere yet."""\n')
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Inside memory, each room imports only the rooms below it BROKEN" in result.stdout
    assert "evolving_agent.memory.stray" in result.stdout.split("Broken contracts", 1)[1]


# -- backends by name; what a backend can do is its class -------------------------------


def test_reflectors_are_found_by_name_and_an_unknown_name_lists_the_valid_ones() -> None:
    from evolving_agent.errors import UsageError
    from evolving_agent.reflectors import REGISTRY, get_reflector, reflector_class
    from evolving_agent.reflectors.rules import RulesReflector
    from evolving_agent.reflectors.settings import REFLECTOR_NAMES

    assert list(REGISTRY) == ["rules", "command", "openai", "claude", "codex", "gemini", "opencode"]
    assert REFLECTOR_NAMES == tuple(REGISTRY)  # the names are the registry's keys, once
    assert reflector_class("rules") is RulesReflector
    assert isinstance(get_reflector("rules"), RulesReflector)
    with pytest.raises(UsageError, match=r"choose one of: rules, command, openai, claude, codex"):
        reflector_class("gpt")


def test_a_capability_is_a_class_not_a_list_of_names() -> None:
    from evolving_agent.reflectors import REGISTRY, names_of, reflector_class
    from evolving_agent.reflectors.base import ProbeAnswerer, Reflector
    from evolving_agent.reflectors.prompt import PromptReflector

    assert names_of(Reflector) == list(REGISTRY)
    assert names_of(ProbeAnswerer) == [n for n in REGISTRY if n != "rules"]
    assert names_of(PromptReflector) == names_of(ProbeAnswerer)
    assert not issubclass(reflector_class("rules"), ProbeAnswerer)


# -- one runner for child processes, one for git ----------------------------------------

_RUNNERS = {"process.py", "gitcmd.py"}
_SPAWNERS = {
    ("os", "system"), ("os", "popen"), ("os", "posix_spawn"), ("os", "posix_spawnp"),
    ("pty", "spawn"), ("asyncio", "create_subprocess_exec"),
    ("asyncio", "create_subprocess_shell"),
}  # fmt: skip


def _process_escapes(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name == "subprocess"]
        elif isinstance(node, ast.ImportFrom) and node.module == "subprocess":
            found.append("from subprocess import ...")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = (node.value.id, node.attr)
            if name in _SPAWNERS or (name[0] == "os" and name[1].startswith(("exec", "spawn"))):
                found.append(".".join(name))
        elif isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                found.append('["git", ...] argv')
    return found


def test_every_child_process_goes_through_process_or_gitcmd() -> None:
    # Regression guard: search/report.py once ran git itself, with 2 of gitcmd's safe
    # options, reading user and system git config in a repository agents could write.
    offenders = []
    for path in sorted((REPO / "evolving_agent").rglob("*.py")):
        rel = path.relative_to(REPO / "evolving_agent")
        if rel.as_posix() in _RUNNERS or rel.parts[0] == "data":  # data/: the user's example
            continue
        for what in _process_escapes(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{rel}: {what}")
    assert offenders == []


@pytest.mark.parametrize(
    "source",
    [
        "import subprocess",
        "from subprocess import run",
        "import os\nos.system('ls')",
        "import os\nos.execvp('git', ['git'])",
        "run(['git', 'status'])",
        "cmd = ('git', 'log')",
    ],
)
def test_the_process_check_catches_each_way_out(source: str) -> None:
    assert _process_escapes(ast.parse(source)) != []
