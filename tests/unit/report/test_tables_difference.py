"""No ratio to a baseline at or near zero anywhere in the report: a figure that is
itself a difference (latency added under load) or set against a baseline at or below
zero is given as its difference, said so. The baseline's loaded_latency figures are
those of the recorded pings and stream (tests/data/ping-D-*.txt, iperf3-tcp-P4.json:
an added p50 below zero, as results written before plausibility.py withheld it);
WireGuard's added p50 is the issue's (#62: 21 ms, printed "21, -3.6e+02x")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.unit.scenarios.test_loaded_latency import idle, one_way
from vnetbench.analysis.results import ResultSet
from vnetbench.core.schema import METRIC, OVERLAY, CellKey
from vnetbench.report.summary import lead_note, lead_table
from vnetbench.report.tables import (
    baseline_ratios,
    difference_to,
    overlay_cell,
    ratio_to,
    summary_table,
)
from vnetbench.scenarios.loaded_latency import phases_metrics

ADDED = "one_way_added_p50_ms"
LABEL = "Latency added under load one way, p50 (ms)"


def loaded_results(directory: Path, data_dir: Path) -> pd.DataFrame:
    recorded = phases_metrics([idle(data_dir), one_way(data_dir)])
    results = ResultSet(directory)
    results.add(CellKey("r", "loaded_latency", "baseline"), 1, recorded, {})
    wireguard = dict(recorded) | {ADDED: (21.0, "ms")}
    results.add(CellKey("r", "loaded_latency", "wireguard"), 1, wireguard, {})
    return results.frame()


def test_the_summary_gives_the_difference_to_a_baseline_below_zero(
        tmp_path: Path, data_dir: Path) -> None:
    frame = loaded_results(tmp_path, data_dir)
    summary = summary_table(frame)
    baseline = summary[(summary[OVERLAY] == "baseline") & (summary[METRIC] == ADDED)]
    assert float(baseline["mean"].iloc[0]) < 0  # the recorded figure
    table = lead_table(frame, summary).set_index("measurement")
    cell = table.loc[LABEL, "wireguard"]
    assert "x" not in cell and "e+" not in cell
    assert cell == "21, +21 ms (difference)"  # 21 less the baseline's -0.024
    assert "the difference to it instead" in lead_note(None)


def test_a_ratio_only_of_a_magnitude_against_a_reference_above_zero() -> None:
    assert ratio_to(21.0, -0.058, ADDED) is None  # the "-3.6e+02x"
    assert ratio_to(21.0, 0.001, ADDED) is None  # a difference: never a ratio
    assert difference_to(21.0, -0.058, ADDED) == 21.058
    assert ratio_to(500.0, 1000.0, "tcp_mbit") == 0.5
    assert difference_to(500.0, 1000.0, "tcp_mbit") is None  # the ratio says it
    for reference in (0.0, -1.0, float("nan"), None):
        assert ratio_to(500.0, reference, "tcp_mbit") is None
    assert difference_to(500.0, 0.0, "tcp_mbit") == 500.0
    assert difference_to(500.0, None, "tcp_mbit") is None


def test_a_tables_cell_says_its_difference(tmp_path: Path, data_dir: Path) -> None:
    summary = summary_table(loaded_results(tmp_path, data_dir))
    record = summary[(summary[OVERLAY] == "wireguard") & (summary[METRIC] == ADDED)]
    cell = overlay_cell(record.to_dict("records")[0], None, "native", difference=21.058)
    assert cell.endswith(", +21.1 ms (difference) to native")
    assert baseline_ratios(summary).empty  # only throughput's TCP and RTT, both above zero
