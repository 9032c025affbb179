"""Timed transfers and UDP loss, from recorded real output (tests/data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.measure.iperf import parse_iperf_udp
from vnetbench.measure.transfer import TransferError, parse_counts

DATA = Path(__file__).resolve().parents[2] / "data"
MIB = 2**20


def test_a_whole_transfer_is_timed_to_its_last_byte() -> None:
    # WireGuard, 50 MiB uploaded: pv's one line at the end of the stream
    transfer = parse_counts((DATA / "pv-upload-50mib.txt").read_text(), 50 * MIB)
    assert transfer.complete and transfer.done_bytes == 50 * MIB
    assert transfer.seconds == pytest.approx(0.7269)
    assert transfer.mbit == pytest.approx(50 * MIB * 8 / 0.7269 / 1e6)


def test_a_transfer_cut_short_keeps_its_seconds_and_what_arrived() -> None:
    # the sender stopped by `timeout` after 2.5 s of 100 GiB; socat's warning between
    transfer = parse_counts((DATA / "pv-cut-short.txt").read_text(), 100 * 2**30)
    assert not transfer.complete
    assert transfer.done_bytes == 2790678528 and transfer.seconds == pytest.approx(2.4941)
    assert [round(i.end_s, 4) for i in transfer.intervals] == [1.0, 2.0, 2.4941]
    assert sum(i.bytes for i in transfer.intervals) == transfer.done_bytes
    assert transfer.intervals[1].bytes == 2296483787 - 1154236363


def test_a_transfer_that_never_connected_is_an_error_with_the_reason() -> None:
    with pytest.raises(TransferError, match="Connection refused"):
        parse_counts((DATA / "pv-refused.txt").read_text(), MIB)


def test_udp_loss_counts_the_tail_that_never_arrived() -> None:
    # tinc, 2 senders of 8972-byte datagrams: the receiver saw sequence numbers up to
    # 2750 with 2162 gaps, of 27864 sent; iperf3's own lost_percent says 78.6 %
    udp = parse_iperf_udp((DATA / "iperf3-udp-tail-lost.json").read_text())
    arrived = 2750 - 2162
    assert udp.packets_sent == 27864 and udp.packets_received == arrived
    assert udp.packets_lost == 27864 - arrived
    assert arrived * 8972 == 5275536, "the datagrams received are the bytes received"
