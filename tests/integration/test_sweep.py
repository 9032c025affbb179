"""vnetbench sweep on real containers: one frame, one plot, the parameter's effect seen."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import leftovers
from tests.integration.test_shaping import (
    DELAY_TOLERANCE_MS,
    DELAY_TOLERANCE_SHARE,
    LINE_RATE,
)
from vnetbench.model.topology import parse_topology
from vnetbench.runs.sweep import run_sweep
from vnetbench.scenarios import get_scenario
from vnetbench.shaping.assign import parse_assignment

pytestmark = pytest.mark.integration


def test_delay_sweep_one_frame_one_plot(tmp_path: Path) -> None:
    # 1 pass of 1 s (iperf3's least) and 30 pings 10 ms apart a value: the assertions
    # read the RTTs' 10 ms step, within a bound of 1.5 ms, and the frame's shape. The
    # backbone at a rate a delay line carries (test_shaping.LINE_RATE): at no rate the
    # pass's stream is more than the line can (70,220 of 73,548 packets over 1 ms late),
    # and that value's pass fails on it, rightly, leaving the plot without its point
    topology = parse_topology({"name": "it-sweep", "switches": 2, "agents": 2,
                               "links": {"backbone": {"rate": LINE_RATE}},
                               "settings": {"passes": 1, "seconds": 1, "pings": 30}},
                              "test", overrides={})
    directory = run_sweep(topology, get_scenario("throughput"),
                          parse_assignment("backbone.delay=0,5ms"), ["baseline"], tmp_path)
    frame = pd.read_parquet(directory / "results.parquet")
    rtt = frame[frame["metric"] == "rtt_mean_ms"].set_index("variant")["value"]
    assert sorted(rtt.index) == ["backbone.delay=0ms", "backbone.delay=5ms"]
    # 5 ms each way: 10 ms on the round trip, within the delay line's bound per
    # direction (test_shaping: its calibration and a Python process's wake-ups)
    added = rtt["backbone.delay=5ms"] - rtt["backbone.delay=0ms"]
    assert abs(added - 10) <= 2 * (DELAY_TOLERANCE_MS + DELAY_TOLERANCE_SHARE * 5), added
    assert set(frame["state"]) == {"ok"}, frame["status"].unique()
    assert set(frame["set_backbone"]) == {"rate=100mbit offloads=on",
                                          "rate=100mbit delay=5ms offloads=on"}
    assert sorted(frame["var_backbone_delay_ms"].unique()) == [0.0, 5.0]  # typed, not text
    assert (directory / "sweep-backbone_delay_ms-rtt_mean_ms.png").stat().st_size > 5000
    header = json.loads((directory / "run.json").read_text())
    assert header["parameter"] == "backbone.delay" and header["ended"]
    assert header["status"] == "completed" and header["kind"] == "sweep"
    for run_id in frame["run_id"].unique():
        assert leftovers(run_id) == []
