"""The plots that draw one line per dimension's value read it from its column:
failover's timeline per fault, the room's latency CDF per quantile (results
written before dimensions were columns, tests/data/results-named, as read)."""

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from vnetbench.analysis.results import load_results
from vnetbench.core.schema import parameter_column
from vnetbench.declared import DECLARED
from vnetbench.declared.declaration import PercentileCdf, Timeline
from vnetbench.report.plots import capacity_figure, fault_timelines, percentile_points
from vnetbench.runs.capacity import Clause


def test_failover_timelines_per_overlay_and_fault_with_the_fault_s_instant(
        data_dir: Path) -> None:
    (spec,) = [f for f in DECLARED["failover"].figures if isinstance(f, Timeline)]
    found = fault_timelines(load_results(data_dir / "results-named"), spec)
    assert set(found) == {(o, f) for o in ("baseline", "wireguard")
                          for f in ("switch-restart", "backbone-down")}
    passes = found[("wireguard", "backbone-down")]
    assert len(passes) == 2 and all(one.start == 1.5 for one in passes)
    # written before the lift was stamped: no end mark, rather than a made-up one
    assert all(one.end != one.end for one in passes)
    line = passes[0].line
    assert line["interval_s"].tolist() == [0.5, 1.0, 1.5, 2.0]
    assert line["value"].tolist() == [1.0, 1.0, 0.25, 1.0]


def test_room_cdf_points_per_quantile(data_dir: Path) -> None:
    (spec,) = [f for f in DECLARED["room"].figures if isinstance(f, PercentileCdf)]
    points = percentile_points(load_results(data_dir / "results-named"), spec.metric)
    assert list(points) == ["baseline", "wireguard"]
    assert points["baseline"].index.tolist() == [50.0, 99.9]
    assert points["baseline"].tolist() == pytest.approx([5.0 * 1.075, 40.0 * 1.075])


def test_capacity_draws_fairness_on_its_own_index_axis_not_the_ms_one() -> None:
    frame = pd.DataFrame({
        "metric": ["room_p99_ms", "room_fairness", "room_failed"] * 2,
        "value": [12.0, 0.99, 0, 80.0, 0.7, 3],
        parameter_column("machines"): [20] * 3 + [40] * 3})
    clauses = [Clause("p99", "room_p99_ms", 50.0), Clause(
        "fairness", "room_fairness", 0.9, at_least=True, kind="floor")]
    figure = capacity_figure(frame, "machines", clauses)
    assert figure is not None
    try:
        labels = {axes.get_ylabel(): [line.get_label() for line in axes.get_lines()
                                      if not line.get_label().startswith("_")]
                  for axes in figure.axes}
    finally:
        plt.close(figure)
    assert labels["ms (dashed: the target)"] == ["p99"]
    assert labels["Jain's index (dashed: the floor)"] == ["fairness"]
    # without a fairness clause: one panel, as before
    only = capacity_figure(frame, "machines", clauses[:1])
    assert only is not None and len(only.axes) == 2  # the ms axis and its failed twin
    plt.close(only)
