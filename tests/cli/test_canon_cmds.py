"""``canon`` commands as a user types them: one error line, never click's own wording."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import new_root, run_proc


# Bad input a new user typed during QA.
def test_a_missing_editor_is_one_error_line_not_clicks_capitalised_error(tmp_path: Path) -> None:
    # A newcomer's `canon edit` with a wrong $EDITOR printed click's "Error: …", not the
    # "error: …" line every other failure prints.
    root = new_root(tmp_path)
    before = (root / "canon" / "identity.yaml").read_bytes()
    proc = run_proc(
        "--root", str(root), "canon", "edit", env={"EDITOR": str(tmp_path / "no-editor")}
    )  # fmt: skip
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert err.startswith(f"error: {tmp_path / 'no-editor'}: Editing failed")
    assert err.count("\n") == 1
    assert (root / "canon" / "identity.yaml").read_bytes() == before
