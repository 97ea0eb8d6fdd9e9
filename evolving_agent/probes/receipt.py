"""The model-upgrade receipt: adherence per Canon entry and overall, before and after,
with a paired bootstrap interval, and whether the upgrade is held for the human.

Each probe was asked R times of each model (``probe run --repeats R``).  A probe's
*adherence* under a model is the share of its answers that honour it; an entry's is the
mean over its probes, and the overall one the mean over all probes.  The change (B − A,
in points) gets a 95% interval from a **two-stage paired bootstrap**: resample the
probes with replacement (the same probes for both models: paired), then, within each
drawn probe, each model's answers with replacement — so one misread answer among three
moves the estimate but cannot, alone, make the interval exclude zero.

An entry *fell* when its interval lies wholly below zero; the upgrade is *held* when the
overall change is below ``-threshold`` points (default 5) and its interval lies below
zero.  Deterministic: the bootstrap is seeded from the two models' names.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import math
import random
import statistics
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

ROUNDS = 4000
HOLD_THRESHOLD = 5.0  # points of overall adherence


class Adherence(BaseModel):
    """Adherence (0–100) under A and B for a set of probes, and the change's interval."""

    label: str  # the entry reference, or "overall"
    probes: int
    answers_a: int
    answers_b: int
    a: float
    b: float
    change: float  # b - a, points
    low: float  # the 95% interval of the change
    high: float
    fell: bool = False  # the interval lies wholly below zero

    def line(self) -> str:
        mark = "  FELL" if self.fell else ""
        return (
            f"{self.label}: {self.a:.0f}% -> {self.b:.0f}% ({self.change:+.0f} points, 95% "
            f"interval {self.low:+.0f} to {self.high:+.0f}; {self.probes} probe(s), "
            f"{self.answers_a}/{self.answers_b} answers){mark}"
        )


class Receipt(BaseModel):
    """What `probe diff` concludes about moving from model A to model B."""

    model_a: str
    model_b: str
    client_a: str  # the reflector / client that answered
    client_b: str
    repeats_a: int  # most answers one probe got
    repeats_b: int
    threshold: float = HOLD_THRESHOLD
    overall: Adherence | None = None
    entries: list[Adherence] = Field(default_factory=list)
    held: bool = False

    @property
    def fell(self) -> list[str]:
        return [e.label for e in self.entries if e.fell]

    def lines(self) -> list[str]:
        out = [
            f"receipt {self.model_a} ({self.client_a}, up to {self.repeats_a} answer(s) a probe)"
            f" -> {self.model_b} ({self.client_b}, up to {self.repeats_b})"
        ]
        if self.overall is None:
            return out + ["no probe was answered by both models"]
        out.append(self.overall.line())
        out += [f"  {e.line()}" for e in self.entries]
        if self.held:
            out.append(
                f"held: overall adherence fell more than {self.threshold:.0f} points with its "
                "interval below zero; the human approves the new model or keeps the old one"
            )
        if max(self.repeats_a, self.repeats_b) < 3:
            out.append(
                "note: fewer than 3 answers a probe: one misread answer can decide a verdict "
                "(probe run --repeats 3)"
            )
        return out


def _mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else 0.0


def _resampled(verdicts: Sequence[bool]) -> float | Callable[[random.Random], float]:
    """The mean of ``verdicts`` resampled with replacement: a constant when every answer is
    alike (every resample is the same), else a draw of Binomial(k, h/k) / k from its exact
    distribution in one step."""
    k, h = len(verdicts), sum(verdicts)
    if h in (0, k):
        return h / k
    p = h / k
    weights = (math.comb(k, i) * p**i * (1 - p) ** (k - i) for i in range(k + 1))
    cum = list(itertools.accumulate(weights))
    return lambda rng: min(bisect.bisect(cum, rng.random() * cum[-1]), k) / k


def _draw(sampler: float | Callable[[random.Random], float], rng: random.Random) -> float:
    return sampler if isinstance(sampler, float) else sampler(rng)


def adherence(
    label: str,
    probes: Sequence[tuple[Sequence[bool], Sequence[bool]]],
    *,
    seed: str,
    rounds: int = ROUNDS,
) -> Adherence | None:
    """The adherence of (A's verdicts, B's verdicts) per probe, and the change's interval.

    Probes either model left unanswered are left out (nothing to pair)."""
    paired = [(list(a), list(b)) for a, b in probes if a and b]
    if not paired:
        return None
    a = 100 * _mean([_mean(x) for x, _ in paired])
    b = 100 * _mean([_mean(y) for _, y in paired])
    rng = random.Random(hashlib.sha256(f"{seed}:{label}".encode()).hexdigest())
    n = len(paired)
    samplers = [(_resampled(y), _resampled(x)) for x, y in paired]
    fixed = [b - a for b, a in samplers if isinstance(b, float) and isinstance(a, float)]
    if len(fixed) == n and len(set(fixed)) == 1:
        low = high = 100 * fixed[0]  # every resample gives the same change
    else:
        if len(fixed) == n:  # no answer varies within a probe: resample the probes only
            draws = [100 * math.fsum(rng.choices(fixed, k=n)) / n for _ in range(rounds)]
        else:
            draws = [
                100
                * math.fsum(_draw(b, rng) - _draw(a, rng) for b, a in rng.choices(samplers, k=n))
                / n
                for _ in range(rounds)
            ]
        cuts = statistics.quantiles(draws, n=40, method="inclusive")
        low, high = cuts[0], cuts[-1]  # 2.5% and 97.5%
    return Adherence(
        label=label,
        probes=n,
        answers_a=sum(len(x) for x, _ in paired),
        answers_b=sum(len(y) for _, y in paired),
        a=a,
        b=b,
        change=b - a,
        low=low,
        high=high,
        fell=high < 0,
    )


def receipt(
    model_a: str,
    model_b: str,
    clients: tuple[str, str],
    by_entry: dict[str, list[tuple[list[bool], list[bool]]]],
    *,
    threshold: float = HOLD_THRESHOLD,
) -> Receipt:
    """The receipt for entries -> [(A's verdicts, B's verdicts) per probe]."""
    seed = f"{model_a}->{model_b}"
    every = [pair for pairs in by_entry.values() for pair in pairs]
    entries = [e for label, pairs in by_entry.items() if (e := adherence(label, pairs, seed=seed))]
    overall = adherence("overall", every, seed=seed)
    repeats = (
        max((len(a) for a, _ in every), default=0),
        max((len(b) for _, b in every), default=0),
    )
    held = overall is not None and overall.change < -threshold and overall.high < 0
    return Receipt(
        model_a=model_a,
        model_b=model_b,
        client_a=clients[0],
        client_b=clients[1],
        repeats_a=repeats[0],
        repeats_b=repeats[1],
        threshold=threshold,
        overall=overall,
        entries=entries,
        held=held,
    )
