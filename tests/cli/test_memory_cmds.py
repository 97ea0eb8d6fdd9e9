"""``init`` and the memory commands' hints, followed as a newcomer would follow them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import run_cli, run_proc


# A newcomer's snag.
@pytest.mark.slow
def test_init_hint_names_canon_edit_and_following_it_keeps_verify_green(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_cli("init")
    assert result.output.splitlines()[1] == (
        "next: run 'evolving-agent canon edit' to say who the assistant is, "
        "then 'evolving-agent boot'"
    )
    other = run_cli("init", str(tmp_path / "my root"))
    assert f"'evolving-agent canon edit --root '{tmp_path / 'my root'}''" in other.output

    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('name: Assistant', 'name: Ada'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    edited = run_proc("canon", "edit")
    assert edited.returncode == 0, edited.stderr
    assert run_proc("verify").returncode == 0
    assert run_cli("boot").output.startswith("# Boot context: Ada")
