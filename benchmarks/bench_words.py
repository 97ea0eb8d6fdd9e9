"""Daily words over generated lives: the grader's glad fraction and failures by class.

    .venv/bin/python benchmarks/bench_words.py [--lives 200] [--first-seed 0] [--jobs 2]
        [--mornings FILE]

Each seed is a life from ``tests/helpers/lives.py`` (twelve languages, known truth),
lived in a fresh root through the real jobs with the rules reflector, every fresh
morning graded by ``tests/helpers/grader.py``.  Prints the glad fraction (goal >= 95 %),
the failing mornings per class, and the lives with any invariant violation (goal: 0).
``--mornings FILE`` writes one morning from each language seen, verbatim.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.helpers


def one(seed: int) -> tuple[int, int, int, dict[str, int], list[str], dict[str, str]]:
    from evolving_agent.reflectors import framing
    from tests.helpers.grader import all_invariants, grade
    from tests.helpers.lives import generate_life, live_life
    from tests.helpers.roots import fresh_root

    life = generate_life(seed)
    with tempfile.TemporaryDirectory() as d:
        lived = live_life(life, fresh_root(Path(d) / "memory"))
        rep = grade(lived)
        bad = all_invariants(rep, lived)
    by_lang: dict[str, str] = {}  # lang -> one grounded glad morning, "type|text"
    grounding_marks = [  # "Grounding, " in each language of the phrase table
        framing.words(lg)["grounding"].partition("{date}")[0] for lg in framing.languages()
    ]
    for g in rep.mornings:
        spec = life.spec(g.hypothesis or "")
        if spec is None and g.hypothesis:  # a raised pattern: the language it quotes
            lang = next((e.lang for e in life.events if e.text in g.bias), None)
        else:
            lang = spec.lang if spec else None
        grounded = any(m in g.bias for m in grounding_marks)
        if lang and g.glad and grounded and lang not in by_lang:
            by_lang[lang] = f"{g.type}|{g.morning} (seed {seed}, {g.type}):\n{g.bias}"
    return seed, rep.fresh, rep.glad, dict(rep.counts()), bad, by_lang


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lives", type=int, default=200)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mornings", type=Path)
    args = ap.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.lives)
    t0 = time.perf_counter()
    fresh = glad = 0
    counts: Counter[str] = Counter()
    violating: list[tuple[int, str]] = []
    mornings: dict[str, str] = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        for seed, f, g, c, bad, by_lang in pool.map(one, seeds):
            fresh, glad = fresh + f, glad + g
            counts.update(c)
            if bad:
                violating.append((seed, bad[0]))
            for lang, text in by_lang.items():
                ctype = text.split("|", 1)[0]
                used = {t.split("|", 1)[0] for t in mornings.values()}
                # one morning a language, as many types as the lives give
                if lang not in mornings or (ctype not in used and mornings[lang].split(
                        "|", 1)[0] in [t.split("|", 1)[0] for k, t in mornings.items()
                                       if k != lang]):
                    mornings[lang] = text
    took = time.perf_counter() - t0
    print(f"{len(seeds)} lives (seeds {seeds.start}..{seeds.stop - 1}), {fresh} fresh mornings, "
          f"{took:.0f} s")
    print(f"glad: {glad} of {fresh} mornings ({100 * glad / max(1, fresh):.1f} %)")
    print("failing mornings by class:")
    for cls, n in counts.most_common():
        print(f"  {cls:28} {n}")
    print(f"lives with an invariant violation: {len(violating)} of {len(seeds)}")
    for seed, line in violating[:5]:
        print(f"  seed {seed}: {line[:220]}")
    if args.mornings:
        args.mornings.write_text(
            "\n\n".join(
                f"[{lang}] {text.split('|', 1)[1]}" for lang, text in sorted(mornings.items())
            )
            + "\n"
        )
        print(f"mornings from {len(mornings)} languages written to {args.mornings}")


if __name__ == "__main__":
    main()
