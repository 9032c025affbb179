"""The whole chain on real containers: render, up, iperf3 and ping in the
agents' namespaces, tidy results, teardown."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import QuickMatrix, as_measured, leftovers, stands
from vnetbench.analysis.results import load_results, named
from vnetbench.measure.iperf import OFFERED_SHARE
from vnetbench.model.topology import parse_topology
from vnetbench.runs.session import run_scenarios
from vnetbench.scenarios import get_scenario

pytestmark = pytest.mark.integration


def test_two_switch_baseline_throughput(tmp_path: Path) -> None:
    topology = parse_topology(
        {"name": "it-baseline", "switches": 2, "agents": 2,
         "settings": {"seconds": 2, "passes": 1, "pings": 200, "ping_interval_ms": 10}},
        "test", overrides={})
    run_dir = run_scenarios(topology, [get_scenario("throughput")], tmp_path)

    frame = named(load_results(run_dir))
    value = frame.set_index("metric")["value"]
    assert frame["status"].map(stands).all()
    # no floor but the pass's own: an ok pass moved more than the topology's stall floor
    # (a veth path's rate is this host's CPU: 9.2-9.5 Gbit/s in CI, less beside other work)
    assert value["tcp_mbit"] > 0 and value["tcp_bytes"] > 0
    assert value["ping_sent"] == 200
    assert value["ping_received"] == 200
    assert 0 < value["rtt_mean_ms"] < 5

    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "completed"
    assert record["machine"]["cores"] >= 1
    assert record["images"]["tools"]["id"].startswith("sha256:")
    raw = json.loads((run_dir / "throughput" / "raw" / "iperf3-pass1.json").read_text())
    assert raw["end"]["sum_received"]["bits_per_second"] / 1e6 == pytest.approx(
        value["tcp_mbit"])
    assert (run_dir / "results.csv").is_file()
    assert (run_dir / "results.txt").read_text().startswith("RESULT scenario=throughput")
    assert any(p.name.endswith("agent1.log") for p in (run_dir / "throughput" / "logs").iterdir())
    assert pd.notna(value["tcp_retransmits"])
    for role in ("agent", "switch"):  # the baseline has no conductor
        idle, load, peak = (value[f"mem_{role}_{kind}_mib"] for kind in ("idle", "load", "peak"))
        assert idle > 0 and load > 0, f"{role}: no memory read"
        assert peak >= max(idle, load), f"{role}: the peak is a high-water mark"

    assert leftovers(record["run_id"]) == []


def test_flood_on_baseline_measures_from_outside(quick_matrix: QuickMatrix) -> None:
    """The seed's flood on plain routing: 300 Mbit/s of UDP to a neighbour for 5 s while
    another switch's agent pings the target; no limiter, so no prediction. The quick
    matrix's flood cell (conftest.quick_matrix: its own stack, its first pass read)."""
    frame = named(load_results(quick_matrix.directory))
    frame = frame[(frame["scenario"] == "flood") & (frame["pass"] == 1)]
    value = frame.set_index("metric")["value"]
    status = frame["status"].iloc[0]
    # ok, or partial because this host held the generator under its 300 Mbit/s (the
    # pass then says so: its drops would be those of a smaller load)
    assert stands(status) or "the UDP generator offered" in status, status
    assert value["pings_answered"] == 15
    offered = 300e6 * 5 / (1400 * 8)  # 133929 packets
    # iperf3 paces by its own clock: never more than asked (a datagram's rounding);
    # an ok pass offered at least OFFERED_SHARE of it, by the pass's own check
    assert value["flood_packets_sent"] <= offered * 1.01
    if stands(status):
        assert value["flood_packets_sent"] >= OFFERED_SHARE * offered * 0.99
    # no limiter on the baseline: the path carried the flood; what the receiver's
    # socket dropped while it was descheduled is this host's, not bounded here
    assert 0 < value["flood_packets_received"] <= value["flood_packets_sent"]
    assert pd.isna(value["predicted_drops"])
    for run_id in frame["run_id"].unique():
        assert leftovers(run_id) == []


# the stream under a schedule of faults: the backbone down 2 s, 3 s into an 8 s stream
OUTAGE_MS, STAGED_EXCESS_MS = 2000.0, 50.0  # a staged step fires within a scheduler period
IPTABLES_CALL_MS = 60.0  # an exec'd iptables call's span beside the load: 20-53 ms seen
WOKEN_LATE = re.compile(r"backbone-down: \S+ was woken for its (apply|lift) \d+ ms after "
                        r"the instant, having waited [\d.]+ s \(the host's cores were busy\), "
                        r"over 50 ms")


def test_the_stream_under_a_backbone_outage_is_stamped_and_stalls_for_it(
        tmp_path: Path) -> None:
    topology = parse_topology(
        {"name": "it-baseline", "switches": 2, "agents": 2,
         "settings": {"seconds": 8, "passes": 1, "pings": 20, "ping_interval_ms": 10},
         "faults": [{"at": "3s", "link": "backbone", "for": "2s"}]}, "test", overrides={})
    run_dir = run_scenarios(topology, [get_scenario("throughput")], tmp_path)
    assert leftovers(run_dir.name) == []
    frame = named(load_results(run_dir))
    rows = frame[frame["interval_s"].isna()]
    status = rows["status"].iloc[0]
    # the other legitimate state: a staged step woken over 50 ms late by the stream
    # keeping both cores busy (34 ms seen in CI); the fault then acted at its stamps
    woken = all(WOKEN_LATE.match(said) for said in as_measured(status).split("; "))
    assert stands(status) or woken, status
    value = rows.set_index("metric")["value"]
    held = value["stream_fault_held_ms_backbone-down"]
    if not woken:
        # held: the lift's stamp less the apply's, each fired within a scheduler period
        # of its instant and stamped when its iptables call returned (20-53 ms on a
        # loaded host); the apply (under the full-speed stream) may be the later one
        assert abs(held - OUTAGE_MS) <= STAGED_EXCESS_MS + IPTABLES_CALL_MS, held
    assert value["stream_fault_at_s_backbone-down"] >= 3.0
    # nothing crosses the backbone while the drop rule stands (from its stamps): every
    # 100 ms interval wholly inside it moves nothing (the two it straddles may move some)
    assert value["stream_fault_stalled_ms_backbone-down"] >= held - 200
    assert value["stream_fault_before_mbit_backbone-down"] > 0  # it flowed before the cut
    assert value["stream_survived"] == 1  # TCP retransmits through 2 s; iperf3 goes on
    timeline = frame[frame["metric"] == "stream_timeline_mbit"]
    assert len(timeline) >= 70 and timeline["interval_s"].is_monotonic_increasing
