"""loaded_latency's phases as data: the window a stream surely ran, the probes sent in
it, the metrics and the path's status (no engine).

Recorded (tests/data): `ping -D -O -n -i 0.01 -W 1` between two tools containers on
a Docker network: 200 idle (ping-D-idle.txt); 400 while `iperf3 -c -t 2 -J -P 4`
ran (ping-D-loaded.txt, iperf3-tcp-P4.json), its probe launched and returned at the
host stamps below; 100 to an address that answers with ICMP errors only
(ping-D-unreachable.txt); `iperf3 --bidir -P 4` (iperf3-bidir-P4.json).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.core.outcome import Outcome, State
from vnetbench.declared import catalogue
from vnetbench.measure.iperf import IperfError, parse_iperf_bidir, parse_iperf_json
from vnetbench.measure.ping import stamped_ping_argv
from vnetbench.measure.ping_window import parse_probes, percentile, sent_between, summarise
from vnetbench.measure.probe import parsed
from vnetbench.scenarios.loaded_latency import (
    Phase,
    phases_metrics,
    phases_status,
    summary_of,
    surely_ran,
)

LAUNCHED, RETURNED = 1796136315.529475331, 1796136317.677361876  # the stream's probe
INTERVAL = 0.01


def read(data_dir: Path, name: str) -> str:
    return (data_dir / name).read_text()


def idle(data_dir: Path, name: str = "ping-D-idle.txt") -> Phase:
    return Phase("idle", summarise(parse_probes(read(data_dir, name), INTERVAL)))


def one_way(data_dir: Path, report: str = "iperf3-tcp-P4.json") -> Phase:
    stream = parsed(read(data_dir, report), parse_iperf_json, IperfError)
    start, end = surely_ran(LAUNCHED, RETURNED, stream.result)
    probes = parse_probes(read(data_dir, "ping-D-loaded.txt"), INTERVAL)
    return Phase("one_way", summarise(sent_between(probes, start, end)), stream)


def test_every_probe_is_placed_by_when_it_was_sent(data_dir: Path) -> None:
    probes = parse_probes(read(data_dir, "ping-D-idle.txt"), INTERVAL)
    assert [p.seq for p in probes] == list(range(1, 201))
    # the first reply: stamped 1796136311.775247, 0.179 ms after it was sent
    assert probes[0].sent_at == pytest.approx(1796136311.775247 - 0.000179)
    unanswered = parse_probes(read(data_dir, "ping-D-unreachable.txt"), INTERVAL)
    # each said unanswered when the next went (the last probe's line never came)
    assert len(unanswered) == 99 and all(p.rtt_ms is None for p in unanswered)
    assert summarise(unanswered).loss_percent == 100.0


def test_a_loaded_phase_counts_the_probes_sent_while_the_stream_surely_ran(
        data_dir: Path) -> None:
    phase = one_way(data_dir)
    assert phase.stream is not None and phase.stream.result is not None
    start, end = surely_ran(LAUNCHED, RETURNED, phase.stream.result)
    # the stream lasted 2.002816 s inside a probe run of 2.148 s
    assert end - start == pytest.approx(2 * 2.002816 - (RETURNED - LAUNCHED))
    all_probes = parse_probes(read(data_dir, "ping-D-loaded.txt"), INTERVAL)
    assert phase.rtt.sent == len([p for p in all_probes if start <= p.sent_at <= end]) == 109
    assert phase.rtt.answered == 109


def test_nearest_rank_percentiles_are_measured_values() -> None:
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.99), percentile([3.0], 0.99)) == (
        50.0, 99.0, 3.0)


def test_added_latency_is_the_loaded_figure_less_the_idle_p50(data_dir: Path) -> None:
    phases = [idle(data_dir), one_way(data_dir)]
    metrics = phases_metrics(phases)
    idle_p50 = metrics["idle_rtt_p50_ms"][0]
    assert idle_p50 == 0.053  # of the 200 recorded idle replies
    for q in (50, 99):
        loaded = metrics[f"one_way_rtt_p{q}_ms"][0]
        assert loaded is not None and idle_p50 is not None
        assert metrics[f"one_way_added_p{q}_ms"][0] == pytest.approx(loaded - idle_p50)
    assert metrics["one_way_load_mbit"][0] == pytest.approx(26849.25774908928)
    declared = catalogue()
    for name, (_, unit) in metrics.items():
        metric = declared.find(name)
        assert metric is not None and metric.unit == unit, name
    assert declared.headline("both_ways_added_p50_ms") == (
        "Latency added under load both ways, p50 (ms)")
    assert summary_of(phases)["one_way_load_mbit"] == pytest.approx(26849.258)


def test_both_ways_goodput_is_the_two_directions_summed(data_dir: Path) -> None:
    both = parse_iperf_bidir(read(data_dir, "iperf3-bidir-P4.json"))
    assert both.receiver_mbit == pytest.approx((12324591821.87015 + 12636580299.861767) / 1e6)
    assert both.streams == 4 * 2


def test_a_dead_path_is_said_in_one_sentence(data_dir: Path) -> None:
    """Idle pings all unanswered and a stream that could not connect: path dead."""
    phases = [idle(data_dir, "ping-D-unreachable.txt"), one_way(data_dir, "iperf3-refused.json")]
    outcome = phases_status(phases, 0.1)
    state, status = outcome.state, outcome.status
    assert state is State.DEAD
    assert status.startswith("path dead: 0 of 99 pings answered, 0 bytes delivered "
                             "(unable to connect to server")
    metrics = phases_metrics(phases)
    assert metrics["one_way_load_mbit"] == (None, "Mbit/s")
    assert metrics["one_way_added_p50_ms"] == (None, "ms")


def test_a_stream_failing_on_a_live_path_fails_the_pass(data_dir: Path) -> None:
    phases = [idle(data_dir), one_way(data_dir, "iperf3-refused.json")]
    outcome = phases_status(phases, 0.1)
    state, status = outcome.state, outcome.status
    assert state is State.FAILED
    assert status.startswith("under load one way: the stream failed: unable to connect")


def test_good_phases_are_ok(data_dir: Path) -> None:
    assert phases_status([idle(data_dir), one_way(data_dir)], 0.1) == Outcome()


def test_the_ping_is_ended_by_sigint_after_its_length() -> None:
    assert stamped_ping_argv(4.5, 0.01, "10.0.2.2") == [
        "timeout", "-s", "INT", "4.5", "ping", "-D", "-O", "-n", "-i", "0.01", "-W", "1",
        "10.0.2.2"]
