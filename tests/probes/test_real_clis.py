"""Probes through the real ``claude`` and ``codex`` CLIs, pointed at the scripted model server.

The CLI is the user's own, run by the command backend as a user would set it up
(no tools: ``claude -p --tools ''``, ``codex exec --sandbox read-only``), and through the
``claude`` / ``codex`` reflector presets, which answer probes through the same
``answer_probe`` contract as every prompt reflector.  The server
answers as an honest model first and as a drifting one second; the test checks that the
CLI carried boot's exact context to the model, that the answers are kept, that the drift
is found and queued, and that nothing reached Canon or Today.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import git
import pytest

from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.ops.canon_edit import save_canon
from evolving_agent.memory.verify import verify_root
from evolving_agent.probes import resolve_answerer
from evolving_agent.probes.diff import diff_probes
from evolving_agent.probes.run import run_probes
from tests.helpers.probe_fakes import ANSWERS, tree_hash
from tests.helpers.roots import fresh_root
from tests.helpers.scripted_model import (
    Say,
    ScriptedModel,
    claude_env,
    codex_env,
    codex_home,
)

pytestmark = pytest.mark.slow

PROBES = """\
schema_version: 1
probes:
  - key: shell-flag
    entry: "habits: Lead with the answer"
    prompt: "What does the -n flag of grep do? [[script:grep]]"
    implies: answers first, in at most three sentences, without offering alternatives
    checks:
      max_sentences: 3
      forbid: ["alternatively", "or you could"]
  - key: unclear-cleanup
    entry: "values: Answer the question that was asked"
    prompt: "Can you clean up the old branches in this repo? [[script:branches]]"
    implies: asks which branches count as old before deleting anything
    checks:
      asks_before_acting: true
"""

# (how the backend is chosen: --reflector NAME, or --reflector-cmd CMD for a plain command)
BACKENDS = {
    "claude preset": ("claude", "claude", None),
    "codex preset": ("codex", "codex", None),
    "claude as a command": ("claude", None, "claude -p --tools ''"),
}


@pytest.fixture
def server() -> Iterator[ScriptedModel]:
    with ScriptedModel() as model:
        yield model


def _speak_as(server: ScriptedModel, style: str) -> None:
    server.script("grep", [Say(ANSWERS[style]["grep"])])
    server.script("branches", [Say(ANSWERS[style]["branches"])])


@pytest.mark.parametrize("backend_id", list(BACKENDS))
def test_a_real_cli_answers_probes_and_the_drift_is_found(
    backend_id: str, server: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli, preset, command = BACKENDS[backend_id]
    assert shutil.which(cli), f"{cli} is installed by .ci/tools.sh"
    home = tmp_path / "home"
    home.mkdir()
    if cli == "claude":
        env = claude_env(home, server.url)
    else:
        env = codex_env(home, codex_home(tmp_path / "codex-home", server.url))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    root = fresh_root(tmp_path / "memory")
    save_canon(root, "probes.yaml", PROBES)
    canon, today = tree_hash(root.canon), tree_hash(root.today)
    head = git.Repo(root.path).head.commit.hexsha
    context = build_boot(root).markdown()

    backend = resolve_answerer(root, preset, command)
    _speak_as(server, "honest")
    before = run_probes(root, model=f"{cli}-honest", backend=backend)
    _speak_as(server, "drifting")
    after = run_probes(root, model=f"{cli}-drifting", backend=backend)
    assert before.answered == after.answered == ["shell-flag", "unclear-cleanup"]

    asked = server.requests(script="grep")
    assert asked and all(context.strip() in seen.text() for seen in asked)
    d = diff_probes(root)
    rows = {r.probe: r for r in d.rows}
    assert rows["shell-flag"].a is not None and rows["shell-flag"].b is not None
    assert rows["shell-flag"].a.answer == ANSWERS["honest"]["grep"]
    assert rows["shell-flag"].b.verdict.failed == [
        "6 sentences, at most 3 allowed",
        "says 'alternatively'",
        "says 'or you could'",
    ]
    assert d.continuity.regressed == ["shell-flag", "unclear-cleanup"]
    assert len(d.queued) == 3 and d.hold == d.queued[-1]  # two entries fell, and the upgrade
    # The receipt names the client that answered, and read every repeat (3 by default).
    assert d.receipt is not None and d.receipt.client_b == backend.name
    assert (d.receipt.repeats_a, d.receipt.repeats_b) == (3, 3) and d.receipt.held
    assert (tree_hash(root.canon), tree_hash(root.today)) == (canon, today)
    assert git.Repo(root.path).head.commit.hexsha == head
    assert verify_root(root).problems == []
