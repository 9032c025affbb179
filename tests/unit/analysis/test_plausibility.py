"""A rule per figure the mechanism cannot produce (vnetbench/analysis/plausibility.py), each on
recorded output (tests/data): loaded_latency's phases from its recorded pings and
stream, throughput's rate from a recorded iperf3 report, transactions' rounds from
recorded netperf runs; and a pass whose figures are all plausible says nothing."""

from __future__ import annotations

from pathlib import Path

from tests.unit.scenarios.test_loaded_latency import idle, one_way
from vnetbench.analysis.plausibility import CRR_RR_BOUND, check_plausible
from vnetbench.analysis.results import ResultSet
from vnetbench.core.outcome import Kind, Outcome, State, implausible_figures
from vnetbench.core.schema import CellKey
from vnetbench.measure.iperf import IperfError, parse_iperf_json
from vnetbench.measure.netperf import NetperfError, parse_netperf
from vnetbench.measure.probe import parsed
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.runs.passes import write_pass
from vnetbench.scenarios.base import PassResult
from vnetbench.scenarios.loaded_latency import phases_metrics, summary_of
from vnetbench.scenarios.transactions import Rates, rates_metrics


def topology(**links: object) -> Topology:
    return parse_topology({"name": "t", "switches": 2, "agents": 2, "links": links,
                           "settings": {"seconds": 2}}, "t")


def test_a_negative_added_latency_is_withheld_as_below_the_resolution(
        data_dir: Path, tmp_path: Path) -> None:
    """The recorded loaded p50 (0.029 ms, of the probes sent while the stream surely
    ran) is under the idle p50 (0.053 ms): the figure is not given, the status says
    why, the p99 (positive) stays."""
    phases = [idle(data_dir), one_way(data_dir)]
    metrics = phases_metrics(phases)
    assert metrics["one_way_added_p50_ms"][0] is not None
    assert metrics["one_way_added_p50_ms"][0] < 0  # as the recording measured it
    result = PassResult(metrics, summary_of(phases))
    found = check_plausible(result, topology())
    assert len(found) == 1
    assert result.metrics["one_way_added_p50_ms"] == (None, "ms")
    assert result.summary["one_way_added_p50_ms"] is None
    p99 = result.metrics["one_way_added_p99_ms"][0]
    assert p99 is not None and p99 > 0
    assert result.state is State.OK
    assert "; " not in found[0].sentence  # the status's problems are joined with "; "
    assert implausible_figures(result.status) == {"one_way_added_p50_ms"}
    assert result.status == (
        "ok; one_way_added_p50_ms implausible: latency added under load one way, p50, "
        "below the testbed's resolution, not given (the loaded p50 0.029 ms is 0.024 ms "
        "under the idle p50 0.053 ms: a load only adds queueing, so the difference is the "
        "idle path's own variation, its cores waking for each idle ping)")
    results = ResultSet(tmp_path)
    write_pass(results, CellKey("run", "loaded_latency", "baseline"), 1, result, {}, "")
    written = {row["metric"]: row["value"] for row in results.rows}
    assert written["one_way_added_p50_ms"] is None
    assert "one_way_added_p50_ms=-" not in results.lines[-1]


def tcp_result(data_dir: Path) -> PassResult:
    stream = parsed((data_dir / "iperf3-tcp-2s.json").read_text(), parse_iperf_json,
                    IperfError).result
    assert stream is not None
    return PassResult({"tcp_mbit": (stream.receiver_mbit, "Mbit/s")},
                      {"tcp_mbit": stream.receiver_mbit})


def test_a_rate_above_the_shaped_link_fails_the_pass(data_dir: Path) -> None:
    """The recorded stream ran unshaped, far above 1 Gbit/s: on links said to be shaped
    to 1gbit it cannot be theirs."""
    result = tcp_result(data_dir)
    rate = result.metrics["tcp_mbit"][0]
    assert rate is not None and rate > 1100
    found = check_plausible(result, topology(site={"rate": "1gbit"}))
    assert [f.fails for f in found] == [True]
    assert result.state is State.FAILED
    assert result.status.startswith(
        f"tcp_mbit implausible: {rate:.1f} Mbit/s is above what the links pass: at most "
        "1002.0 Mbit/s (the agents' links are shaped to 1gbit, plus one token bucket over "
        "2 s)")
    assert result.metrics["tcp_mbit"][0] == rate  # kept: the pass failed for it


def test_a_rate_within_the_link_or_on_unshaped_links_is_plausible(data_dir: Path) -> None:
    for links in ({}, {"site": {"rate": "100gbit"}}, {"site": {"delay": "1ms"}}):
        result = tcp_result(data_dir)
        assert check_plausible(result, topology(**links)) == []
        assert result.status == "ok"


def rounds(data_dir: Path, crr_file: str) -> PassResult:
    runs = {name: parsed((data_dir / name).read_text(), parse_netperf, NetperfError)
            for name in ("netperf-tcp-rr.txt", crr_file)}
    return PassResult(rates_metrics([Rates.of("TCP_RR", [runs["netperf-tcp-rr.txt"]]),
                                     Rates.of("TCP_CRR", [runs[crr_file]])]), {})


def test_a_crr_a_few_times_under_its_rr_is_plausible(data_dir: Path) -> None:
    """Recorded: TCP_RR 120,615/s and TCP_CRR 24,927/s on one Docker network (4.8x)."""
    result = rounds(data_dir, "netperf-tcp-crr.txt")
    assert check_plausible(result, topology()) == []
    assert result.outcome == Outcome()


def test_a_crr_hundreds_of_times_under_its_rr_names_both_waits_it_can_be(
        data_dir: Path) -> None:
    """OpenVPN in issue #63's matrix: TCP_CRR 6/s with a p99 of 186,666 µs against its
    TCP_RR 4,284/s. Captured: no packet lost, each held ~44 ms by Nagle for a delayed
    ACK on the tunnel's TCP link; a lost first packet waits out TCP's RTO instead.
    The figures are kept (it is what a new connection gets over that path), the
    status names both mechanisms the p99 allows."""
    metrics = rounds(data_dir, "netperf-tcp-crr.txt").metrics
    metrics |= {"tcp_rr_tps": (4284.0, "transactions/s"),
                "tcp_crr_tps": (6.0, "transactions/s"), "tcp_crr_p99_us": (186666.0, "µs")}
    result = PassResult(metrics, {})
    found = check_plausible(result, topology())
    assert len(found) == 1 and not found[0].fails
    assert result.state is State.OK and result.metrics["tcp_crr_tps"][0] == 6.0
    assert result.outcome.has(Kind.IMPLAUSIBLE)
    assert result.status == (
        "ok; tcp_crr_tps implausible: TCP_CRR 6/s is 714 times under its TCP_RR 4284/s, "
        f"beyond the {CRR_RR_BOUND} times a new connection's handshake and setup can cost: "
        "each new connection waits 187 ms at p99: a packet of its start lost and resent "
        "(TCP's minimum retransmission timeout, 200 ms), or, on a tunnel carried over "
        "TCP, packets held by Nagle's algorithm for the peer's delayed ACK (40 ms each; "
        "OpenVPN without tcp-nodelay)")


def test_a_pass_that_did_not_measure_is_not_judged(data_dir: Path) -> None:
    result = tcp_result(data_dir)
    result.outcome.state = State.FAILED
    assert check_plausible(result, topology(site={"rate": "1gbit"})) == []
