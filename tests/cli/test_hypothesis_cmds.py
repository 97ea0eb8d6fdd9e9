"""hypothesis propose (the session's trigger / counter-move) and edit --adopt."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from freezegun import freeze_time

from evolving_agent.cli import cli
from evolving_agent.memory.ops.hypotheses import fold_root, hypothesis_id
from evolving_agent.paths import MemoryRoot
from tests.helpers.roots import fresh_root

CLAIM = "I offer tests nobody asked for"


def run(root: MemoryRoot, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["--root", str(root.path), *args])
    return res.exit_code, res.output


def test_a_proposal_is_recorded_used_only_after_friction_and_adopted_by_the_human(
    tmp_path: Path,
) -> None:
    root = fresh_root(tmp_path / "memory")
    hid = hypothesis_id(CLAIM)
    with freeze_time("2027-03-01 09:00:00"):
        assert run(root, "hypothesis", "add", CLAIM)[0] == 0
        code, out = run(root, "hypothesis", "propose", hid, "--do", "finish what was asked")
        assert code == 0 and "recorded as the session's proposal" in out
        assert run(root, "hypothesis", "propose", "h-00000000", "--do", "x")[0] == 4
        assert run(root, "hypothesis", "propose", hid)[0] == 4  # nothing proposed
    with freeze_time("2027-03-02 03:00:00"):
        assert run(root, "run", "nightly")[0] == 0
    h = fold_root(root)[hid]
    assert h.proposal is not None and h.proposal.do == "finish what was asked"
    assert h.do is None and h.shape() == (None, None)  # not in use: no friction yet
    bias = (root.today / "bias.md").read_text()
    assert "finish what was asked" not in bias
    code, out = run(root, "hypothesis", "show", hid)
    assert "session proposal (2027-03-01): when: -; do: finish what was asked" in out
    with freeze_time("2027-03-02 09:00:00"):
        code, out = run(root, "hypothesis", "edit", hid, "--adopt")
    assert code == 0 and "do: finish what was asked" in out
    adopted = fold_root(root)[hid]
    assert adopted.do == "finish what was asked" and adopted.proposal is None
