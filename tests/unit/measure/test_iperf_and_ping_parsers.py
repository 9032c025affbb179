"""Parsers on real captured output of iperf3 3.18 and iputils ping (tests/data)."""

from pathlib import Path

import pytest

from vnetbench.measure.iperf import IperfError, parse_iperf_json
from vnetbench.measure.ping import PingParseError, parse_ping


def test_iperf_tcp(data_dir: Path) -> None:
    result = parse_iperf_json((data_dir / "iperf3-tcp-2s.json").read_text())
    assert result.version == "iperf 3.18"
    assert result.receiver_mbit == pytest.approx(19843.725, rel=1e-6)
    assert result.retransmits == 46
    assert result.streams == 1
    assert 1.9 < result.seconds < 2.2
    # bytes and rate agree
    assert result.bytes_received * 8 / result.seconds / 1e6 == pytest.approx(
        result.receiver_mbit, rel=1e-3)


def test_iperf_refused_is_an_error(data_dir: Path) -> None:
    with pytest.raises(IperfError, match="Connection refused"):
        parse_iperf_json((data_dir / "iperf3-refused.json").read_text())


def test_iperf_not_json() -> None:
    with pytest.raises(IperfError, match="no JSON"):
        parse_iperf_json("iperf3: error - unable to connect")


def test_ping_all_answered(data_dir: Path) -> None:
    result = parse_ping((data_dir / "ping-20.txt").read_text())
    assert (result.transmitted, result.received, result.lost) == (20, 20, 0)
    assert result.rtt_mean_ms == 0.040
    assert result.rtt_min_ms == 0.022
    assert len(result.rtts_ms) == 20
    assert min(result.rtts_ms) == pytest.approx(result.rtt_min_ms, abs=0.001)


def test_ping_dead_path(data_dir: Path) -> None:
    result = parse_ping((data_dir / "ping-dead.txt").read_text())
    assert (result.transmitted, result.received) == (5, 0)
    assert result.loss_percent == 100.0
    assert result.rtt_mean_ms is None


def test_ping_without_summary() -> None:
    with pytest.raises(PingParseError):
        parse_ping("ping: connect: Network is unreachable\n")
