"""Creating a memory root: layer directories, Canon template, schedule, prompts, git repo.

Everything is created private (0700 directories, 0600 files) whatever the umask, and
the init commit holds exactly :func:`init_contents` - which is how ``verify`` tells
the one commit allowed to create Canon without a review from a forged one.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.atomic import atomic_write, make_private_dir
from evolving_agent.memory.canon import gitrepo
from evolving_agent.memory.canon.policy import POLICY_FILE
from evolving_agent.paths import LAYERS, REVIEW_AREAS, MemoryRoot, root_problem

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
PROMPT_JOBS = ("nightly", "weekly")


def default_prompt(job: str) -> str:
    """The shipped prompt of a job (``evolving_agent/data/crons/<job>.md``)."""
    return (resources.files("evolving_agent") / "data" / "crons" / f"{job}.md").read_text(
        encoding="utf-8"
    )


def init_contents(*, with_prompts: bool = True, with_probes: bool = True) -> dict[str, bytes]:
    """The tracked files ``init`` commits (roots made before prompts were tracked
    committed them without ``crons/``, and before probes without ``probes.yaml``)."""
    # Here, not above: every command checks its root through this module
    # (:func:`require_root`), and only init and verify need Canon's models for this.
    from evolving_agent.memory.canon.canon import IDENTITY_FILE, IDENTITY_TEMPLATE, POLICY_TEMPLATE
    from evolving_agent.memory.canon.probe_file import PROBES_FILE, PROBES_TEMPLATE

    out = {
        f"canon/{IDENTITY_FILE}": IDENTITY_TEMPLATE.encode("utf-8"),
        f"canon/{POLICY_FILE}": POLICY_TEMPLATE.encode("utf-8"),
        "schedule.yaml": SCHEDULE_TEMPLATE.encode("utf-8"),
    }
    if with_probes:
        out[f"canon/{PROBES_FILE}"] = PROBES_TEMPLATE.encode("utf-8")
    if with_prompts:
        for job in PROMPT_JOBS:
            out[f"crons/{job}.md"] = default_prompt(job).encode("utf-8")
    return out


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
    make_private_dir(root.path)
    real = root.real
    for layer in LAYERS:
        make_private_dir(real / layer)
    for area in REVIEW_AREAS:
        make_private_dir(root.real / "reviews" / area)
    make_private_dir(real / "crons")
    make_private_dir(real / ".ea" / "locks")
    contents = init_contents()
    for rel, data in {**contents, ".gitignore": gitrepo.GITIGNORE.encode()}.items():
        atomic_write(real / rel, data, base=real)
    gitrepo.init_repo(root)
    gitrepo.commit_contents(
        root,
        {**contents, ".gitignore": gitrepo.GITIGNORE.encode()},
        INIT_MESSAGE,
        {"Actor": "init"},
    )
    from evolving_agent.memory.canon.canon_snapshot import record_canon_snapshot
    from evolving_agent.memory.evidence.devices import create_device

    record_canon_snapshot(root)  # boot serves only Canon matching this commit

    create_device(root)  # this root's own chain is evidence/DAY.jsonl (memory/evidence/devices.py)
    return root


def require_root(root: MemoryRoot) -> MemoryRoot:
    """Fail with a clear message when ``root`` is not a memory root."""
    problem = root_problem(root)
    if problem is not None:
        raise InvalidInput(problem)
    return root


# The OS-user deployment, as ``deploy`` records it; read here, below both deploy and verify.
DEPLOY_FILE = "deploy.json"  # below .ea/


def deployment(root: MemoryRoot) -> dict[str, Any] | None:
    """The recorded deployment of ``root`` (``.ea/deploy.json``), or None."""
    try:
        data = json.loads((root.state / DEPLOY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("kind") == "os-users" else None
