"""The jobs' prompt files (``jobs/prompts.py``): defaults copied once, edits kept, a
symlinked folder refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolving_agent.errors import EvolvingAgentError, InvalidInput
from evolving_agent.jobs.prompts import PROMPT_JOBS, default_prompt, ensure_prompts, prompt_loader
from evolving_agent.paths import MemoryRoot
from tests.helpers import REPO
from tests.helpers.roots import fresh_root


@pytest.fixture
def root(tmp_path: Path) -> MemoryRoot:
    return fresh_root(tmp_path / "memory")


def test_the_packaged_defaults_are_the_repositorys_crons(root: MemoryRoot) -> None:
    for job in PROMPT_JOBS:
        assert default_prompt(job) == (REPO / "crons" / f"{job}.md").read_text(encoding="utf-8")


def test_a_missing_prompt_is_copied_and_an_edited_one_is_kept(root: MemoryRoot) -> None:
    (root.crons / "nightly.md").unlink()
    (root.crons / "weekly.md").write_text("my own weekly prompt\n")
    folder = ensure_prompts(root)
    assert (folder / "nightly.md").read_text() == default_prompt("nightly")
    load = prompt_loader(root)
    assert load("weekly") == "my own weekly prompt\n"
    assert load("nightly") == default_prompt("nightly")


def test_a_prompt_that_is_not_text_is_named(root: MemoryRoot) -> None:
    (root.crons / "nightly.md").write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidInput, match=r"crons/nightly\.md: prompt file is not UTF-8 text"):
        prompt_loader(root)("nightly")


def test_a_symlinked_crons_folder_is_never_written_through(root: MemoryRoot) -> None:
    for p in root.crons.iterdir():
        p.unlink()
    root.crons.rmdir()
    root.crons.symlink_to(root.canon)
    canon_before = sorted(p.name for p in root.canon.iterdir())
    with pytest.raises(EvolvingAgentError):
        ensure_prompts(root)
    assert sorted(p.name for p in root.canon.iterdir()) == canon_before
