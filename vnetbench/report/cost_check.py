"""`vnetbench cost --check-at N`: is the cost's straight line worth sizing from? The
fit is made from the room sizes below N only; at N it predicts each overlay's and
role's CPU (cores, at the requests/s measured at N) and memory per container, each
with a 95 % prediction interval, and the passes measured at N say whether it held.

The interval is ordinary least squares': ŷ ± t · s · √(1 + 1/n + (x₀ - x̄)² / Sxx),
s the residuals' standard deviation (n - 2 degrees of freedom) and t Student's
two-sided 95 % quantile. scipy is only a test dependency of the project, so t is
computed here (A&S 26.7.3-4, exact for whole degrees of freedom, then bisection)
and checked against scipy.stats.t.ppf in the unit tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from vnetbench.core.schema import OVERLAY, ROLE

LEVEL = 0.95
LEAST_POINTS = 3  # n - 2 >= 1: the residuals' spread needs a degree of freedom


@dataclass(frozen=True)
class Prediction:
    """One figure's prediction at N, its interval (nan without one: `why` says why)
    and the median of the passes measured at N."""

    value: float
    low: float
    high: float
    measured: float
    why: str = ""

    @property
    def inside(self) -> bool | None:
        return None if self.why else self.low <= self.measured <= self.high


@dataclass(frozen=True)
class Checked:
    overlay: str
    role: str
    cpu: Prediction  # cores
    memory: Prediction  # MiB per container
    points: int  # passes below N


def within(t: float, df: int) -> float:
    """P(|T| < t) for Student's T with `df` (whole) degrees of freedom."""
    theta = math.atan(t / math.sqrt(df))
    cos2, sin = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:
        term = acc = math.cos(theta) if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= cos2 * 2 * k / (2 * k + 1)
            acc += term
        return 2 / math.pi * (theta + sin * acc)
    term = acc = 1.0
    for k in range(1, df // 2):
        term *= cos2 * (2 * k - 1) / (2 * k)
        acc += term
    return sin * acc


def t_quantile(df: int, level: float = LEVEL) -> float:
    """The t with P(|T| < t) = level: bisection on `within`."""
    low, high = 0.0, 1.0
    while within(high, df) < level:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if within(middle, df) < level else (low, middle)
    return (low + high) / 2


def predict(x: pd.Series, y: pd.Series, x0: float, measured: float,
            sizes: int) -> Prediction:
    """The least-squares line's value at x0 with its prediction interval; `sizes`: the
    distinct room sizes behind the points (one size is no slope)."""
    xs, ys = np.asarray(x, float), np.asarray(y, float)
    n = len(xs)
    if math.isnan(measured):
        return Prediction(math.nan, math.nan, math.nan, measured, "not measured at N")
    if n < LEAST_POINTS:
        return Prediction(math.nan, math.nan, math.nan, measured,
                          f"{n} point(s) below, {LEAST_POINTS} needed (n - 2 < 1)")
    spread = float(((xs - xs.mean()) ** 2).sum())
    if sizes < 2 or spread == 0:
        return Prediction(math.nan, math.nan, math.nan, measured,
                          "one room size below: no slope to extend")
    slope, intercept = np.polyfit(xs, ys, 1)
    value = float(slope * x0 + intercept)
    s = math.sqrt(float(((ys - (slope * xs + intercept)) ** 2).sum()) / (n - 2))
    half = t_quantile(n - 2) * s * math.sqrt(1 + 1 / n + (x0 - xs.mean()) ** 2 / spread)
    return Prediction(value, value - half, value + half, measured)


def check(points: pd.DataFrame, at: int) -> list[Checked]:
    """Each overlay and role measured at `at`: its CPU and memory predicted from the
    passes below `at`, against the median of its passes at `at`."""
    below, measured = points[points["machines"] < at], points[points["machines"] == at]
    rows = []
    for (overlay, role), here in measured.groupby([OVERLAY, ROLE], sort=False):
        own = below[(below[OVERLAY] == overlay) & (below[ROLE] == role)]
        cpu, memory = own.dropna(subset=["cores", "rate"]), own.dropna(subset=["mib"])
        rows.append(Checked(
            str(overlay), str(role),
            predict(cpu["rate"], cpu["cores"], float(here["rate"].median()),
                    float(here["cores"].median()), cpu["machines"].nunique()),
            predict(memory["machines"], memory["mib"], float(at),
                    float(here["mib"].median()), memory["machines"].nunique()),
            len(own)))
    return rows


def cell(prediction: Prediction, digits: int) -> str:
    if prediction.why:
        return f"no interval ({prediction.why})"
    return (f"{prediction.value:.{digits}f} [{prediction.low:.{digits}f}, "
            f"{prediction.high:.{digits}f}]")


def verdict(prediction: Prediction) -> str:
    return {None: "-", True: "yes", False: "**no**"}[prediction.inside]


def pipe_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table's lines: the header, its rule, a line per row."""
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows)]


def check_section(rows: Sequence[Checked], at: int) -> str:
    """cost.md's section: one row per overlay and role."""
    lines = [f"## Predicted at {at} against measured", "",
             f"The fit from the room sizes below {at} only; the interval is its 95 % "
             "prediction interval (ordinary least squares, Student's t with n - 2 degrees "
             f"of freedom); measured: the median of the passes at {at}. CPU is predicted "
             f"at the requests/s measured at {at}.", ""]
    lines += pipe_table(
        ("overlay", "role", "points below", "CPU predicted (cores)", "measured", "inside",
         "MiB per container predicted", "measured", "inside"),
        ((row.overlay, row.role, str(row.points), cell(row.cpu, 3), f"{row.cpu.measured:.3f}",
          verdict(row.cpu), cell(row.memory, 1), f"{row.memory.measured:.1f}",
          verdict(row.memory)) for row in rows))
    return "\n".join(lines)


def missed(rows: Sequence[Checked]) -> bool:
    """A measured figure outside its interval: the line did not predict the size."""
    return any(p.inside is False for row in rows for p in (row.cpu, row.memory))
