"""probe run: each probe through a model with boot's exact context, answers as Evidence."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import git
import pytest

from evolving_agent.errors import UsageError
from evolving_agent.memory.boot.boot import build_boot
from evolving_agent.memory.canon.canon_snapshot import load_canon
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes import resolve_answerer
from evolving_agent.probes.models import MAX_ANSWER_CHARS, ProbeAnswerData
from evolving_agent.probes.run import run_probes
from evolving_agent.reflectors.command import ReflectorTampered
from tests.helpers.probe_fakes import fake, tree_hash
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def probe_records(root: MemoryRoot) -> list[EvidenceRecord]:
    return [r for r in EvidenceLog(root).iter_all() if r.kind == "probe"]


def run(root: MemoryRoot, model: str, mode: str):  # type: ignore[no-untyped-def]
    # One answer a probe: these tests read single answers (test_receipt.py reads repeats).
    return run_probes(
        root, model=model, backend=resolve_answerer(root, None, fake(mode)), repeats=1
    )


def test_each_answer_is_recorded_with_model_commit_probe_and_context_hash(
    root: MemoryRoot,
) -> None:
    context = build_boot(root).markdown()
    result = run(root, "honest-1", "honest")
    assert result.answered == ["shell-flag", "unclear-cleanup"]
    records = probe_records(root)
    assert [r.id for r in records] == result.record_ids
    commit = git.Repo(root.path).head.commit.hexsha
    assert load_canon(root).commit == commit
    for rec, key in zip(records, ["shell-flag", "unclear-cleanup"], strict=True):
        data = ProbeAnswerData.model_validate(rec.data)
        assert rec.actor == "monthly"
        assert (data.model, data.probe, data.reflector) == ("honest-1", key, "command")
        assert data.canon_commit == commit
        assert data.context_sha256 == hashlib.sha256(context.encode()).hexdigest()
        assert data.run == result.run
        assert data.error is None
    first = ProbeAnswerData.model_validate(records[0].data)
    assert first.entry_text == "Lead with the answer, then the reasoning."
    assert first.answer == "It prints each matching line with its line number in front."


def test_the_model_gets_boots_exact_context_in_a_scratch_directory(root: MemoryRoot) -> None:
    context = build_boot(root).markdown()
    run(root, "echo", "echo")
    data = ProbeAnswerData.model_validate(probe_records(root)[0].data)
    cwd, _, given = data.answer.partition("\n")
    assert context in given
    assert given.rstrip().endswith("What does the -n flag of grep do?")
    assert not Path(cwd).resolve().is_relative_to(root.path.resolve())
    assert not os.path.exists(cwd)  # the scratch directory went with the call


def test_answers_are_masked_and_bounded(root: MemoryRoot) -> None:
    run(root, "leaky", "secret")
    run(root, "chatty", "long")
    by_model = {
        ProbeAnswerData.model_validate(r.data).model: ProbeAnswerData.model_validate(r.data)
        for r in probe_records(root)
    }
    assert "sk-proj-" not in by_model["leaky"].answer
    assert "[REDACTED:" in by_model["leaky"].answer
    long = by_model["chatty"]
    assert long.truncated is True
    assert len(long.answer) <= MAX_ANSWER_CHARS + len(" […]")


def test_a_run_writes_nothing_to_canon_or_today(root: MemoryRoot) -> None:
    canon, today = tree_hash(root.canon), tree_hash(root.today)
    head = git.Repo(root.path).head.commit.hexsha
    run(root, "honest-1", "honest")
    run(root, "drift-2", "drifting")
    assert (tree_hash(root.canon), tree_hash(root.today)) == (canon, today)
    assert git.Repo(root.path).head.commit.hexsha == head


def test_a_model_that_writes_today_is_stopped_restored_and_not_recorded(
    root: MemoryRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Guards the probe run's own check: the command reflector alone guards Canon, not Today.
    monkeypatch.setenv("EA_FAKE_ROOT", str(root.path))
    today = tree_hash(root.today)
    with pytest.raises(ReflectorTampered) as caught:
        run(root, "sneaky", "tamper")
    assert caught.value.exit_code == 5
    assert caught.value.changed == ["today/bias.md"]
    assert tree_hash(root.today) == today
    assert probe_records(root) == []


def test_a_backend_that_never_answers_is_recorded_as_such(root: MemoryRoot) -> None:
    backend = resolve_answerer(root, None, "/nonexistent/model-cli")
    result = run_probes(root, model="gone", backend=backend)
    assert result.answered == []
    assert set(result.failed) == {"shell-flag", "unclear-cleanup"}
    data = ProbeAnswerData.model_validate(probe_records(root)[0].data)
    assert data.answer == "" and data.error


def test_the_rules_reflector_cannot_answer_probes(root: MemoryRoot) -> None:
    with pytest.raises(UsageError, match="rules reflector has no model"):
        resolve_answerer(root, "rules")
