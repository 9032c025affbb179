"""iperf3: parsing its JSON report (`iperf3 -J`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class IperfResult:
    receiver_mbit: float
    sender_mbit: float
    retransmits: int | None
    seconds: float
    streams: int
    bytes_received: int
    sender_cpu_percent: float | None
    receiver_cpu_percent: float | None
    version: str


class IperfError(Exception):
    """iperf3 ran but reported an error (e.g. it could not connect)."""


def load_report(text: str) -> dict[str, Any]:
    """iperf3's JSON report; IperfError if there is none or it reports an error."""
    try:
        report: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError as error:
        raise IperfError(f"iperf3 printed no JSON report ({error}): {text.strip()[:200]}") from None
    if report.get("error"):
        raise IperfError(str(report["error"]))
    return report


def parse_iperf_json(text: str) -> IperfResult:
    """Summarise a TCP test from iperf3's JSON; raise IperfError on its errors."""
    report = load_report(text)
    end = report.get("end") or {}
    received = end.get("sum_received")
    sent = end.get("sum_sent")
    if not received or not sent:
        raise IperfError("iperf3's report has no end summary (the test did not finish)")
    cpu = end.get("cpu_utilization_percent") or {}
    start = report.get("start") or {}
    return IperfResult(
        receiver_mbit=received["bits_per_second"] / 1e6,
        sender_mbit=sent["bits_per_second"] / 1e6,
        retransmits=sent.get("retransmits"),
        seconds=received["seconds"],
        streams=len(end.get("streams") or []) or 1,
        bytes_received=int(received["bytes"]),
        sender_cpu_percent=cpu.get("host_total"),
        receiver_cpu_percent=cpu.get("remote_total"),
        version=str(start.get("version", "")),
    )


@dataclass(frozen=True)
class UdpResult:
    """A UDP test as the receiver counted it: drops measured from outside the overlay."""

    packets_sent: int
    packets_lost: int
    seconds: float
    sender_mbit: float
    receiver_mbit: float
    payload_bytes: int

    @property
    def packets_received(self) -> int:
        return self.packets_sent - self.packets_lost


def parse_iperf_udp(text: str) -> UdpResult:
    """Summarise a UDP test (`iperf3 -u -J`); raise IperfError on its errors."""
    report = load_report(text)
    end = report.get("end") or {}
    received = end.get("sum_received") or end.get("sum")
    sent = end.get("sum_sent") or end.get("sum")
    if not received or not sent or "packets" not in received:
        raise IperfError("iperf3's report has no UDP summary (the test did not finish)")
    test = (report.get("start") or {}).get("test_start") or {}
    return UdpResult(
        packets_sent=int(sent["packets"]),
        packets_lost=int(received.get("lost_packets", 0)),
        seconds=float(sent["seconds"]),
        sender_mbit=sent["bits_per_second"] / 1e6,
        receiver_mbit=received["bits_per_second"] / 1e6,
        payload_bytes=int(test.get("blksize", 0)),
    )
