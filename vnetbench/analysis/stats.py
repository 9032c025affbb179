"""Summaries over passes and the regression verdict (pure functions).

Ranges are lowest to highest, as the seed reports them; the coefficient of
variation says how far a figure can be trusted; the bootstrap gives a
confidence interval for NEW/OLD without assuming a distribution.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from vnetbench.core.metrics import Better


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    low: float
    high: float
    cv: float  # standard deviation / mean (sample), 0 for one value


def summarise(values: ArrayLike) -> Summary:
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size == 0:
        return Summary(0, float("nan"), float("nan"), float("nan"), float("nan"))
    mean = float(data.mean())
    spread = float(data.std(ddof=1)) if data.size > 1 else 0.0
    cv = spread / abs(mean) if mean else float("nan")
    return Summary(int(data.size), mean, float(data.min()), float(data.max()), cv)


def format_range(summary: Summary, unit: str = "") -> str:
    """The seed's style: '640 to 666 Mbit/s', or one value when they agree."""
    if summary.n == 0:
        return "no value"
    low, high = _number(summary.low), _number(summary.high)
    text = low if low == high else f"{low} to {high}"
    return f"{text} {unit}".strip()


def _number(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.3f}"


class Verdict(StrEnum):
    BETTER = "better"
    WORSE = "worse"
    NO_CHANGE = "no change"
    UNKNOWN = "no verdict"
    NOT_JUDGED = "shown, not judged"  # noisy, or neither way is better (metrics.py)


@dataclass(frozen=True)
class Comparison:
    ratio: float  # mean(new) / mean(old)
    low: float  # bootstrap confidence interval of the ratio
    high: float
    verdict: Verdict


def bootstrap_ratio(
    old: ArrayLike, new: ArrayLike, iterations: int = 5000, confidence: float = 0.95,
    seed: int = 1,
) -> tuple[float, float, float]:
    """mean(new)/mean(old) and its percentile bootstrap interval over passes."""
    a = np.asarray(old, dtype=float)
    b = np.asarray(new, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        return float("nan"), float("nan"), float("nan")
    if a.mean() == 0:  # all zero before: unchanged if still zero, else no ratio
        return (1.0, 1.0, 1.0) if b.mean() == 0 else (float("nan"),) * 3
    rng = np.random.default_rng(seed)
    old_means = rng.choice(a, size=(iterations, a.size)).mean(axis=1)
    new_means = rng.choice(b, size=(iterations, b.size)).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = new_means / old_means
        ratios = ratios[np.isfinite(ratios)]
    if ratios.size == 0:
        return float(b.mean() / a.mean()), float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return float(b.mean() / a.mean()), float(low), float(high)


def compare_samples(old: ArrayLike, new: ArrayLike, better: Better,
                    threshold: float = 0.0) -> Comparison:
    """Verdict for one metric: a change counts only if the interval excludes 1
    and the ratio moved by more than `threshold` (e.g. 0.05 for 5 %); which way
    is better comes from the metric catalogue."""
    ratio, low, high = bootstrap_ratio(old, new)
    if np.isnan(ratio):
        return Comparison(ratio, low, high, Verdict.UNKNOWN)
    if low <= 1.0 <= high or abs(ratio - 1.0) <= threshold:
        return Comparison(ratio, low, high, Verdict.NO_CHANGE)
    if better is Better.NEITHER:
        return Comparison(ratio, low, high, Verdict.UNKNOWN)
    went_up = ratio > 1.0
    verdict = Verdict.BETTER if went_up == (better is Better.HIGHER) else Verdict.WORSE
    return Comparison(ratio, low, high, verdict)


# --- A/B over interleaved bring-ups -------------------------------------------------
#
# The unit of independence is a bring-up, not a pass: on a shared machine the drift
# between bring-ups (which core, what else runs, the stack's own start) is larger than
# the spread between passes of one stack (Kalibera and Jones 2013). `vnetbench ab`
# pairs the A and B bring-ups of each round, run back to back in the order A B, B A,
# A B..., so slow drift hits both sides of a pair alike, and judges the pairs' log
# ratios with the Wilcoxon signed-rank test: exact for small n, no normality assumed,
# one wild round cannot carry the verdict. The effect is the Hodges-Lehmann estimate
# (the median of the pairs' Walsh averages) with its distribution-free interval.
# A difference counts only if the test rejects "no change" at ALPHA *and* the effect
# is larger than a minimum effect: statistical significance alone flags changes too
# small to act on, which an A/A test of many metrics would show as false alarms.

ALPHA = 0.05


@dataclass(frozen=True)
class PairedComparison:
    pairs: int  # rounds with a value on both sides
    ratio: float  # B/A: exp of the Hodges-Lehmann estimate of the pairs' log ratios
    low: float  # its distribution-free confidence interval (1 - ALPHA, or wider)
    high: float
    p_value: float  # two-sided exact Wilcoxon signed-rank
    verdict: Verdict
    reason: str  # why no verdict, or '' (for people)


@lru_cache(maxsize=256)
def signed_rank_counts(n: int) -> tuple[int, ...]:
    """How many of the 2**n sign patterns give each sum of positive ranks 0..n(n+1)/2:
    the exact null distribution of Wilcoxon's W+ (no ties; kept: a sequential plan
    asks for the same n at every look)."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for total in range(len(counts) - 1, rank - 1, -1):
            counts[total] += counts[total - rank]
    return tuple(counts)


def signed_rank_p(differences: ArrayLike) -> float:
    """Two-sided exact p-value of the signed-rank test; zero differences dropped
    (Wilcoxon's own rule), ties in size get their mean rank."""
    d = np.asarray(differences, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    ranks = _ranks(np.abs(d))
    positive = float(ranks[d > 0].sum())
    smaller = min(positive, d.size * (d.size + 1) / 2 - positive)
    counts = signed_rank_counts(d.size)
    tail = sum(c for w, c in enumerate(counts) if w <= smaller + 1e-9)
    return float(min(1.0, 2 * tail / 2 ** int(d.size)))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    last = np.cumsum(counts)
    return np.asarray(((last - counts + 1 + last) / 2)[inverse], dtype=float)


def hodges_lehmann(differences: ArrayLike) -> tuple[float, float, float]:
    """The median of the Walsh averages and its interval at 1 - ALPHA: the k-th
    smallest and largest Walsh averages, k from the exact W+ distribution. With too
    few pairs for that confidence, the interval is the whole range of the averages."""
    d = np.asarray(differences, dtype=float)
    i, j = np.triu_indices(d.size)
    walsh = np.sort((d[i] + d[j]) / 2)
    counts = signed_rank_counts(d.size)
    total = 2 ** d.size
    below, k = 0, 0
    for w, count in enumerate(counts):  # largest k with P(W+ <= k - 1) <= ALPHA / 2
        if (below + count) / total > ALPHA / 2:
            break
        below += count
        k = w + 1
    k = max(k, 1)
    return float(np.median(walsh)), float(walsh[k - 1]), float(walsh[-k])


MIN_PAIRS = 6  # below this no outcome of the exact test reaches p < ALPHA (2/2**5 > 0.05)


def compare_rounds(a: ArrayLike, b: ArrayLike, better: Better,
                   min_effect: float, alpha: float = ALPHA) -> PairedComparison:
    """Verdict for one metric from paired rounds (a[i] and b[i] measured back to back).

    Pairs with a missing side are dropped. Values that are all positive are
    compared as log ratios; otherwise (a counter that can be 0) as differences
    relative to A's mean. `min_effect` is a fraction (0.05: 5 %); a verdict needs
    p < `alpha` (a sequential plan's looks pass their own: vnetbench/analysis/sequential.py).
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[both], y[both]
    nan = float("nan")
    if x.size == 0:
        return PairedComparison(0, nan, nan, nan, nan, Verdict.UNKNOWN, "no pair measured")
    if np.array_equal(x, y):
        return PairedComparison(int(x.size), 1.0, 1.0, 1.0, 1.0, Verdict.NO_CHANGE, "")
    logs = bool((x > 0).all() and (y > 0).all())
    if not logs and x.mean() <= 0:
        return PairedComparison(int(x.size), nan, nan, nan, nan, Verdict.UNKNOWN,
                                "A is 0 throughout: no ratio")
    d = np.log(y) - np.log(x) if logs else (y - x) / x.mean()

    def to_ratio(value: float) -> float:
        return float(np.exp(value)) if logs else 1.0 + value

    centre, low, high = hodges_lehmann(d)
    p_value = signed_rank_p(d)
    ratio = float(to_ratio(centre))
    result = PairedComparison(int(x.size), ratio, float(to_ratio(low)), float(to_ratio(high)),
                              p_value, Verdict.NO_CHANGE, "")
    if x.size < MIN_PAIRS:
        return replace(result, verdict=Verdict.UNKNOWN,
                       reason=f"{x.size} pairs: a verdict needs {MIN_PAIRS}")
    if p_value >= alpha or abs(ratio - 1.0) <= min_effect:
        return result
    if better is Better.NEITHER:
        return replace(result, verdict=Verdict.UNKNOWN, reason="neither way is better")
    went_up = ratio > 1.0
    verdict = Verdict.BETTER if went_up == (better is Better.HIGHER) else Verdict.WORSE
    return replace(result, verdict=verdict)


def noise_floor(a: ArrayLike, b: ArrayLike) -> tuple[int, float]:
    """From an A/A (the same build on both sides): the pairs, and the largest relative
    difference between the two bring-ups of a round (0.06: 6 %). Two separate runs of
    one build on this machine differ by about this much."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    both = ~np.isnan(x) & ~np.isnan(y) & (x != 0)
    x, y = x[both], y[both]
    if x.size == 0:
        return 0, float("nan")
    return int(x.size), float(np.abs(y / x - 1.0).max())
