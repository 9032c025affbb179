"""The report says which figures a pass called implausible (vnetbench/analysis/plausibility.py)
instead of printing them plainly: the summary marks them, "Passes without numbers"
lists their passes with the reason. The passes: the baseline's loaded_latency from
the recorded pings and stream (tests/data/ping-D-*.txt, iperf3-tcp-P4.json: its added
p50 below zero, withheld), OpenVPN's transactions from the recorded netperf runs with
the issue's figures (#63: TCP_CRR 6/s, p99 186,666 µs, against TCP_RR 4,284/s), and
WireGuard's added p50 of 21 ms (#62)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.unit.analysis.test_plausibility import rounds, topology
from tests.unit.scenarios.test_loaded_latency import idle, one_way
from vnetbench.analysis.plausibility import check_plausible
from vnetbench.analysis.results import ResultSet
from vnetbench.core.schema import STATUS, CellKey
from vnetbench.report.summary import IMPLAUSIBLE_SAID, lead_table
from vnetbench.report.tables import problems, summary_table
from vnetbench.runs.passes import write_pass
from vnetbench.scenarios.base import PassResult
from vnetbench.scenarios.loaded_latency import phases_metrics, summary_of


def passes(directory: Path, data_dir: Path) -> pd.DataFrame:
    results = ResultSet(directory)
    phases = [idle(data_dir), one_way(data_dir)]
    loaded = PassResult(phases_metrics(phases), summary_of(phases))
    check_plausible(loaded, topology())
    write_pass(results, CellKey("r", "loaded_latency", "baseline"), 1, loaded, {}, "")
    wireguard = PassResult(phases_metrics(phases) | {"one_way_added_p50_ms": (21.0, "ms")}, {})
    check_plausible(wireguard, topology())
    write_pass(results, CellKey("r", "loaded_latency", "wireguard"), 1, wireguard, {}, "")
    crr = rounds(data_dir, "netperf-tcp-crr.txt")
    write_pass(results, CellKey("r", "transactions", "baseline"), 1, crr, {}, "")
    openvpn = rounds(data_dir, "netperf-tcp-crr.txt")
    openvpn.metrics |= {"tcp_rr_tps": (4284.0, "transactions/s"),
                        "tcp_crr_tps": (6.0, "transactions/s"),
                        "tcp_crr_p99_us": (186666.0, "µs")}
    check_plausible(openvpn, topology())
    write_pass(results, CellKey("r", "transactions", "openvpn"), 1, openvpn, {}, "")
    return results.frame()


def test_the_summary_marks_an_implausible_figure_and_a_withheld_one(
        tmp_path: Path, data_dir: Path) -> None:
    frame = passes(tmp_path, data_dir)
    table = lead_table(frame, summary_table(frame)).set_index("measurement")
    crr = table.loc["TCP_CRR (transactions/s)"]
    assert crr["openvpn"].startswith("6") and crr["openvpn"].endswith(IMPLAUSIBLE_SAID)
    assert not crr["baseline"].endswith(IMPLAUSIBLE_SAID)  # 4.8x under its RR: plausible
    assert not table.loc["TCP_RR (transactions/s)", "openvpn"].endswith(IMPLAUSIBLE_SAID)
    added = table.loc["Latency added under load one way, p50 (ms)", "baseline"]
    assert added == "not given" + IMPLAUSIBLE_SAID  # never a negative figure
    assert table.loc["Latency added under load one way, p50 (ms)", "wireguard"] == "21"


def test_passes_without_numbers_lists_each_implausible_pass_with_why(
        tmp_path: Path, data_dir: Path) -> None:
    listed = problems(passes(tmp_path, data_dir))
    said = dict(zip(listed["scenario"] + "/" + listed["overlay"], listed[STATUS], strict=True))
    assert set(said) == {"loaded_latency/baseline", "transactions/openvpn"}
    assert "Nagle's algorithm for the peer's delayed ACK" in said["transactions/openvpn"]
    assert "below the testbed's resolution" in said["loaded_latency/baseline"]
