"""No failure recorded as a measurement: a pass whose tools ran but measured nothing
(a stream that moved nothing, a flood of which nothing arrived, a counter that went
backwards, a join with no time) is never state ok with a number. Recorded tool output
from tests/data, edited where a case was not recorded (each edit says what it is)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from vnetbench.core.outcome import Outcome, State
from vnetbench.measure.cpu import cpu_percent, role_percent
from vnetbench.measure.iperf import IperfError, parse_iperf_json, parse_iperf_udp
from vnetbench.measure.ping import PingParseError, parse_ping
from vnetbench.measure.probe import ToolRun, parsed
from vnetbench.measure.transfer import parse_counts
from vnetbench.scenarios.flood import flood_status
from vnetbench.scenarios.join import JoinOutcome, result_of
from vnetbench.scenarios.pair import path_status
from vnetbench.scenarios.throughput import CpuFigures, Stream, stream_metrics
from vnetbench.scenarios.transfer import transfer_metrics, transfer_status


def read(data_dir: Path, name: str) -> str:
    return (data_dir / name).read_text()


def udp_report(data_dir: Path, edit: dict[str, dict[str, Any]] | None = None) -> str:
    """iperf3-udp-tail-lost.json (1 Gbit/s for 2 s, 27864 datagrams sent), its end
    summaries edited key by key where given."""
    report = json.loads(read(data_dir, "iperf3-udp-tail-lost.json"))
    edited = copy.deepcopy(report)
    for summary, values in (edit or {}).items():
        edited["end"][summary] |= values
    return json.dumps(edited)


# The receiver saw nothing: no packets, no bytes (edited: as a tunnel that drops all).
ALL_LOST = {"sum_received": {"packets": 0, "lost_packets": 0, "bytes": 0,
                             "bits_per_second": 0}}
# The receiver counted packets but reported 0 bit/s (edited: only the rate set to 0).
RECEIVER_ZERO = {"sum_received": {"bits_per_second": 0}}
# The client sent nothing (edited: as a socket that could not send).
NOTHING_SENT = {"sum_sent": {"packets": 0, "bytes": 0, "bits_per_second": 0}}


def test_a_stalled_stream_with_no_ping_answered_is_a_dead_path(data_dir: Path) -> None:
    """The recorded stall (0 bytes received in 5 s) with pings that all went unanswered
    was state ok: the stall check asked for answered pings."""
    stalled = parse_iperf_json(read(data_dir, "iperf3-stalled-mtu.json"))
    dead = parse_ping(read(data_dir, "ping-dead.txt"))
    outcome = path_status(stalled, None, dead, None)
    state, status = outcome.state, outcome.status
    assert state is State.DEAD
    assert status == ("path dead: 0 of 5 pings answered, the TCP stream moved 0.000 Mbit/s")


@pytest.mark.parametrize(("edit", "ping_file", "expected_state", "expected"), [
    (ALL_LOST, "ping-20.txt", State.FAILED,
     "none of the UDP stream's 27864 datagrams arrived while 20 of 20 pings were answered"),
    (RECEIVER_ZERO, "ping-20.txt", State.FAILED, "none of the UDP stream's 27864 datagrams"),
    (ALL_LOST, "ping-dead.txt", State.DEAD,
     "path dead: 0 of 5 pings answered, none of the UDP stream's 27864 datagrams arrived"),
    (NOTHING_SENT, "ping-20.txt", State.FAILED, "the UDP client sent no datagram"),
])
def test_a_udp_stream_of_which_nothing_arrived_is_not_ok(
        data_dir: Path, edit: dict[str, dict[str, Any]], ping_file: str,
        expected_state: State, expected: str) -> None:
    udp = parse_iperf_udp(udp_report(data_dir, edit))
    outcome = path_status(udp, None, parse_ping(read(data_dir, ping_file)), None)
    state, status = outcome.state, outcome.status
    assert state is expected_state and expected in status, status


def test_streams_that_delivered_stay_ok(data_dir: Path) -> None:
    """The recorded good runs: the checks above take nothing that measured."""
    ping = parse_ping(read(data_dir, "ping-20.txt"))
    for udp in (parse_iperf_udp(read(data_dir, "iperf3-udp-300m.json")),
                parse_iperf_udp(udp_report(data_dir))):  # 7.8 % lost: a measurement
        assert path_status(udp, None, ping, None) == Outcome()
    tcp = parse_iperf_json(read(data_dir, "iperf3-tcp-2s.json"))
    assert path_status(tcp, None, ping, None) == Outcome()


def test_no_ping_answered_while_the_stream_delivered_is_a_failure(data_dir: Path) -> None:
    """A good TCP stream, then pings of which none came back: ping_loss 100 % and no
    round trip was recorded as ok."""
    tcp = parse_iperf_json(read(data_dir, "iperf3-tcp-2s.json"))
    outcome = path_status(tcp, None, parse_ping(read(data_dir, "ping-dead.txt")), None)
    state, status = outcome.state, outcome.status
    assert state is State.FAILED and "no ping answered (0 of 5)" in status


def test_a_counter_that_went_backwards_gives_no_figure() -> None:
    """A container restarted between the readings counts from zero again: 1.5 - 40.0
    s of CPU became -770 % of a core."""
    assert cpu_percent({"sending": 40.0, "receiving": 2.0},
                       {"sending": 1.5, "receiving": 3.0}, 5.0) == {"receiving": 20.0}
    before = {"switch": {"s1": 10.0, "s2": 30.0}, "agent": {"a1": 1.0}, "probe": {"p": 0.1}}
    after = {"switch": {"s1": 11.0, "s2": 0.5}, "agent": {"a1": 2.0, "a2": 0.5}}
    percents, unmeasured = role_percent(before, after, 2.0)
    assert percents == {"agent": pytest.approx(75.0)}  # a2 started inside: from zero
    assert unmeasured == {"switch": "1 container(s) restarted (counter went backwards)",
                          "probe": "1 ended"}


def test_cpu_with_no_figure_is_said_and_left_empty() -> None:
    cpu = CpuFigures.of({"switch": {"s1": 30.0}, "probe": {"p": 1.0}}, {"switch": {"s1": 2.0}},
                        {"sending": 5.0}, {"sending": 6.0}, 1.0)
    assert cpu.unmeasured == {"cpu_switch_percent": "1 container(s) restarted (counter "
                                                    "went backwards)"}  # probe: no metric
    stream = Stream.of([], cpu, None)
    metrics = stream_metrics(stream)
    assert metrics["cpu_switch_percent"] == (None, "% of a core")
    assert metrics["cpu_sending_agent_percent"] == (pytest.approx(100.0), "% of a core")


def flood_run(data_dir: Path, edit: dict[str, dict[str, Any]] | None) -> ToolRun[Any]:
    return parsed(udp_report(data_dir, edit), parse_iperf_udp, IperfError)


def ping_run(data_dir: Path, name: str) -> ToolRun[Any]:
    return parsed(read(data_dir, name), parse_ping, PingParseError)


def test_a_flood_of_which_nothing_arrived_measured_no_drops(data_dir: Path) -> None:
    """All 27864 lost was recorded ok as 27864 drops under the limits: the path's, not
    the limiter's (a token bucket lets its rate through)."""
    outcome = flood_status(flood_run(data_dir, ALL_LOST), ping_run(data_dir, "ping-20.txt"),
                           1000)
    state, status = outcome.state, outcome.status
    assert state is State.FAILED
    assert status.startswith("none of the flood's 27864 datagrams reached the target")
    outcome = flood_status(flood_run(data_dir, ALL_LOST), ping_run(data_dir, "ping-dead.txt"),
                           1000)
    state, status = outcome.state, outcome.status
    assert state is State.DEAD and status.startswith("path dead: 0 of 5 pings answered")
    assert flood_status(flood_run(data_dir, None), ping_run(data_dir, "ping-20.txt"),
                        1000) == Outcome()


def test_a_flood_whose_generator_fell_short_of_its_rate_is_partial(data_dir: Path) -> None:
    """A real 1 Gbit/s iperf3 sender held by this host (760 Mbit/s offered): its drops
    are those of a smaller load, so the pass says so; the same sender judged against
    the 800 Mbit/s it nearly offered is ok (90 % is the share a free sender keeps)."""
    held = parsed(read(data_dir, "iperf3-udp-1g-sender-held.json"), parse_iperf_udp,
                  IperfError)
    outcome = flood_status(held, ping_run(data_dir, "ping-20.txt"), 1000)
    assert outcome.state is State.PARTIAL
    assert "offered 760 of the 1000 Mbit/s declared (76%)" in outcome.status
    assert flood_status(held, ping_run(data_dir, "ping-20.txt"), 800) == Outcome()


def test_a_transfer_too_short_to_time_has_no_rate() -> None:
    """pv's last line at 0.0000 s (edited from pv's format: 1 KiB over loopback): the
    rate was recorded as 0 Mbit/s, ok."""
    transfer = parse_counts("0.0000 1024\n", 1024)
    whole = parse_counts("2.0000 1024\n", 1024)
    runs = {"upload": ToolRun("", transfer, None), "download": ToolRun("", whole, None)}
    outcome = transfer_status(runs, 120)
    state, status = outcome.state, outcome.status
    assert state is State.PARTIAL and "upload of 1KiB took no time pv could count" in status
    assert transfer_metrics("upload", transfer)["upload_mbit"] == (None, "Mbit/s")
    assert transfer_metrics("download", whole)["download_mbit"][0] == pytest.approx(0.004096)


def join_outcome(joined: dict[str, float], released_first: float | None = 100.0,
                 total: int = 4) -> JoinOutcome:
    return JoinOutcome(total=total,
                       joined={a: pd.Timestamp(t, unit="s", tz="UTC") for a, t in joined.items()},
                       switches=Counter(switch1=len(joined)), released_first=released_first,
                       released_last=released_first, gate_waiting=0,
                       reasons=Counter({"log ends: [Agent] Connecting": total - len(joined)}),
                       settle_s=0.1)


@pytest.mark.parametrize(("outcome", "expected"), [
    (join_outcome({}), "none of 4 joined within 30 s; not joined: 4 x log ends"),
    (join_outcome({f"a{i}": 100.5 for i in range(4)}, released_first=None),
     "no release stamp in the agents' logs"),
    (join_outcome({f"a{i}": 99.0 for i in range(4)}),
     "the last join came 1.000 s before the first release"),
])
def test_a_join_with_no_time_is_a_failure(outcome: JoinOutcome, expected: str) -> None:
    """None joined was partial (a measurement); no stamp or a join before the release
    was ok, the latter with a negative time."""
    result = result_of(outcome, 30)
    assert result.state is State.FAILED and result.status.startswith(expected), result.status
    assert result.metrics["join_seconds"][0] is None
    good = result_of(join_outcome({f"a{i}": 100.5 for i in range(4)}), 30)
    assert good.state is State.OK and good.metrics["join_seconds"][0] == pytest.approx(0.5)
