"""Creating a memory root: layer directories, Canon template, schedule, git repo."""

from __future__ import annotations

from pathlib import Path

from evolving_agent.errors import InvalidInput
from evolving_agent.memory import gitrepo
from evolving_agent.memory.canon_snapshot import record_canon_snapshot
from evolving_agent.memory.canon import IDENTITY_FILE, IDENTITY_TEMPLATE, POLICY_TEMPLATE
from evolving_agent.memory.policy import POLICY_FILE
from evolving_agent.paths import LAYERS, REVIEW_AREAS, MemoryRoot

SCHEDULE_TEMPLATE = """\
# When the jobs run (cron syntax, local time zone unless 'timezone' is set).
schema_version: 1
timezone: local
jobs:
  nightly: "0 3 * * *"     # every day at 03:00: Today + Evidence -> bias and carry
  weekly: "30 3 * * sun"   # Sundays at 03:30: a week of Evidence -> proposals
  monthly: "0 4 1 * *"     # the 1st at 04:00: proposals -> the human review queue
reflector: rules           # rules | command | openai
"""

INIT_MESSAGE = "init: memory root created by evolving-agent"


def init_root(path: Path) -> MemoryRoot:
    """Create a memory root at ``path``.  Refuses to overwrite an existing one."""
    root = MemoryRoot(path.absolute())
    if root.path.is_file():
        raise InvalidInput(f"{root.path} is a file, not a directory")
    if root.exists():
        raise InvalidInput(f"a memory root already exists at {root.path}")
    # A placeholder such as the repository's memory/.gitkeep does not count as content.
    if root.path.exists() and any(p.name != ".gitkeep" for p in root.path.iterdir()):
        raise InvalidInput(f"{root.path} exists and is not empty; choose an empty directory")
    for layer in LAYERS:
        (root.path / layer).mkdir(parents=True, exist_ok=True)
    for area in REVIEW_AREAS:
        root.area_dir(area).mkdir(parents=True, exist_ok=True)
    root.lock_dir.mkdir(parents=True, exist_ok=True)
    (root.canon / IDENTITY_FILE).write_text(IDENTITY_TEMPLATE, encoding="utf-8")
    (root.canon / POLICY_FILE).write_text(POLICY_TEMPLATE, encoding="utf-8")
    root.schedule_file.write_text(SCHEDULE_TEMPLATE, encoding="utf-8")
    (root.path / ".gitignore").write_text(gitrepo.GITIGNORE, encoding="utf-8")
    repo = gitrepo.init_repo(root)
    repo.index.add(
        [".gitignore", "schedule.yaml", f"canon/{IDENTITY_FILE}", f"canon/{POLICY_FILE}"]
    )
    repo.index.commit(INIT_MESSAGE + "\n\nActor: init\n")
    record_canon_snapshot(root)
    return root


def require_root(root: MemoryRoot) -> MemoryRoot:
    """Fail with a clear message when ``root`` is not a memory root."""
    if root.path.is_file():
        raise InvalidInput(
            f"no memory root at {root.path}: it is a file, not a directory "
            "(pass --root or set $EVOLVING_AGENT_ROOT to a directory)"
        )
    if not root.exists():
        raise InvalidInput(
            f"no memory root at {root.path} (run 'evolving-agent init {root.path}' "
            "or pass --root / set $EVOLVING_AGENT_ROOT)"
        )
    return root
