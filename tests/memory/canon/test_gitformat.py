"""Git's formats without I/O (memory/canon/gitformat.py): a blob's id and a commit's trailers."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evolving_agent.memory.canon import gitformat, gitrepo


def test_a_blob_id_is_what_git_hash_object_prints(tmp_path: Path) -> None:
    for data in (b"", b"hello\n", bytes(range(256)) * 9):
        (tmp_path / "f").write_bytes(data)
        done = subprocess.run(
            ["git", "hash-object", str(tmp_path / "f")], capture_output=True, text=True, check=True
        )
        assert gitformat.blob_sha(data) == done.stdout.strip()


def test_trailers_are_the_last_paragraphs_key_value_lines() -> None:
    message = (
        "canon: edit\n\nBody: not a trailer here\n\nActor: human\nEvidence-Id: ev-1\nno colon\n"
    )
    assert gitformat.parse_trailers(message) == {"Actor": "human", "Evidence-Id": "ev-1"}
    assert gitformat.parse_trailers("") == {}
    assert gitformat.parse_trailers("subject\n\nTwo words: no\n") == {}


def test_gitrepo_reexports_the_same_functions() -> None:
    # The one git reader's API is unchanged; boot's fast path imports gitformat alone.
    assert gitrepo.blob_sha is gitformat.blob_sha
    assert gitrepo.parse_trailers is gitformat.parse_trailers
