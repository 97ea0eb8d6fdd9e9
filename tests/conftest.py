"""Shared fixtures: every test gets its own memory root under tmp_path and a git identity.

Git needs an author for commits; a fresh machine may have none, so the tests (like the
product itself, see ``memory/gitrepo.py``) never rely on a global one.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOLVING_AGENT_ROOT", str(tmp_path / "memory"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Human")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "human@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Human")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "human@example.invalid")
    monkeypatch.delenv("EVOLVING_AGENT_RAISE", raising=False)
    # Keep git from reading the developer's global config (hooks, signing, templates).
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def pytest_configure(config: pytest.Config) -> None:
    """Import every module of the package before any test freezes time.

    The CLI imports its modules lazily; a module first imported inside ``freeze_time``
    would bind freezegun's fake ``datetime`` into its pydantic models.  Users never
    import under a frozen clock, so the tests should not either.
    """
    import importlib
    import pkgutil

    import evolving_agent

    for info in pkgutil.walk_packages(evolving_agent.__path__, "evolving_agent."):
        if info.name != "evolving_agent.__main__":
            importlib.import_module(info.name)
