"""Series of results directories made from recorded values, with and without an
injected step, and the change-point detection measured on them (the unit test
asserts the rates; docs/reports.md publishes a larger run of `measure`).

The noise is this machine's. A point of a series is one results directory: one
session of 3 passes (as results-quick). Its deviation from the level is a
session offset, drawn from the 12 bring-ups of the recorded A/A
(tests/data/ab-aa-baseline, one pass each, 6 rounds x 2 arms, each relative to
its arm's mean) scaled to the part of their spread that passes within one
session do not explain, plus the mean of 3 pass deviations drawn from
results-quick's passes (relative to their mean); both resampled with a Gaussian
jitter of Silverman's bandwidth (a smoothed bootstrap), from a fixed seed. The
level is results-quick's mean; the floor is the A/A's noise.json figure for the
metric (or the default when none).
A step multiplies every point from a random position on by 1.1 or 0.9; it is
found when a change point lies within one point of where it was injected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from vnetbench.analysis.changepoints import DEFAULT_FLOOR_PCT, MIN_POINTS, change_points

DATA = Path(__file__).parent / "data"
AA = DATA / "ab-aa-baseline"
QUICK = DATA / "results-quick"
STEP = 0.10


def smoothed_bootstrap(values: NDArray[np.float64], rng: np.random.Generator,
                       size: int | tuple[int, int]) -> NDArray[np.float64]:
    """Draws from `values` with a Gaussian jitter of Silverman's bandwidth."""
    bandwidth = 1.06 * values.std(ddof=1) * values.size ** -0.2
    picked: NDArray[np.float64] = rng.choice(values, size) + bandwidth * rng.standard_normal(
        size)
    return picked


@dataclass(frozen=True)
class Noise:
    """A metric's recorded level, spread and A/A floor. A point (one results directory)
    is one session: a session offset (the A/A's spread between bring-ups less the
    spread between passes of one session) plus the mean of `passes` pass deviations."""

    metric: str
    level: float
    sessions: NDArray[np.float64]  # the A/A's bring-ups, relative to their arm's mean
    passes: NDArray[np.float64]  # results-quick's passes, relative to their mean
    floor_pct: float

    @property
    def session_share(self) -> float:
        """sd(session offset) / sd(A/A bring-ups): the part not explained by passes."""
        total, within = self.sessions.var(ddof=1), self.passes.var(ddof=1)
        return float(np.sqrt(max(total - within, 0.0) / total))

    @property
    def point_cv(self) -> float:
        """The coefficient of variation of a point (a session of len(passes) passes)."""
        return float(np.sqrt(self.sessions.var(ddof=1) * self.session_share ** 2
                             + self.passes.var(ddof=1) / self.passes.size))

    def draw(self, rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        """`size` points."""
        offset = self.session_share * smoothed_bootstrap(self.sessions, rng, size)
        within = smoothed_bootstrap(self.passes, rng, (size, self.passes.size)).mean(axis=1)
        return self.level * (1 + offset + within)


def relative_deviations(values: pd.Series) -> NDArray[np.float64]:
    mean = float(values.mean())
    return np.asarray(values / mean - 1, dtype=float)


def recorded_noise(metric: str) -> Noise:
    aa = pd.read_parquet(AA / "results.parquet")
    quick = pd.read_parquet(QUICK / "results.parquet")
    aa_values = aa[aa["metric"] == metric]
    passes = quick[quick["metric"] == metric]["value"]
    floor = json.loads((AA / "noise.json").read_text())["metrics"][
        f"throughput/baseline/{metric}"]["noise_pct"]
    return Noise(metric, float(passes.mean()),
                 np.concatenate([relative_deviations(arm["value"])
                                 for _, arm in aa_values.groupby("variant")]),
                 relative_deviations(passes), float(floor))


@dataclass(frozen=True)
class Rates:
    metric: str
    floor_pct: float
    steps: int
    found: int  # steps with a change point within one point of them
    clean: int
    alarms: int  # clean series with any change point
    extra: int  # change points on stepped series away from the step

    @property
    def detection(self) -> float:
        return self.found / self.steps

    @property
    def false_alarms(self) -> float:
        return self.alarms / self.clean


def measure(noise: Noise, series: int, seed: int, length: tuple[int, int] = (12, 30),
            floor_pct: float | None = None) -> Rates:
    """`series` stepped and `series` clean series of random lengths, judged with the
    A/A's floor (or `floor_pct`)."""
    rng = np.random.default_rng(seed)
    floor = noise.floor_pct if floor_pct is None else floor_pct
    found = alarms = extra = 0
    for _ in range(series):
        size = int(rng.integers(length[0], length[1] + 1))
        at = int(rng.integers(MIN_POINTS, size - MIN_POINTS + 1))
        stepped = noise.draw(rng, size)
        stepped[at:] *= 1 + STEP * rng.choice([-1, 1])
        indices = [c.index for c in change_points(stepped, floor)]
        found += any(abs(i - at) <= 1 for i in indices)
        extra += sum(abs(i - at) > 1 for i in indices)
        alarms += bool(change_points(noise.draw(rng, size), floor))
    return Rates(noise.metric, floor, series, found, series, alarms, extra)


def table(metrics: list[str], series: int, seed: int) -> str:
    """The Markdown table docs/reports.md shows: each metric with the A/A's floor and
    with the default floor."""
    lines = ["| metric | point CV | floor | steps found (±1 point) | other change points "
             "on stepped series | clean series with an alarm |", "|---|---|---|---|---|---|"]
    for metric in metrics:
        noise = recorded_noise(metric)
        cv = noise.point_cv * 100
        for floor, said in ((None, "A/A"), (DEFAULT_FLOOR_PCT, "default")):
            rates = measure(noise, series, seed, floor_pct=floor)
            lines.append(f"| {metric} | {cv:.1f} % | {rates.floor_pct:.1f} % ({said}) | "
                         f"{rates.found}/{rates.steps} ({rates.detection:.1%}) | "
                         f"{rates.extra} | {rates.alarms}/{rates.clean} "
                         f"({rates.false_alarms:.1%}) |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(["tcp_mbit", "rtt_mean_ms"], series=1000, seed=2026))
