"""The chain writer's own JSON (memory/evidence/chain.py): a record's time is written exactly as
the pydantic models write it, since verify recomputes the hash through them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from evolving_agent.memory.evidence.chain import ts_json
from evolving_agent.memory.evidence.evidence import EvidenceDraft

TIMES = [
    datetime(2026, 12, 1, 11, 23, 51, 123456, tzinfo=UTC),
    datetime(2026, 12, 1, 11, 23, 51, 123456, tzinfo=timezone(timedelta(0))),
    datetime(2026, 12, 1, 11, 23, 51, tzinfo=UTC),
    datetime(2026, 12, 1, 0, 0, 0, 1000, tzinfo=timezone(timedelta(hours=5, minutes=30))),
    datetime(2026, 12, 1, 23, 59, 59, tzinfo=timezone(timedelta(hours=-3, minutes=-30))),
    datetime(2026, 6, 1, 8, 0, 0, 5, tzinfo=timezone(timedelta(hours=14))),
]


@pytest.mark.parametrize("ts", TIMES)
def test_a_time_is_written_as_the_models_write_it(ts: datetime) -> None:
    draft = EvidenceDraft(ts=ts, kind="friction", actor="session")
    assert ts_json(ts) == draft.model_dump(mode="json")["ts"]


def test_an_offset_the_models_would_cut_is_refused() -> None:
    # pydantic drops an offset's seconds; the fast path must not write a hash it breaks.
    with pytest.raises(ValueError, match="whole minutes"):
        ts_json(datetime(1890, 1, 1, tzinfo=timezone(timedelta(seconds=3661))))
    with pytest.raises(ValueError, match="offset"):
        ts_json(datetime(2026, 1, 1))
