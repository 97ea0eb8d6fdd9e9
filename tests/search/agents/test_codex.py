"""Codex's arguments (``search/agents/codex.py``): the sandbox a new turn gets, and resumed
turns that keep it.  The runs themselves (a fake codex CLI) are tests/search/test_agents.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_agent.errors import UsageError
from evolving_agent.search.agents.codex import (
    SANDBOX_DEFAULT,
    derive_resume_args,
    new_args,
    sandbox_mode,
)

MODES = st.sampled_from(["read-only", "workspace-write", "danger-full-access"])
# Argument pieces a user may give codex exec that exec resume also takes.
PIECES = st.one_of(
    MODES.map(lambda m: ["-s", m]),
    MODES.map(lambda m: [f"--sandbox={m}"]),
    MODES.map(lambda m: ["-c", f'sandbox_mode="{m}"']),
    st.just(["--full-auto"]),
    st.sampled_from(["o3", "gpt-5"]).map(lambda m: ["-m", m]),
    st.just(["-c", "model_reasoning_effort=high"]),
    st.just(["--strict-config"]),
)
ARGS = st.lists(PIECES, max_size=4).map(lambda parts: [a for p in parts for a in p])


def test_a_new_turn_gets_a_writable_sandbox_unless_the_user_chose_one() -> None:
    assert new_args(["-m", "o3"]) == [*SANDBOX_DEFAULT, "-m", "o3"]
    assert new_args(["-s", "read-only"]) == ["-s", "read-only"]
    assert new_args(["--full-auto"]) == list(SANDBOX_DEFAULT)  # the removed flag's equivalent
    assert sandbox_mode(new_args([])) == "workspace-write"
    assert sandbox_mode([]) == "read-only"  # codex's own default
    assert sandbox_mode(["--sandbox", "danger-full-access"]) is None
    assert sandbox_mode(["--dangerously-bypass-approvals-and-sandbox"]) is None


@settings(max_examples=50)
@given(ARGS)
def test_a_resumed_turn_runs_in_the_sandbox_of_a_new_one(args: list[str]) -> None:
    first = new_args(args)
    assert sandbox_mode(derive_resume_args(first)) == sandbox_mode(first)


@settings(max_examples=50)
@given(ARGS)
def test_resume_args_keep_every_option_resume_takes(args: list[str]) -> None:
    resumed = derive_resume_args(args)
    for flag, value in zip(args, args[1:], strict=False):
        if flag in ("-m", "--strict-config") or (flag == "-c" and "sandbox" not in value):
            assert flag in resumed
    assert not any(a in ("-s", "--full-auto") or a.startswith("--sandbox") for a in resumed)


def test_an_option_resume_does_not_take_is_named() -> None:
    with pytest.raises(UsageError, match="codex exec resume does not take --profile"):
        derive_resume_args(["--profile", "work"])
    assert derive_resume_args(["--config=model=o3", "prompt"]) == ["--config=model=o3", "prompt"]
