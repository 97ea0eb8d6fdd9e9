"""The plain authority table, and which policy.yaml texts surely grant nothing
(memory/base/authority_table.py): the friction fast path trusts the default table only for
those, so every text it accepts must parse, through the real policy models, to exactly
that table."""

from __future__ import annotations

import pytest

from evolving_agent.memory.base.authority_table import DEFAULT_WRITE, grants_nothing
from evolving_agent.memory.base.yamlio import parse_yaml, validate
from evolving_agent.memory.canon.canon import POLICY_TEMPLATE
from evolving_agent.memory.canon.policy import Policy, PolicyFile

PLAIN = [
    POLICY_TEMPLATE,
    "schema_version: 1\n",
    "review:\n  monthly_limit: 0\n",
    "# mine\nschema_version: 1   # pinned\nreview:\n    monthly_limit: 50\n"
    "    removal_confirm_fraction: 1.0\n",
    "review:\n  removal_confirm_fraction: 0.5\n\n# trailing comment\n",
]

NOT_PLAIN = [
    "schema_version: 1\nwrite:\n  evidence: [human]\n",
    '"\\x77rite": {evidence: [human]}\n',  # a key spelled with an escape
    "{write: {evidence: [human]}}\n",  # flow style
    "schema_version: 1\nschema_version: 1\n",  # a duplicate key
    "review:\n  monthly_limit: 51\n",  # over its bound: the models refuse it
    "review:\n  removal_confirm_fraction: 0.0\n",
    "review:\n  monthly_limit: 3\n   removal_confirm_fraction: 0.2\n",  # uneven indent
    "review:\n",  # null settings
    "  monthly_limit: 3\n",  # outside review
    "review:\n\tmonthly_limit: 3\n",
    "schema_version: 2\n",
    "schema_version: 1#x\n",  # not a comment in YAML: the value is '1#x'
    "--- !!map\nschema_version: 1\n",
    "",
    "# only a comment\n",
]


@pytest.mark.parametrize("text", PLAIN)
def test_a_plain_policy_parses_to_the_default_table(text: str) -> None:
    assert grants_nothing(text.encode())
    policy = Policy(validate(PolicyFile, parse_yaml(text, file="policy.yaml"), file="policy.yaml"))
    assert policy.write_table == DEFAULT_WRITE


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_anything_else_is_left_to_the_real_parser(text: str) -> None:
    # Guards the fast path's permission check: a grant it cannot rule out is parsed for real.
    assert not grants_nothing(text.encode())


def test_bytes_that_are_not_utf8_are_left_to_the_real_parser() -> None:
    assert not grants_nothing(b"schema_version: 1\n# \xff\n")
