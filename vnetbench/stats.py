"""Summaries over passes and the regression verdict (pure functions).

Ranges are lowest to highest, as the seed reports them; the coefficient of
variation says how far a figure can be trusted; the bootstrap gives a
confidence interval for NEW/OLD without assuming a distribution.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike

from vnetbench.metrics import Better


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
