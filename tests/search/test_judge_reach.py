"""The seal of what a scorer loads (judge.seal_reach): the directory rules, checked
against counter-examples Hypothesis searches for, and one real verbose probe."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.search.judge import (
    Judge,
    Seal,
    _dir_rule,
    dir_changed,
    glob_escape,
    seal_command,
)
from evolving_agent.search.workspace import init_round_repo

PY = sys.executable
# File names with the characters a glob would misread.
NAMES = st.text(alphabet="ab.*?[]-_", min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))


@settings(max_examples=60, deadline=None)
@given(
    existing=st.sets(NAMES, max_size=5),
    absent=st.sets(NAMES, min_size=1, max_size=5),
    extra=NAMES,
)
def test_a_rule_flags_exactly_the_names_that_must_stay_absent(
    existing: set[str], absent: set[str], extra: str
) -> None:
    absent -= existing
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in existing:
            (folder / name).write_text("")
        rule = _dir_rule(glob_escape(n) for n in absent)
        assert dir_changed(folder, rule) is None  # as sealed
        if extra not in existing:
            (folder / extra).write_text("")
            why = dir_changed(folder, rule)
            # A new file is reported if and only if it is one of the sealed absentees.
            assert (why is not None) == (extra in absent), (extra, absent, why)
            if why is not None:
                assert extra in why


def test_the_probe_seals_the_imports_and_the_folder_of_a_real_scorer(tmp_path: Path) -> None:
    judge_dir = tmp_path / "judge"
    judge_dir.mkdir()
    (judge_dir / "helper.py").write_text("K = 1\n")
    (judge_dir / "score.py").write_text("import helper, statistics\nprint(helper.K)\n")
    (judge_dir / "data.txt").write_text("42\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "value.txt").write_text("1\n")
    commit = init_round_repo(tmp_path / "repo", src, "seed")
    cmd, named = seal_command(f"{PY} judge/score.py", tmp_path)  # as the runner seals it
    judge = Judge(cmd, tmp_path, timeout=60, seal=Seal(named))
    sealed = {**judge.reach(tmp_path / "repo", commit), **named}
    assert str(judge_dir / "helper.py") in sealed and str(judge_dir / "data.txt") in sealed
    assert any(k.endswith("/statistics.py") for k in sealed)  # a stdlib import
    seal = Seal(sealed)
    assert seal.changed() == []
    (judge_dir / "statistics.py").write_text("")  # a module that would shadow it
    (changed,) = seal.changed()
    assert changed == f"{judge_dir}/ (new statistics.py)"
    (judge_dir / "statistics.py").unlink()
    (judge_dir / "unrelated.log").write_text("a log the scorer never reads")
    assert seal.changed() == []  # not every new file is an attack
