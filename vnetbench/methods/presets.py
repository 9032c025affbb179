"""The reference methods of ../shared/references, as presets.

Each keeps its reference's measurement and the shape of its table; where this
testbed differs (stream lengths, a tunnel MTU an overlay cannot take), the
method's `differences` says so and every row carries the settings it ran.
"""

from __future__ import annotations

from vnetbench.declared.throughput import DECLARATION as THROUGHPUT
from vnetbench.methods.base import Method, Step

PING_SIZES = (100, 500, 1000)

VPNCLOUD = Method(
    name="vpncloud",
    reference="vpncloud-performance.txt",
    summary="VpnCloud's performance tests: TCP throughput and CPU per side at tunnel MTU "
            "1400 and 16384, ping RTT at 100, 500 and 1000-byte payloads, encrypted and "
            "not where the overlay can turn it off, beside the native path (baseline)",
    scenario="throughput",
    settings={"ping_sizes": PING_SIZES, "pings": 500, "ping_interval_ms": 2},
    steps=(
        Step("MTU 1400, encrypted", {"tunnel_mtu": 1400}),
        Step("MTU 16384, encrypted", {"tunnel_mtu": 16384}),
        Step("MTU 1400, unencrypted", {"tunnel_mtu": 1400, "encryption": False}),
        Step("MTU 16384, unencrypted", {"tunnel_mtu": 16384, "encryption": False}),
    ),
    rows=("tcp_mbit", "cpu_sending_agent_percent", "cpu_receiving_agent_percent",
          *(THROUGHPUT.series("sized_rtt_mean_ms", size=size) for size in PING_SIZES),
          "tunnel_mtu"),
    short={"seconds": 2, "passes": 1, "pings": 50},
    short_steps=("MTU 1400, unencrypted", "MTU 16384, encrypted"),
    differences="iperf3 for 10 s per pass (VpnCloud: iperf for 60 s); 500 pings at 2 ms "
                "per size (VpnCloud: 10000 at 1 ms, best of 5); an overlay whose tunnel "
                "cannot take 16384 runs at its largest, and says so",
)

LIBP2P_PERF = Method(
    name="libp2p-perf",
    reference="libp2p-perf-benchmark.txt",
    summary="libp2p perf: 100 MiB uploaded, then 100 MiB downloaded, each timed to the "
            "last byte, per-second figures kept, on a clean path, under 10 ms delay, "
            "and under 1 % and 10 % loss on the backbone",
    scenario="transfer",
    settings={"transfer_bytes": 100 * 2**20, "transfer_timeout_s": 60},
    steps=(
        Step("unshaped"),
        Step("10 ms delay", links={"backbone": {"delay": "10ms"}}),
        Step("1 % loss", links={"backbone": {"loss": 1, "offloads": False}}),
        Step("10 % loss", links={"backbone": {"loss": 10, "offloads": False}}),
    ),
    rows=("upload_seconds", "upload_mbit", "download_seconds", "download_mbit"),
    short={"transfer_bytes": 50 * 2**20, "passes": 1, "transfer_timeout_s": 30},
    short_steps=("unshaped", "1 % loss"),
    differences="iperf3 -n over TCP (libp2p: its own perf protocol over TCP and QUIC); "
                "delay and loss apply each way on the backbone (libp2p: dummynet on the "
                "server's inbound packets), per packet (offloads off); a direction still "
                "running after 60 s is stopped and counted as not finished; on a kernel "
                "without netem the 10 ms is a delay line in userspace, which cannot carry "
                "a transfer at full rate: that step's pass fails, naming the line",
)

GALAXY42 = Method(
    name="galaxy42",
    reference="galaxy42-networkspeed-10g.txt",
    summary="galaxy42's 10G test: link MTU 9000 on every segment, UDP in 8972-byte "
            "datagrams from one and from two senders, the rate and loss the receiver saw",
    scenario="throughput",
    settings={"udp_mbit": 5000, "udp_length": 8972, "tunnel_mtu": 9000, "pings": 50},
    steps=(
        Step("1 sender, 8972-byte UDP", {"clients": 1},
             links={"site": {"mtu": 9000}, "backbone": {"mtu": 9000}}),
        Step("2 senders, 8972-byte UDP", {"clients": 2},
             links={"site": {"mtu": 9000}, "backbone": {"mtu": 9000}}),
    ),
    rows=("udp_mbit", "udp_loss", "udp_sent_mbit", "link_mtu", "tunnel_mtu"),
    short={"seconds": 2, "passes": 1, "udp_mbit": 1000},
    differences="iperf3 -u at 5 Gbit/s per sender (galaxy42: its own blocking sender at "
                "line rate on 10G fibre); the tunnel MTU is 9000 where the overlay takes "
                "it, so a datagram crosses the tunnel whole and the overlay's packets are "
                "fragmented on the link",
)

INSTAGENI = Method(
    name="instageni",
    reference="instageni-openflow-iperf.txt",
    summary="InstaGENI's OpenFlow confirmation: TCP with 1, 5 and 10 clients at once, one "
            "UDP client, ping min/avg/max/mdev",
    scenario="throughput",
    steps=(
        Step("1 client (tcp)"),
        Step("5 clients (tcp)", {"clients": 5}),
        Step("10 clients (tcp)", {"clients": 10}),
        Step("1 client (udp)", {"udp_mbit": 1000}),
    ),
    rows=("tcp_mbit", "udp_mbit", "udp_loss", "rtt_min_ms", "rtt_mean_ms", "rtt_max_ms",
          "rtt_mdev_ms", "clients_end_spread_s"),
    short={"seconds": 2, "passes": 1, "pings": 50},
    short_steps=("1 client (tcp)", "5 clients (tcp)", "1 client (udp)"),
    differences="10 s per pass (InstaGENI: 60 s); clients are separate containers, each "
                "its own iperf3 against its own server, in the client agent's namespace "
                "(InstaGENI: iperf -P threads); UDP offered at 1 Gbit/s",
)

METHODS: dict[str, Method] = {m.name: m for m in (VPNCLOUD, LIBP2P_PERF, GALAXY42, INSTAGENI)}
