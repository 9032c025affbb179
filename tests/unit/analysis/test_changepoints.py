"""Change points (vnetbench/analysis/changepoints.py): where a level shift is found, what gates
it, and the detection and false-alarm rates on series made from recorded values
(tests/injected_steps.py; docs/reports.md publishes a larger run)."""

import math

import numpy as np
import pytest

from tests.injected_steps import measure, recorded_noise
from vnetbench.analysis.changepoints import change_points

NOISE = [1.2, -0.8, 0.5, -1.5, 0.9, -0.3, 1.1, -0.6, 0.2, -1.0, 0.7, -0.4]  # percent


def series(step_at: int, step_pct: float, size: int = 12) -> list[float]:
    return [100 * (1 + NOISE[i] / 100) * (1 + step_pct / 100 if i >= step_at else 1)
            for i in range(size)]


def test_a_step_is_found_where_it_starts_with_its_size_and_p() -> None:
    [change] = change_points(series(6, -10), floor_pct=5)
    assert change.index == 6 and change.p <= 0.05
    assert change.change_pct == pytest.approx(-10, abs=1.5)
    assert change.before == pytest.approx(np.mean(series(6, -10)[:6]))


def test_noise_alone_raises_nothing() -> None:
    assert change_points(series(0, 0), floor_pct=0) == []
    assert change_points([5.0] * 10, floor_pct=0) == []


def test_a_significant_step_within_the_floor_is_dropped() -> None:
    assert change_points(series(6, -10), floor_pct=12) == []
    assert [c.index for c in change_points(series(6, -10), floor_pct=8)] == [6]


def test_a_change_must_persist_over_two_points() -> None:
    assert change_points(series(11, 30), floor_pct=5) == []  # the last point only
    assert [c.index for c in change_points(series(10, 30), floor_pct=5)] == [10]


def test_two_steps_are_both_found_each_against_its_neighbours() -> None:
    values = [v * (0.85 if i >= 6 else 1) * (0.85 if i >= 12 else 1)
              for i, v in enumerate(series(0, 0) * 2)][:18]
    found = change_points(values, floor_pct=5)
    assert [c.index for c in found] == [6, 12]
    assert found[0].after == pytest.approx(np.mean(values[6:12]))


def test_a_rise_from_zero_is_beyond_any_floor() -> None:
    [change] = change_points([0.0] * 5 + [1.0, 1.0, 1.0, 1.0], floor_pct=1000)
    assert change.index == 5 and change.change_pct == math.inf


def test_the_same_series_gives_the_same_answer() -> None:
    values = series(5, 8)
    assert change_points(values, 5) == change_points(values, 5)


def test_a_nan_is_refused() -> None:
    with pytest.raises(ValueError, match="nan"):
        change_points([1.0, math.nan, 1.0, 1.0], 5)


def test_injected_10_percent_steps_are_found_and_clean_series_stay_quiet() -> None:
    """100 series of 12 to 30 directories with a 10 % step at a random position and
    100 without, the TCP rate's recorded noise and the recorded A/A's floor
    (±6.9 %): >= 90 % of the steps found within one point, <= 5 % false alarms."""
    rates = measure(recorded_noise("tcp_mbit"), series=100, seed=39)
    assert rates.detection >= 0.90, rates
    assert rates.false_alarms <= 0.05, rates
