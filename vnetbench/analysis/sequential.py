"""Confirm before alerting: the group-sequential plan `vnetbench ab` judges with.

A fixed number of rounds makes a verdict near the line final: a real change that
needs 12 rounds is "no change" at 8, and one lucky round can carry a p just under
0.05. Testing again at 0.05 after more rounds would raise the false-alarm rate with
every look, so the plan is a group-sequential design (Pocock, "Group sequential
methods in the design and analysis of clinical trials", Biometrika 64, 1977;
Jennison and Turnbull, *Group Sequential Methods with Applications to Clinical
Trials*, 2000, ch. 2):

- looks at fixed round counts: the planned rounds, then every `CONFIRM_STEP` more,
  up to a maximum (`looks`);
- Pocock's boundary, one nominal level at every look, chosen so that the chance of
  a verdict at *any* look under "no change" is at most ALPHA. It is calibrated on
  the exact signed-rank test itself: under "no change" (the pairs' differences
  independent and symmetric about 0, which an interleaved A/A is by construction)
  the signs are fair coins and the ranks a random order whatever the noise's
  distribution, so the joint law of the exact p-values at the looks is the same for
  every noise and one seeded simulation of it holds for all (`pocock_boundary`);
- a futility bound and the minimum effect stop a metric early without a verdict.
  Stopping without a verdict can only lower the false-alarm rate (every verdict
  such a plan gives, the plan without those stops gives too: a non-binding
  futility rule), so the boundary ignores them.

A metric is *close* at a look before the last when it has no verdict yet
(p above the boundary, or none reached: "no change"), p is below the futility
bound, and its 95 % interval of B/A still reaches past the minimum effect, so a
verdict can still come. `ab` adds rounds while any judged metric is close.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from vnetbench.analysis.stats import (
    ALPHA,
    PairedComparison,
    Verdict,
    compare_rounds,
    signed_rank_counts,
)
from vnetbench.core.metrics import Better

CONFIRM_STEP = 4  # rounds per further look: even, so each arm goes first in half of them
FUTILITY_P = 0.5  # a look with p at or above this stops: more rounds rarely turn it
CALIBRATION_PATHS = 40_000  # simulated sessions under "no change" (rate's SE 0.1 %)
CALIBRATION_SEED = 39


@dataclass(frozen=True)
class SequentialPlan:
    looks: tuple[int, ...]  # round counts at which the metrics are judged
    boundary_p: float  # Pocock: a verdict needs p <= this at any look
    futility_p: float = FUTILITY_P

    @property
    def most(self) -> int:
        return self.looks[-1]

    def next_look(self, rounds: int) -> int:
        """The look after `rounds` (the last one when there is none)."""
        return next((look for look in self.looks if look > rounds), self.most)

    def record(self) -> dict[str, object]:
        """What run.json keeps of the plan."""
        return {"method": "group-sequential, Pocock boundary on the exact signed-rank "
                          "test (vnetbench/analysis/sequential.py)",
                "looks": list(self.looks), "boundary_p": self.boundary_p,
                "futility_p": self.futility_p}


@dataclass(frozen=True)
class Judgement:
    """One metric's verdict under the plan, and the rounds it was taken on."""

    comparison: PairedComparison
    rounds: int
    close: bool  # still close at the last look measured: more rounds may decide it


def looks(first: int, most: int, step: int = CONFIRM_STEP) -> tuple[int, ...]:
    """first, first + step, ... and most (always the last look)."""
    return tuple(sorted({*range(first, most, step), most}))


@lru_cache(maxsize=32)
def plan_for(first: int, most: int) -> SequentialPlan:
    """The plan from `first` rounds up to `most` (a single look: the fixed test)."""
    planned = looks(first, most)
    return SequentialPlan(planned, pocock_boundary(planned))


def pocock_boundary(planned: tuple[int, ...], alpha: float = ALPHA,
                    paths: int = CALIBRATION_PATHS, seed: int = CALIBRATION_SEED) -> float:
    """The largest exact p that can be a verdict at every look while the chance of a
    verdict at any look under "no change" stays at most `alpha`, with a margin of two
    standard errors of the simulation (0 when no p is small enough)."""
    smallest = null_minimum_p(planned, paths, seed)
    values, counts = np.unique(smallest, return_counts=True)
    rate = np.cumsum(counts) / paths  # P(smallest p <= value)
    allowed = rate + 2 * np.sqrt(alpha * (1 - alpha) / paths) <= alpha
    return float(values[allowed][-1]) if allowed.any() else 0.0


def null_minimum_p(planned: tuple[int, ...], paths: int, seed: int) -> np.ndarray:
    """Per simulated session under "no change", the smallest exact two-sided p over
    the looks (continuous symmetric differences: the law is the same for any)."""
    d = np.random.default_rng(seed).standard_normal((paths, planned[-1]))
    smallest = np.ones(paths)
    for n in planned:
        first = d[:, :n]
        ranks = np.abs(first).argsort(axis=1).argsort(axis=1) + 1
        positive = np.where(first > 0, ranks, 0).sum(axis=1)
        smallest = np.minimum(smallest, exact_p_table(n)[positive])
    return smallest


@lru_cache(maxsize=128)
def exact_p_table(n: int) -> np.ndarray:
    """The two-sided exact p of the signed-rank test for each W+ of n pairs without
    ties, computed as vnetbench.analysis.stats.signed_rank_p computes it."""
    counts = signed_rank_counts(n)
    below, cumulative = 0, []
    for count in counts:
        below += count
        cumulative.append(below)
    total = n * (n + 1) // 2
    return np.array([min(1.0, 2 * cumulative[min(w, total - w)] / 2 ** n)
                     for w in range(total + 1)])


def is_close(result: PairedComparison, rounds: int, plan: SequentialPlan,
             min_effect: float) -> bool:
    """More rounds may still give this metric a verdict (see the module's docstring)."""
    if rounds >= plan.most or result.verdict is not Verdict.NO_CHANGE:
        return False
    if not plan.boundary_p < result.p_value < plan.futility_p:
        return False
    return bool(result.low < 1 - min_effect or result.high > 1 + min_effect)


def judge_sequentially(a: ArrayLike, b: ArrayLike, better: Better, min_effect: float,
                       plan: SequentialPlan) -> Judgement:
    """One metric's verdict from rounds in order (a[i] and b[i]: round i + 1): judged
    at each look measured until one is not close; a verdict needs p <= boundary_p."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    level = float(np.nextafter(plan.boundary_p, 1.0))  # compare_rounds needs p < level
    measured = [look for look in plan.looks if look <= x.size] or [x.size]
    for look in measured:
        result = compare_rounds(x[:look], y[:look], better, min_effect, alpha=level)
        if not is_close(result, look, plan, min_effect):
            return Judgement(result, look, False)
    return Judgement(result, look, look < plan.most)

