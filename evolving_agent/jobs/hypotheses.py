"""Moved to :mod:`evolving_agent.memory.hypotheses` (the register is a memory concept).

Kept so existing imports keep working; new code imports from ``memory.hypotheses``.
"""

from __future__ import annotations

from evolving_agent.memory.hypotheses import *  # noqa: F403
from evolving_agent.memory.hypotheses import (  # noqa: F401  # re-exported names
    FLOOR_DAYS,
    REGISTER_FILE,
    STATES,
    Hypothesis,
    HypothesisState,
    add_hypothesis,
    advance,
    apply_day,
    check_register,
    day_links,
    fold,
    fold_root,
    hypothesis_id,
    list_hypotheses,
    meets_floor,
    merge_into_register,
    read_register,
    rebuild_register,
    show_hypothesis,
    snapshot_data,
    snapshot_of,
)
