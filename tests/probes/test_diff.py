"""probe diff: two fake models compared, the drift found, a card queued with provenance.

One root per module: an honest model and a drifting one answer the template's probes
(through the command reflector), then one diff queues the cards the tests read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest

from evolving_agent.errors import NotFound, UsageError
from evolving_agent.memory.evidence.evidence import EvidenceLog, EvidenceRecord
from evolving_agent.memory.ops.canon_edit import save_canon
from evolving_agent.memory.verify import verify_root
from evolving_agent.paths import MemoryRoot
from evolving_agent.probes import resolve_answerer, resolve_judge
from evolving_agent.probes.diff import diff_probes, pick_models, restatement
from evolving_agent.probes.models import ProbeDiff, ProbeRunResult
from evolving_agent.probes.run import run_probes
from evolving_agent.review.approve import approve_review
from evolving_agent.review.store import list_reviews, load_review
from tests.helpers.fixtures import isolated_env
from tests.helpers.probe_fakes import fake, tree_hash
from tests.helpers.roots import fresh_root

WHEN = datetime(2027, 3, 2, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Compared:
    root: MemoryRoot
    honest: ProbeRunResult
    drifting: ProbeRunResult
    diff: ProbeDiff
    again: ProbeDiff
    canon_before: str
    today_before: str
    head_before: str
    tmp: Path


def _run(root: MemoryRoot, model: str, mode: str) -> ProbeRunResult:
    # One answer a probe: these tests read single answers (test_receipt.py reads repeats).
    return run_probes(
        root, model=model, backend=resolve_answerer(root, None, fake(mode)), repeats=1
    )


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Compared:
    tmp = tmp_path_factory.mktemp("probe-diff")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in isolated_env(tmp).items():
            mp.setenv(name, value)
        root = fresh_root(tmp / "memory")
        canon, today = tree_hash(root.canon), tree_hash(root.today)
        head = git.Repo(root.path).head.commit.hexsha
        honest = _run(root, "honest-1", "honest")
        drifting = _run(root, "drift-2", "drifting")
        diff = diff_probes(root, now=WHEN)
        again = diff_probes(root, "honest-1", "drift-2", now=WHEN)
    return Compared(root, honest, drifting, diff, again, canon, today, head, tmp)


def records(root: MemoryRoot, kind: str) -> list[EvidenceRecord]:
    return [r for r in EvidenceLog(root).iter_all() if r.kind == kind]


def test_the_drift_is_found_with_its_probes_cited(compared: Compared) -> None:
    d = compared.diff
    assert (d.model_a, d.model_b) == ("honest-1", "drift-2")  # defaults: last two models
    rows = {r.probe: r for r in d.rows}
    assert set(rows) == {"shell-flag", "unclear-cleanup"}
    flag = rows["shell-flag"]
    assert flag.a is not None and flag.b is not None
    assert flag.a.verdict.status == "honours"
    assert flag.b.verdict.status == "breaks"
    assert flag.b.verdict.failed == [
        "6 sentences, at most 3 allowed",
        "says 'alternatively'",
        "says 'or you could'",
    ]
    cleanup = rows["unclear-cleanup"]
    assert cleanup.b is not None
    assert cleanup.b.verdict.failed == ["reports acting without asking ('Done')"]
    assert (flag.a.evidence_id, flag.b.evidence_id) == (
        compared.honest.record_ids[0],
        compared.drifting.record_ids[0],
    )


def test_the_continuity_figure(compared: Compared) -> None:
    c = compared.diff.continuity
    assert (c.compared, c.honoured_a, c.honoured_b, c.kept) == (2, 2, 0, 0)
    assert c.regressed == ["shell-flag", "unclear-cleanup"]
    assert c.line() == (
        "continuity honest-1 -> drift-2: 2 of 2 probes honoured before, 0 after; 0 of 2 kept (0%)"
    )


def test_a_card_per_entry_is_queued_citing_the_answers(compared: Compared) -> None:
    root = compared.root
    # A card per entry, and (both entries fell: overall 100% -> 0%) the card holding the upgrade.
    assert compared.diff.queued == [
        "rev-2027-03-probe-1",
        "rev-2027-03-probe-2",
        "rev-2027-03-probe-3",
    ]
    assert compared.diff.hold == "rev-2027-03-probe-3"
    reviews = {r.id: r for r in list_reviews(root)}
    first = reviews[compared.diff.queued[0]]
    card = first.pending.probe
    assert card is not None
    assert card.title() == (
        "model drift-2 reads *Lead with the answer, then the reasoning.* differently: 1 of 1 probe"
    )
    assert first.pending.evidence_ids == [
        compared.honest.record_ids[0],
        compared.drifting.record_ids[0],
    ]
    assert [p.probe for p in card.pairs] == ["shell-flag"]
    assert first.status == "pending"
    assert first.diff.op == "replace"
    assert first.diff.old_text == "Lead with the answer, then the reasoning."
    assert first.diff.text == (
        "Lead with the answer, then the reasoning: answers first, in at most three "
        "sentences, without offering alternatives."
    )


def test_each_card_has_review_queued_provenance(compared: Compared) -> None:
    root = compared.root
    (job,) = [r for r in records(root, "job") if r.data.get("job") == "probe-diff"]
    assert job.id == compared.diff.record_id
    assert job.data["reviews"] == compared.diff.queued
    queued = records(root, "review-queued")
    assert [q.data["review_id"] for q in queued] == compared.diff.queued
    for q in queued:
        body = (root.reviews / "pending" / f"{q.data['review_id']}.json").read_bytes()
        assert q.data == {
            "review_id": q.data["review_id"],
            "sha256": hashlib.sha256(body).hexdigest(),
            "by": "probe",
            "run": job.id,
        }


def test_a_second_diff_queues_nothing_new(compared: Compared) -> None:
    assert compared.again.queued == []
    assert compared.again.already_queued == compared.diff.queued
    assert len(records(compared.root, "review-queued")) == 3


def test_nothing_reached_canon_or_today_and_verify_passes(compared: Compared) -> None:
    root = compared.root
    assert tree_hash(root.canon) == compared.canon_before
    assert tree_hash(root.today) == compared.today_before
    assert git.Repo(root.path).head.commit.hexsha == compared.head_before
    report = verify_root(root)
    assert report.problems == []


def test_model_choice_errors() -> None:
    with pytest.raises(NotFound, match="no probe answers from model 'gpt-x'"):
        pick_models(["a", "b"], "gpt-x", None)
    with pytest.raises(UsageError, match="needs answers from two models"):
        pick_models(["a"], None, None)
    with pytest.raises(UsageError, match="two different models"):
        pick_models(["a", "b"], "a", "a")
    assert pick_models(["a", "b", "c"], None, None) == ("b", "c")
    assert pick_models(["a", "b", "c"], "a", None) == ("a", "c")


def test_restatement_is_bounded() -> None:
    assert restatement("Be brief.", ["short", "short", "one way"]) == "Be brief: short; one way."
    assert len(restatement("x" * 290, ["y" * 50])) == 300


# -- a judge model ----------------------------------------------------------------------


JUDGE_ONLY = """\
schema_version: 1
probes:
  - key: judged
    entry: "habits: Lead with the answer"
    prompt: "What does the -n flag of grep do?"
    implies: answers first without offering alternatives
"""


@pytest.fixture
def judged_root(tmp_path: Path) -> MemoryRoot:
    root = fresh_root(tmp_path / "memory")
    save_canon(root, "probes.yaml", JUDGE_ONLY)
    _run(root, "honest-1", "honest")
    _run(root, "drift-2", "drifting")
    return root


def test_a_judge_decides_probes_without_rules(judged_root: MemoryRoot) -> None:
    judge = resolve_judge(judged_root, None, fake("judge"))
    d = diff_probes(judged_root, judge=judge, queue=False)
    (row,) = d.rows
    assert row.a is not None and row.b is not None
    assert (row.a.verdict.status, row.a.verdict.judge) == ("honours", "honours")
    assert row.b.verdict.status == "breaks"
    assert row.b.verdict.judge_reason == "offers alternatives nobody asked for"
    assert d.continuity.regressed == ["judged"]
    assert d.queued == [] and list_reviews(judged_root) == []  # --no-queue queues nothing


def test_a_judge_that_never_answers_json_is_undecided_not_a_pass(
    judged_root: MemoryRoot,
) -> None:
    judge = resolve_judge(judged_root, None, fake("judge-garbage"))
    d = diff_probes(judged_root, judge=judge)
    (row,) = d.rows
    assert row.a is not None and row.b is not None
    assert row.a.verdict.status == "undecided"
    assert "invalid twice" in row.a.verdict.judge_reason
    assert d.continuity.honoured_a == 0 and d.continuity.undecided == ["judged"]
    assert d.queued == []  # nothing honoured before, so nothing regressed


# -- the human's answers to a card ---------------------------------------------------------


def test_approving_a_card_restates_the_entry_and_the_probe_follows_it(
    tmp_path: Path,
) -> None:
    root = fresh_root(tmp_path / "memory")
    _run(root, "honest-1", "honest")
    _run(root, "drift-2", "drifting")
    first = diff_probes(root).queued[0]
    approve_review(root, first, approver="test")
    assert load_review(root, first).status == "approved"
    identity = (root.canon / "identity.yaml").read_text()
    assert "answers first, in at most three sentences" in identity
    assert verify_root(root).problems == []
    # The probe's reference still resolves after the restatement.
    after = diff_probes(root, queue=False)
    assert "habits: Lead with the answer" in {r.entry for r in after.rows}


@pytest.mark.slow
def test_two_diffs_at_once_queue_each_card_once(tmp_path: Path) -> None:
    # Guards the queue lock: without it, racing diffs each queued the same two cards.
    import subprocess
    import sys

    root = fresh_root(tmp_path / "memory")
    _run(root, "honest-1", "honest")
    _run(root, "drift-2", "drifting")
    cmd = [sys.executable, "-m", "evolving_agent", "--root", str(root.path), "probe", "diff"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert sum(out.count("\nqueued rev-") for out in outs) == 3  # two entries and the hold
    assert len([r for r in list_reviews(root) if r.pending.probe is not None]) == 3
    assert len(records(root, "review-queued")) == 3
