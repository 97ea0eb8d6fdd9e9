"""The default authority table as plain data: who may write and read which layer.

:mod:`evolving_agent.memory.canon.policy` overlays it with ``canon/policy.yaml`` (parsed with
ruamel and checked with pydantic); this module needs neither, so the friction fast path
(:mod:`evolving_agent.memory.evidence.frictionfast`) can check an actor and, for a policy that
overrides no grant (:func:`grants_nothing`), the write table itself.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from evolving_agent.errors import InvalidInput
from evolving_agent.paths import AREAS

Actor = Literal["human", "session", "nightly", "weekly", "monthly"]
ACTORS: tuple[str, ...] = get_args(Actor)
JOB_ACTORS = ("nightly", "weekly", "monthly")

DEFAULT_WRITE: dict[str, frozenset[str]] = {
    "canon": frozenset({"human", "monthly"}),  # monthly only with an approved review
    "live": frozenset(ACTORS),
    "today": frozenset({"human", "nightly"}),
    "evidence": frozenset(ACTORS),  # append only, never replace
    "proposals": frozenset({"weekly"}),
    "pending": frozenset({"monthly"}),
    "decisions": frozenset({"human"}),
}

READ_SCOPES: dict[str, frozenset[str]] = {
    "human": frozenset(AREAS),
    "session": frozenset({"canon", "live", "today"}),
    "nightly": frozenset({"today", "evidence"}),
    "weekly": frozenset({"evidence", "proposals"}),
    "monthly": frozenset({"proposals", "pending", "decisions"}),
}

# Grants that no override may add: they are the product's reason to exist.
CANON_WRITERS_ALLOWED = frozenset({"human", "monthly"})

# The bounds of policy.yaml's review settings (policy.ReviewSettings checks them).
MONTHLY_LIMIT_MAX = 50  # approved identity diffs per month
FRACTION_MAX = 1.0  # removal_confirm_fraction is in (0, FRACTION_MAX]

# schedule.yaml names the command a reflector runs and crons/ holds the prompts the
# jobs send to a model: whoever changes them steers every job.  They are tracked and
# verified like Canon, and only the human changes them (no override, no review).
HUMAN_ONLY_WRITERS = frozenset({"human"})


def check_actor(actor: str) -> str:
    if actor not in ACTORS:
        raise InvalidInput(f"unknown actor {actor!r} (valid: {', '.join(ACTORS)})")
    return actor


# The lines a policy.yaml that grants nothing may hold (YAML's block style, as the
# template writes it): comments, blank lines, the schema version, and review settings.
_COMMENT = r"(?:\s+#.*)?"
_TOP = {
    "schema_version": re.compile(r"schema_version:[ ]+1" + _COMMENT),
    "review": re.compile(r"review:" + _COMMENT),
}
_REVIEW = {
    "monthly_limit": re.compile(
        r"(?P<indent>[ ]+)monthly_limit:[ ]+(?P<v>0|[1-9][0-9]?)" + _COMMENT
    ),
    "removal_confirm_fraction": re.compile(
        r"(?P<indent>[ ]+)removal_confirm_fraction:[ ]+(?P<v>0\.[0-9]{1,6}|1(?:\.0{1,6})?)"
        + _COMMENT
    ),
}


def grants_nothing(data: bytes) -> bool:
    """Whether ``policy.yaml``'s bytes surely override no grant and are valid.

    True only for the plain shape of the shipped template: comment and blank lines, at
    most one ``schema_version: 1``, at most one ``review:`` holding ``monthly_limit``
    and ``removal_confirm_fraction`` within their bounds, each key once.  Such a file
    leaves :data:`DEFAULT_WRITE` as the write table and parses cleanly; anything else
    (a ``write:`` table, flow style, quotes, escapes, tags, tabs, an out-of-range
    value) is False, and the caller parses it for real (memory/canon/policy.py).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    seen: set[str] = set()
    indent: str | None = None
    in_review = False
    for line in text.split("\n"):
        if "\t" in line or "\r" in line or "\ufeff" in line:
            return False
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        top = next((k for k, rx in _TOP.items() if rx.fullmatch(line)), None)
        if top is not None:
            if top in seen:
                return False
            seen.add(top)
            in_review = top == "review"
            continue
        key = next((k for k, rx in _REVIEW.items() if rx.fullmatch(line)), None)
        match = _REVIEW[key].fullmatch(line) if key is not None else None
        if match is None or not in_review or key in seen:
            return False
        if indent is not None and match["indent"] != indent:
            return False
        indent = match["indent"]
        seen.add(key)  # type: ignore[arg-type]  # key is not None when match is not
        value = float(match["v"])
        if key == "monthly_limit" and value > MONTHLY_LIMIT_MAX:
            return False
        if key == "removal_confirm_fraction" and not 0 < value <= FRACTION_MAX:
            return False
    # A "review:" with nothing under it is null, which the settings model refuses.
    return bool(seen) and ("review" not in seen or indent is not None)
