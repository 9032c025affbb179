"""Change points in a series of results (pure): E-divisive means (Matteson & James
2014, as MongoDB's and Hunter's performance CI use it) with a permutation test,
then a magnitude floor and a persistence rule.

Written here rather than taken from a library (checked December 2026, each
wheel's metadata read): apache-otava 0.8.0 pins numpy 2.2 and scipy < 1.17
(this project runs numpy 2.4, scipy 1.17) and pulls in BigQuery, PostgreSQL
and Slack clients; MongoDB's signal-processing-algorithms 2.1.6 needs numpy < 2,
gevent and Python 3.11 only; ruptures 1.1.10 is light (numpy, scipy) but its
searches choose breakpoints by a penalty, with no significance test, so the
gate would be written here anyway. The statistic and its permutation test are
~60 lines of numpy.

A change is kept when (1) the permutation test finds its split significant
(p <= alpha), (2) the means of the segments either side of it (to the
neighbouring change points) differ by more than the floor, and (3) at least
`min_points` points lie on each side of it, so the new level has persisted
(one point after a change is an outlier until the next one agrees).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

ALPHA = 0.05  # the permutation test's significance level per split
PERMUTATIONS = 199  # p resolves to 0.005; 199 + 1 keeps p = (k + 1) / 200 exact
MIN_POINTS = 2  # points each side of a change: the change must persist over two
DEFAULT_FLOOR_PCT = 5.0  # the magnitude floor when no A/A measured one
SEED = 39  # the permutations' seed: the same series always gives the same answer
_BATCH_CELLS = 2_000_000  # permutations x n x n held at once (16 MB)


@dataclass(frozen=True)
class ChangePoint:
    """A level change: `index` is the first point of the new level."""

    index: int
    p: float  # the permutation test's p of the split that found it
    before: float  # mean of the segment before it (from the previous change point)
    after: float  # mean of the segment after it (to the next change point)

    @property
    def change_pct(self) -> float:
        """(after / before - 1) in %; from a zero mean, +-inf (beyond any floor)."""
        if self.before == 0:
            return 0.0 if self.after == 0 else math.copysign(math.inf, self.after)
        return (self.after / self.before - 1) * 100


def divergence(series: NDArray[np.float64], min_points: int) -> NDArray[np.float64]:
    """E-divisive's Q(tau) for every split of each row of `series` (k x n): the
    scaled energy distance between points [0, tau) and [tau, n), tau from
    min_points to n - min_points; shape k x (n - 2 min_points + 1)."""
    n = series.shape[1]
    distance = np.abs(series[:, :, None] - series[:, None, :])
    square = np.zeros((series.shape[0], n + 1, n + 1))
    square[:, 1:, 1:] = distance.cumsum(axis=1).cumsum(axis=2)  # sums of [0,i) x [0,j)
    tau = np.arange(min_points, n - min_points + 1)
    left = square[:, tau, tau]
    across = square[:, tau, n] - left
    right = square[:, n, n][:, None] - 2 * square[:, tau, n] + left
    size_left, size_right = tau, n - tau
    energy = (2 * across / (size_left * size_right) - left / (size_left * (size_left - 1))
              - right / (size_right * (size_right - 1)))
    result: NDArray[np.float64] = size_left * size_right / n * energy
    return result


def best_split(values: NDArray[np.float64], min_points: int,
               rng: np.random.Generator, permutations: int) -> tuple[int, float, float]:
    """The split of `values` with the largest Q: its index, Q and permutation p."""
    q = divergence(values[None, :], min_points)[0]
    at = int(np.argmax(q))
    observed = float(q[at])
    n = values.size
    batch = max(1, _BATCH_CELLS // (n * n))
    as_large = 0
    for start in range(0, permutations, batch):
        count = min(batch, permutations - start)
        shuffled = rng.permuted(np.broadcast_to(values, (count, n)), axis=1)
        as_large += int((divergence(shuffled, min_points).max(axis=1)
                         >= observed * (1 - 1e-12)).sum())
    return at + min_points, observed, (as_large + 1) / (permutations + 1)


def e_divisive(values: NDArray[np.float64], alpha: float, permutations: int,
               min_points: int, seed: int) -> dict[int, float]:
    """Hierarchical E-divisive: split the segment with the largest Q while its split
    is significant; the change points found (index -> p)."""
    rng = np.random.default_rng(seed)
    found: dict[int, float] = {}
    while True:
        edges = [0, *sorted(found), values.size]
        candidates = [(start, *best_split(values[start:end], min_points, rng, permutations))
                      for start, end in pairwise(edges)
                      if end - start >= 2 * min_points and np.ptp(values[start:end]) > 0]
        if not candidates:
            return found
        start, split, _, p = max(candidates, key=lambda c: c[2])
        if p > alpha:
            return found
        found[start + split] = p


def with_means(values: NDArray[np.float64], found: dict[int, float]) -> list[ChangePoint]:
    """Each change point with the means of its neighbouring segments."""
    edges = [0, *sorted(found), values.size]
    return [ChangePoint(index, found[index], float(values[before:index].mean()),
                        float(values[index:after].mean()))
            for before, index, after in zip(edges, edges[1:], edges[2:], strict=False)]


def change_points(values: Sequence[float], floor_pct: float, alpha: float = ALPHA,
                  permutations: int = PERMUTATIONS, min_points: int = MIN_POINTS,
                  seed: int = SEED) -> list[ChangePoint]:
    """The changes in `values` (in order; nan points left out by the caller) that are
    significant, larger than `floor_pct` % and persist over `min_points` points.
    Changes within the floor are dropped smallest first, the others' means taken
    again over the wider segments left."""
    series = np.asarray(values, dtype=float)
    if np.isnan(series).any():
        raise ValueError("change_points takes a series without nan")
    found = e_divisive(series, alpha, permutations, min_points, seed)
    while True:
        points = with_means(series, found)
        small = [c for c in points if abs(c.change_pct) <= floor_pct]
        if not small:
            return points
        del found[min(small, key=lambda c: abs(c.change_pct)).index]
