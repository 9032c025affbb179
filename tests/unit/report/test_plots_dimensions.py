"""The plots that draw one line per dimension's value read it from its column:
failover's timeline per fault, the room's latency CDF per quantile (results
written before dimensions were columns, tests/data/results-named, as read)."""

from pathlib import Path

import pytest

from vnetbench.report.plots import room_cdf_points, timelines
from vnetbench.results import load_results


def test_failover_timelines_per_overlay_and_fault_with_the_fault_s_instant(
        data_dir: Path) -> None:
    found = timelines(load_results(data_dir / "results-named"))
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
    points = room_cdf_points(load_results(data_dir / "results-named"))
    assert list(points) == ["baseline", "wireguard"]
    assert points["baseline"].index.tolist() == [50.0, 99.9]
    assert points["baseline"].tolist() == pytest.approx([5.0 * 1.075, 40.0 * 1.075])
