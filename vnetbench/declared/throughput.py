"""throughput: what it declares (its metrics, matrix variants, help line); it measures in
vnetbench/scenarios/throughput.py."""

from __future__ import annotations

from vnetbench.core.metrics import Better, Metric
from vnetbench.declared.declaration import (
    DEFAULT,
    EVERY,
    PATH_ROLE,
    Declaration,
    PingCdf,
    Timeline,
)

TCP_MBIT = Metric("tcp_mbit", "Mbit/s", Better.HIGHER, "TCP between two agents",
                  plot="throughput", lead=True)
# Shown, not judged (--all judges it): the mean of 200 round trips of well under a
# millisecond moves with a few scheduling outliers (16-32 ms on 2 shared cores), and
# in 24 kept throughput A/As its test over all rounds fell below 0.05 in 6 (1 in 1000
# for arms that are alike: docs/studies/2026-12-ab.md). The minimum round trip, from the same pings,
# is the judged latency. Declared before the A/As that check it were run.
RTT_MEAN_MS = Metric("rtt_mean_ms", "ms", Better.LOWER, "Mean ping round trip", plot="rtt",
                     lead=True, noisy=True)
THROUGHPUT = (
    TCP_MBIT,
    RTT_MEAN_MS,
    Metric("ping_loss", "%", Better.LOWER, "Ping loss"),
    Metric("tcp_retransmits", "count", Better.LOWER, "TCP retransmits", noisy=True),
    Metric("cpu_percent", "% of a core", Better.LOWER,
           "CPU of the {role} containers during the stream (% of a core)", noisy=True,
           display="cpu_{role}_percent"),
    # memory per container of a role (measure/memory.py): noisy, as a daemon's heap and
    # the kernel memory charged to it move with allocator and GC timing between runs
    Metric("mem_idle_mib", "MiB", Better.LOWER,
           "Memory per {role} container, idle (MiB)", noisy=True,
           display="mem_{role}_idle_mib"),
    Metric("mem_load_mib", "MiB", Better.LOWER,
           "Memory per {role} container, under load: the stream, the room's requests (MiB)",
           noisy=True, display="mem_{role}_load_mib"),
    Metric("mem_peak_mib", "MiB", Better.LOWER,
           label="Memory peak of any {role} container since it started, page cache "
                 "included (MiB)", noisy=True, display="mem_{role}_peak_mib"),
    Metric("tcp_bytes", "bytes"),
    Metric("tcp_sender_cpu", "%", Better.LOWER, noisy=True),
    Metric("rtt_min_ms", "ms", Better.LOWER, label="Ping round trip, min"),
    Metric("rtt_max_ms", "ms", Better.LOWER, label="Ping round trip, max", noisy=True),
    Metric("rtt_mdev_ms", "ms", Better.LOWER, label="Ping round trip, mdev", noisy=True),
    Metric("ping_sent", "count"),
    Metric("ping_received", "count", Better.HIGHER),
    Metric("tunnel_rx_bytes", "bytes"),
    Metric("cpu_sending_agent_percent", "% of a core", Better.LOWER,
           "CPU of the sending agent's container (% of a core)", noisy=True),
    Metric("cpu_receiving_agent_percent", "% of a core", Better.LOWER,
           "CPU of the receiving agent's container (% of a core)", noisy=True),
    Metric("udp_mbit", "Mbit/s", Better.HIGHER, "UDP received", plot="udp"),
    Metric("udp_loss", "%", Better.LOWER, "UDP datagrams lost"),
    Metric("udp_sent_mbit", "Mbit/s", label="UDP sent"),
    Metric("udp_datagrams_sent", "count"),
    Metric("clients_end_spread_s", "s", Better.LOWER,
           label="Spread of the clients' ends (how far apart they ran)", noisy=True),
    Metric("clients_start_spread_s", "s", Better.LOWER,
           label="Spread of the clients' begins (started at one instant)", noisy=True),
    # pings of each extra payload size (set_ping_sizes)
    Metric("sized_rtt_mean_ms", "ms", Better.LOWER,
           "Mean ping round trip, {size}-byte payload", display="rtt_mean_ms_at_{size}b"),
    Metric("sized_rtt_min_ms", "ms", Better.LOWER, display="rtt_min_ms_at_{size}b"),
    Metric("sized_rtt_max_ms", "ms", Better.LOWER, noisy=True,
           display="rtt_max_ms_at_{size}b"),
    Metric("sized_rtt_mdev_ms", "ms", Better.LOWER, noisy=True,
           display="rtt_mdev_ms_at_{size}b"),
    Metric("sized_ping_loss", "%", Better.LOWER, display="ping_loss_at_{size}b"),
    Metric("tunnel_mtu", "bytes", label="Tunnel MTU (as the kernel reports it)"),
    Metric("link_mtu", "bytes", label="Link MTU (as the kernel reports it)"),
)
# a schedule of faults during the stream (vnetbench/faults/): one of each per event, its
# `fault` the event's label; figures from iperf3's intervals (measure/stream_faults.py)
STREAM_TIMELINE = "stream_timeline_mbit"
STREAM_FAULTS = (
    Metric("stream_fault_before_mbit", "Mbit/s", Better.HIGHER, noisy=True,
           label="Stream: its rate in the 10 s before the fault, {fault}",
           display="stream_fault_before_mbit_{fault}"),
    Metric("stream_fault_during_mbit", "Mbit/s", Better.HIGHER,
           "Stream: its rate while the fault was in effect, {fault}",
           display="stream_fault_during_mbit_{fault}"),
    Metric("stream_fault_after_mbit", "Mbit/s", Better.HIGHER,
           label="Stream: its rate in the 10 s after the lift, {fault}",
           display="stream_fault_after_mbit_{fault}"),
    Metric("stream_fault_stalled_ms", "ms", Better.LOWER,
           "Stream: time it moved under a tenth of its rate before, from the fault to 10 s "
           "after the lift, {fault}", lead=True, display="stream_fault_stalled_ms_{fault}"),
    Metric("stream_fault_recovery_ms", "ms", Better.LOWER,
           "Stream: from the lift until its rate stays within a tenth of its rate before, "
           "{fault}", lead=True, display="stream_fault_recovery_ms_{fault}"),
    Metric("stream_fault_held_ms", "ms", label="Stream: the fault in effect as stamped, "
           "{fault}", display="stream_fault_held_ms_{fault}"),
    Metric("stream_fault_declared_ms", "ms", label="Stream: the fault's declared span, "
           "{fault}", display="stream_fault_declared_ms_{fault}"),
    Metric("stream_fault_at_s", "s", label="Stream: the fault in effect, seconds after the "
           "stream began, {fault}", display="stream_fault_at_s_{fault}"),
    Metric("stream_fault_end_s", "s", label="Stream: the fault lifted, seconds after the "
           "stream began, {fault}", display="stream_fault_end_s_{fault}"),
    Metric("stream_survived", "count", Better.HIGHER,
           label="Stream: 1 when iperf3 ended its test under the faults without an error"),
    Metric(STREAM_TIMELINE, "Mbit/s", label="Stream: its rate per 100 ms"),
)

DECLARATION = Declaration(
    name="throughput",
    description="TCP rate and ping RTT between two agents on different switches",
    metrics=THROUGHPUT + STREAM_FAULTS,
    runtime="vnetbench.scenarios.throughput:Throughput",
    variants={EVERY: DEFAULT,
              "vnet": {"tls": {"tls": True, "limits": False},  # the seed's three rows
                       "plain": {"tls": False, "limits": False},
                       "tls-limits": {"tls": True, "limits": True}}},
    figures=(PingCdf("cdf-throughput", "throughput: ping round trips, a line per pass (CDF)"),
             Timeline("throughput-faults", STREAM_TIMELINE, "stream_fault_at_s",
                      "stream_fault_end_s", "throughput on {overlay} under its faults",
                      "stream rate per 100 ms (Mbit/s)", "seconds since the load began")),
    roles=(PATH_ROLE,),
)
