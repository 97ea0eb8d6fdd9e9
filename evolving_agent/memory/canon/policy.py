"""Who may write and read what: the authority table.

The default table lives here, in code.  ``canon/policy.yaml`` may override the write
table and the review settings; since only the human can write Canon, only the human
can change who may write what.  Two rules cannot be overridden: Canon is written by
the human or by the monthly job holding an approved review (the nightly job has no
authority over Canon, ever), and Evidence is append-only for everyone.

Read scopes are the slow clock: the nightly job sees Today and Evidence, the weekly
job one week of Evidence (and its own proposals), the monthly job the proposals and
the queue.  Boot (the session) sees Canon, Today and the Live Bus.

``schedule.yaml`` and ``crons/`` sit outside the layers but are the human's alone
(:data:`HUMAN_ONLY_WRITERS`): tracked in git and verified like Canon.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evolving_agent.errors import InvalidInput
from evolving_agent.memory.base.authority_table import (  # re-exported: the table, where it was
    ACTORS,
    CANON_WRITERS_ALLOWED,
    DEFAULT_WRITE,
    FRACTION_MAX,
    HUMAN_ONLY_WRITERS,
    JOB_ACTORS,
    MONTHLY_LIMIT_MAX,
    READ_SCOPES,
    Actor,
    check_actor,
)
from evolving_agent.memory.base.yamlio import parse_yaml, validate
from evolving_agent.paths import AREAS, MemoryRoot

__all__ = ["ACTORS", "HUMAN_ONLY_WRITERS", "JOB_ACTORS", "Actor", "check_actor"]

POLICY_FILE = "policy.yaml"


class ReviewSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    monthly_limit: int = Field(
        3, ge=0, le=MONTHLY_LIMIT_MAX, description="Approved identity diffs per month"
    )
    removal_confirm_fraction: float = Field(
        0.25,
        gt=0,
        le=FRACTION_MAX,
        description="Diffs removing more than this share of entries ask twice",
    )


class PolicyFile(BaseModel):
    """``canon/policy.yaml``: the human's override of the default authority table."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: int = 1
    write: dict[str, list[Actor]] = Field(default_factory=dict)
    review: ReviewSettings = Field(default_factory=ReviewSettings)

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, v: int) -> int:
        if v > 1:
            raise ValueError(f"schema version {v} is newer than this evolving-agent understands")
        return v

    @field_validator("write")
    @classmethod
    def _sane_grants(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        for area, actors in v.items():
            if area not in AREAS:
                raise ValueError(f"unknown layer {area!r} (valid: {', '.join(AREAS)})")
            if area == "canon" and not set(actors) <= CANON_WRITERS_ALLOWED:
                raise ValueError(
                    "only 'human' and 'monthly' (with an approved review) may write canon"
                )
        return v


class Policy:
    """The effective policy: defaults overlaid with the Canon override."""

    def __init__(self, file: PolicyFile | None = None) -> None:
        self.file = file or PolicyFile()
        self.write_table = dict(DEFAULT_WRITE)
        for area, actors in self.file.write.items():
            self.write_table[area] = frozenset(actors)

    @classmethod
    def load(cls, root: MemoryRoot) -> Policy:
        """The effective policy of ``root``: the ``policy.yaml`` of the last writer commit.

        A ``canon/policy.yaml`` edited (or deleted) behind the writer's back is not
        trusted: like boot, the policy comes from the Canon the writer last committed,
        and from the code's defaults when that cannot be read (no git history).  Parsed
        once per version of the file on disk (every Evidence append asks: hot path).
        """
        path = root.policy_file
        try:
            st = path.stat()
            key: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            key = None
        cached = _CACHE.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        from evolving_agent.memory.canon.canon_snapshot import load_canon

        try:
            canon = load_canon(root)
        except InvalidInput:
            return cls()  # no readable history: nothing to trust but the defaults
        data = canon.files.get(POLICY_FILE)
        if data is None:
            policy = cls()
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInput("not UTF-8 text", file=path) from None
            policy = cls(validate(PolicyFile, parse_yaml(text, file=path), file=path))
        if canon.from_disk:  # a hand edit is re-checked on every call until it is fixed
            _CACHE[path] = (key, policy)
        return policy

    @property
    def review(self) -> ReviewSettings:
        return self.file.review

    def may_write(self, actor: str, area: str) -> bool:
        return actor in self.write_table.get(area, frozenset())

    @staticmethod
    def may_read(actor: str, area: str) -> bool:
        return area in READ_SCOPES.get(actor, frozenset())


# Round-trip YAML parsing costs ~20 ms; every Evidence append consults the policy.
_CACHE: dict[Path, tuple[tuple[int, int, int] | None, Policy]] = {}
