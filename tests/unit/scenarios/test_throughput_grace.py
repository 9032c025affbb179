"""Throughput's own time around its stream: the clients' bound beyond the stream
(stream_grace_s: what the path the topology declares needs, so that a stream whose
path died mid-stream is cut after that instead of after iperf3's whole 30 s grace),
and the reads before it side by side (beside)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from vnetbench.engines.base import EngineError
from vnetbench.measure import iperf
from vnetbench.measure.iperf import CLIENT_GRACE_SECONDS, IperfServer
from vnetbench.measure.probe import ProbeOutput
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.scenarios.throughput import beside, stream_grace_s


def topology(**extra: object) -> Topology:
    return parse_topology({"name": "t", "switches": 2, "agents": 2, **extra}, "t.yml")


def test_an_unshaped_path_needs_its_connect_and_the_margin_only() -> None:
    # 5 s of --connect-timeout and 10 s for the end's exchange on a busy host
    assert stream_grace_s(topology()) == pytest.approx(15.0)


def test_a_delay_adds_five_round_trips_over_three_segments_each_way() -> None:
    delayed = topology(links={"backbone": {"delay": "20ms", "jitter": "5ms"}})
    assert stream_grace_s(delayed) == pytest.approx(15.0 + 5 * 6 * 0.025)
    # an agent's own profile counts as much as the site's and the backbone's
    agent = topology(agents=[{"name": "a1", "switch": "switch1",
                              "link": {"delay": "100ms"}},
                             {"name": "a2", "switch": "switch2"}])
    assert stream_grace_s(agent) == pytest.approx(15.0 + 5 * 6 * 0.1)


def test_a_slow_rate_adds_its_queue_to_drain() -> None:
    # 16 KiB of burst at 1 Mbit/s is 0.131 s, and the tbf's 50 ms of queue
    slow = topology(links={"site": {"rate": "1mbit"}})
    assert stream_grace_s(slow) == pytest.approx(15.0 + 0.05 + 16384 * 8 / 1e6)


def test_never_more_than_the_whole_grace() -> None:
    # 10 kbit drains in 13 s and a 1 s hold is 30 s of round trips: the bounds of a
    # link profile were made for the whole grace
    extreme = topology(links={"site": {"rate": "10kbit"}, "backbone": {"delay": "1000ms"}})
    assert stream_grace_s(extreme) == CLIENT_GRACE_SECONDS


@pytest.mark.parametrize("extra", [
    {"faults": [{"at": "1s", "delay": "200ms", "for": "2s"}]},  # the path changes
    {"engine": "swarm"},  # another host's path is not in the topology
    {"settings": {"udp_mbit": 100}},  # iperf3 waits 30 s for its UDP opening's answer
    {"links": {"backbone": {"loss": "10%"}}},  # retransmissions may wait at length
])
def test_the_whole_grace_where_the_topology_cannot_say_the_path(
        extra: dict[str, object]) -> None:
    assert stream_grace_s(topology(**extra)) == CLIENT_GRACE_SECONDS


def test_the_client_is_bounded_by_its_server_s_grace(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = (data_dir / "iperf3-tcp-2s.json").read_text()
    bounds: list[float] = []

    def probe(run: object, target: str, argv: list[str], timeout_s: float) -> ProbeOutput:
        bounds.append(timeout_s)
        return ProbeOutput(0, report, "")

    monkeypatch.setattr(iperf, "run_probe", probe)
    IperfServer("run1", "10.0.1.2", grace_s=15.0).run("client-c", 2, [], tmp_path / "r.json")
    IperfServer("run1", "10.0.1.2").run("client-c", 2, [], tmp_path / "r.json")
    assert bounds == [2 + 15.0, 2 + CLIENT_GRACE_SECONDS]


HANG_GUARD_S = 60.0  # a wait that would block for ever if the two ran one after the other


def test_two_reads_before_the_stream_run_side_by_side() -> None:
    """The MTUs' probe and the tunnel counter's (two namespaces) overlap: each waits
    until the other has begun, which one after the other could not."""
    first_began, second_began = threading.Event(), threading.Event()

    def first() -> str:
        first_began.set()
        return "mtus" if second_began.wait(HANG_GUARD_S) else "alone"

    def second() -> str:
        second_began.set()
        return "tunnel" if first_began.wait(HANG_GUARD_S) else "alone"

    assert beside(first, second) == ("mtus", "tunnel")


def test_the_first_read_s_error_is_raised() -> None:
    def failing() -> str:
        raise EngineError("no such container")

    with pytest.raises(EngineError, match="no such container"):
        beside(failing, lambda: "tunnel")
