"""Drift's pendulum recall and false-positive rate over generated lives (issue 30, inv. 7).

Each life (``tests/helpers/lives.py``, seeded) has its hypotheses and friction written
into a fresh root as the owner's sessions would; the drift watch then runs over the
whole life.  Reported: the planted pendulums flagged (recall, goal ≥ 95%), the calm
lives flagged (goal ≤ 5%), and the pendulum flags citing an event of no planted
pendulum (coincidence; goal 0).

Run:  python benchmarks/bench_drift.py [--lives 200] [--first-seed 0]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.drift_lives import drift_of  # noqa: E402
from tests.helpers.lives import generate_life  # noqa: E402
from tests.helpers.roots import fresh_root  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lives", type=int, default=200)
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args()
    planted = hit = calm = calm_flagged = stray = 0
    tagged = untagged = tagged_hit = untagged_hit = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.first_seed, args.first_seed + args.lives):
            life = generate_life(seed)
            g = drift_of(life, fresh_root(Path(tmp) / f"life-{seed}"))
            has_untagged = life.truth.untagged_pendulum is not None
            has_tagged = any(s.role == "pendulum" for s in life.hypotheses)
            tagged += has_tagged
            untagged += has_untagged
            if g.planted:
                planted += 1
                hit += g.flagged
                tagged_hit += has_tagged and g.flagged
                untagged_hit += has_untagged and g.flagged
            else:
                calm += 1
                calm_flagged += g.calm_flagged
            stray += bool(g.stray)
    print(f"lives {args.lives} (seeds {args.first_seed}..{args.first_seed + args.lives - 1})")
    print(
        f"pendulum recall: {hit}/{planted} lives ({100 * hit / max(planted, 1):.1f}%); "
        f"with a tagged pendulum {tagged_hit}/{tagged}, untagged {untagged_hit}/{untagged}"
    )
    print(f"calm lives flagged: {calm_flagged}/{calm} ({100 * calm_flagged / max(calm, 1):.1f}%)")
    print(f"lives with a pendulum flag from coincidence: {stray}")


if __name__ == "__main__":
    main()
