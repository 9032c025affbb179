"""iperf3: runs of a client against a one-off server, and its JSON report (`-J`) parsed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vnetbench.measure.probe import (
    Began,
    RunOnEngine,
    ToolRun,
    at_instant,
    parsed,
    run_probe,
    save_raw,
    split_began,
    start_probe,
    stop_probe,
)

CONNECT_TIMEOUT_MS = 5000
CONNECT_ATTEMPTS = 5  # while a server just started does not listen yet
CLIENT_GRACE_SECONDS = 30  # beyond the test's length before the client is killed
# A TCP client on a path that died mid-stream never ends by itself: iperf3 (3.18) sends
# its end of test on the control connection and waits for the server's results with no
# timeout of its own when it is the sender, so only timeout(1) ends it, the whole grace
# after the stream (a router killed 1 s into a 20 s stream: killed at 50 s). A healthy
# client needs beyond the stream only its connect (CONNECT_TIMEOUT_MS at most) and the
# end's exchange of results, a few round trips; this much more is left for a busy host
# (the 2 s streams of CI's steps took 2.2-2.7 s whole, server, probe and removal
# included). stream_grace_s (scenarios/throughput.py) adds what a shaped path needs.
END_MARGIN_S = 10.0


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
    return _tcp_summary(load_report(text), "")


def parse_iperf_bidir(text: str) -> IperfResult:
    """A `--bidir` TCP test as one: both directions' rates, bytes and retransmits
    summed (each direction's own figures are in the raw report)."""
    report = load_report(text)
    forward = _tcp_summary(report, "")
    both = combined_tcp([forward, _tcp_summary(report, "_bidir_reverse")])
    return replace(both, streams=forward.streams)  # `streams` lists each direction's once


def _tcp_summary(report: dict[str, Any], suffix: str) -> IperfResult:
    """One direction of a TCP test: `end.sum_sent{suffix}` and `sum_received{suffix}`."""
    end = report.get("end") or {}
    received = end.get(f"sum_received{suffix}")
    sent = end.get(f"sum_sent{suffix}")
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


# A UDP generator is open loop: iperf3 paces by its own clock and sends in bursts to
# catch up, so a sender that was never held reads its declared rate within a percent
# (999.5-999.7 Mbit/s of 1000 in every recorded galaxy42 step). Below this share it
# waited for something, a full socket buffer or a busy core (InstaGENI's 1 Gbit/s of
# small datagrams sent 712-807 here), and the load was not the one declared.
OFFERED_SHARE = 0.9


def generator_short(udp: UdpResult, declared_mbit: float) -> str:
    """Why a UDP generator did not offer the declared rate, or '' when it did."""
    if udp.sender_mbit >= OFFERED_SHARE * declared_mbit:
        return ""
    return (f"the UDP generator offered {udp.sender_mbit:.0f} of the {declared_mbit:g} "
            f"Mbit/s declared ({udp.sender_mbit / declared_mbit:.0%}): the sender fell short "
            "on this host (a busy core or a full socket buffer), so the rate received is "
            "that of a smaller load")


# iperf3 opens a UDP test with one datagram and waits 30 s (SO_RCVTIMEO) for the
# server's answer; when either is lost it fails with this, which says nothing of why.
UDP_OPEN_LOST = "unable to read from stream socket"


def parse_iperf_udp(text: str) -> UdpResult:
    """Summarise a UDP test (`iperf3 -u -J`); raise IperfError on its errors."""
    try:
        report = load_report(text)
    except IperfError as error:
        if UDP_OPEN_LOST not in str(error):
            raise
        raise IperfError(f"{error} (iperf3 opens a UDP test with one datagram and waits "
                         "30 s for the server's answer: it or the answer was lost)") from None
    end = report.get("end") or {}
    received = end.get("sum_received") or end.get("sum")
    sent = end.get("sum_sent") or end.get("sum")
    if not received or not sent or "packets" not in received:
        raise IperfError("iperf3's report has no UDP summary (the test did not finish)")
    test = (report.get("start") or {}).get("test_start") or {}
    # The receiver's "packets" is the highest sequence number it saw, and its losses
    # the gaps below it: a tail that never arrived is in neither. Datagrams received
    # are packets - lost_packets; everything else the sender sent was lost.
    arrived = int(received["packets"]) - int(received.get("lost_packets", 0))
    return UdpResult(
        packets_sent=int(sent["packets"]),
        packets_lost=max(0, int(sent["packets"]) - arrived),
        seconds=float(sent["seconds"]),
        sender_mbit=sent["bits_per_second"] / 1e6,
        receiver_mbit=received["bits_per_second"] / 1e6,
        payload_bytes=int(test.get("blksize", 0)),
    )


IperfRun = ToolRun[IperfResult]
UdpRun = ToolRun[UdpResult]


PORT = 5201  # iperf3's own; clients beyond the first use the ports after it


def client_argv(target: str, seconds: float, options: list[str],
                port: int = PORT) -> list[str]:
    """A client of `seconds` against target with a JSON report, plus the caller's options."""
    return ["iperf3", "-c", target, "-t", f"{seconds:g}", "-J",
            "--connect-timeout", str(CONNECT_TIMEOUT_MS),
            *(["-p", str(port)] if port != PORT else []), *options]


def combined_tcp(results: list[IperfResult]) -> IperfResult:
    """Several clients' tests as one: rates, bytes and retransmits summed (each over
    its own interval: the clients start within a fraction of a second)."""
    if len(results) == 1:
        return results[0]
    retransmits = [r.retransmits for r in results if r.retransmits is not None]
    return IperfResult(
        receiver_mbit=sum(r.receiver_mbit for r in results),
        sender_mbit=sum(r.sender_mbit for r in results),
        retransmits=sum(retransmits) if retransmits else None,
        seconds=max(r.seconds for r in results),
        streams=sum(r.streams for r in results),
        bytes_received=sum(r.bytes_received for r in results),
        sender_cpu_percent=None, receiver_cpu_percent=None,
        version=results[0].version)


def combined_udp(results: list[UdpResult]) -> UdpResult:
    """Several UDP clients as one: packets and rates summed."""
    if len(results) == 1:
        return results[0]
    return UdpResult(
        packets_sent=sum(r.packets_sent for r in results),
        packets_lost=sum(r.packets_lost for r in results),
        seconds=max(r.seconds for r in results),
        sender_mbit=sum(r.sender_mbit for r in results),
        receiver_mbit=sum(r.receiver_mbit for r in results),
        payload_bytes=results[0].payload_bytes)


def udp_options(mbit: float, payload_bytes: int | None = None) -> list[str]:
    """UDP at `mbit` Mbit/s, in datagrams of payload_bytes when given."""
    length = ["-l", str(payload_bytes)] if payload_bytes is not None else []
    return ["-u", "-b", f"{mbit:g}M", *length]


@dataclass(frozen=True)
class IperfServer:
    """A one-off iperf3 server (`-s -1`) listening at address: it serves one client run."""

    run_on: RunOnEngine  # the run and its engine
    address: str
    port: int = PORT
    grace_s: float = CLIENT_GRACE_SECONDS  # a client's bound beyond its test's length

    def run(self, client: str, seconds: float, options: list[str],
            raw_path: Path) -> IperfRun:
        """A test from client's namespace, summarised as a TCP stream (parse_iperf_json)."""
        return parsed(self.client_output(client, seconds, options, raw_path), parse_iperf_json,
                      IperfError)

    def run_udp(self, client: str, seconds: float, mbit: float, payload_bytes: int,
                raw_path: Path) -> UdpRun:
        """UDP from client's namespace, as the receiver counted it."""
        raw = self.client_output(client, seconds, udp_options(mbit, payload_bytes), raw_path)
        return parsed(raw, parse_iperf_udp, IperfError)

    def client_output(self, client: str, seconds: float, options: list[str], raw_path: Path) -> str:
        return self.client_output_at(client, seconds, options, raw_path, None)[0]

    def client_output_at(self, client: str, seconds: float, options: list[str],
                         raw_path: Path, start_at: float | None) -> tuple[str, Began | None]:
        """The client's report (kept in raw_path) and, when it was started at the
        instant `start_at`, when it began (a retry while the server does not listen
        yet begins late, and says so)."""
        argv = client_argv(self.address, seconds, options, self.port)
        output, began = "", None
        for _ in range(CONNECT_ATTEMPTS):
            wait = max(0.0, start_at - time.time()) if start_at is not None else 0.0
            gated = at_instant(start_at, argv) if start_at is not None else argv
            raw = run_probe(self.run_on, client, gated,
                            wait + seconds + self.grace_s).stdout
            began, output = split_began(raw) if start_at is not None else (None, raw)
            if "Connection refused" not in output:
                break
            time.sleep(0.3)
        save_raw(raw_path, output)
        return output, began


@contextmanager
def iperf_server(run: RunOnEngine, container: str, address: str, name: str,
                 port: int = PORT, grace_s: float = CLIENT_GRACE_SECONDS
                 ) -> Iterator[IperfServer]:
    """A one-off server in container's namespace (reached at address), removed afterwards;
    `grace_s`: its clients' bound beyond their test's length."""
    server = start_probe(run, container, ["iperf3", "-s", "-1", "-p", str(port)], name=name)
    try:
        yield IperfServer(run, address, port, grace_s)
    finally:
        stop_probe(run, server)
