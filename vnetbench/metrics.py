"""The metric catalogue: every value a scenario emits, declared once, here (each
scenario names its own group as its `metrics`), and read by the stats, tables,
plots and regression verdicts instead of tables kept by hand. It lives apart
from the scenarios so that reading results never loads the code that measures.

A metric name may hold one `{field}` (`cpu_{role}_percent`, `joined_on_{switch}`):
it then stands for every name of that shape.

A metric is *judged* (given a better/worse verdict by `compare` and `ab`) when it
says which way is better and is not declared noisy: counters that move a lot
between identical runs on a shared machine (retransmits, ping mdev and max, CPU
shares, the testbed's own gate timings) are shown beside the verdicts, and judged
only when asked (`--all`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

BOOL = "bool"  # the unit of a yes/no metric: 1 yes, 0 no


class Better(StrEnum):
    HIGHER = "higher"
    LOWER = "lower"
    NEITHER = "neither"  # a count or a setting: a change is reported, never judged


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    better: Better = Better.NEITHER
    headline: str | None = None  # the label in headline tables; None: not a headline
    plot: str | None = None  # file stem of its bar chart per overlay (report plots)
    label: str | None = None  # how a method's table names it when it is no headline
    noisy: bool = False  # shown, not judged, by compare and ab unless asked (--all)
    lead: bool = False  # one of its scenario's figures in the report's summary (a headline)
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = re.split(r"\{\w+\}", self.name)
        regex = r"[\w.-]+".join(re.escape(p) for p in parts)
        object.__setattr__(self, "pattern", re.compile(f"^{regex}$"))
        if self.lead and not self.headline:
            raise ValueError(f"{self.name}: a lead metric is a headline (it needs its label)")

    @property
    def judged(self) -> bool:
        """Does a change of it get a verdict (by default)?"""
        return self.better is not Better.NEITHER and not self.noisy

    def matches(self, name: str) -> bool:
        return bool(self.pattern.match(name))

    def label_for(self, name: str) -> str:
        """The headline label of one concrete name ({field} filled in from it)."""
        label = self.headline or self.label or name
        found = re.search(r"\{(\w+)\}", self.name)
        if found and "{" in label:
            prefix, _, suffix = self.name.partition(found.group(0))
            value = name.removeprefix(prefix).removesuffix(suffix)
            label = label.replace(found.group(0), value)
        return label


SKIPPED = Metric("skipped", "", headline=None)  # the row of a pass that did not run
# Every pass's: what the host spent outside the testbed meanwhile (measure/cpu.py)
OUTSIDE_LOAD = Metric("host_outside_cores", "cores",
                      label="CPU busy outside the testbed during the pass (cores)")


class Catalogue:
    """Every declared metric, in declaration order (the order headline tables use)."""

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self.metrics = [SKIPPED, OUTSIDE_LOAD, *metrics]
        names = [m.name for m in self.metrics]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            raise ValueError(f"metrics declared twice: {', '.join(sorted(duplicates))}")

    def __iter__(self) -> Iterator[Metric]:
        return iter(self.metrics)

    def find(self, name: str) -> Metric | None:
        exact = next((m for m in self.metrics if m.name == name), None)
        return exact or next((m for m in self.metrics if m.matches(name)), None)

    def better(self, name: str) -> Better:
        metric = self.find(name)
        return metric.better if metric else Better.NEITHER

    def judged(self, name: str) -> bool:
        metric = self.find(name)
        return metric.judged if metric else False

    def headline(self, name: str) -> str | None:
        metric = self.find(name)
        return metric.label_for(name) if metric and metric.headline else None

    def label(self, name: str) -> str:
        """Its headline, else its label, else the name itself (a method's rows)."""
        metric = self.find(name)
        return metric.label_for(name) if metric else name

    def order(self, name: str) -> int:
        metric = self.find(name)
        return self.metrics.index(metric) if metric else len(self.metrics)


# -- what each scenario emits, in the order headline tables use ----------------------
TCP_MBIT = Metric("tcp_mbit", "Mbit/s", Better.HIGHER, "TCP between two agents",
                  plot="throughput", lead=True)
RTT_MEAN_MS = Metric("rtt_mean_ms", "ms", Better.LOWER, "Mean ping round trip", plot="rtt",
                     lead=True)
THROUGHPUT = (
    TCP_MBIT,
    RTT_MEAN_MS,
    Metric("ping_loss", "%", Better.LOWER, "Ping loss"),
    Metric("tcp_retransmits", "count", Better.LOWER, "TCP retransmits", noisy=True),
    Metric("cpu_{role}_percent", "% of a core", Better.LOWER,
           "CPU of the {role} containers during the stream (% of a core)", noisy=True),
    # memory per container of a role (measure/memory.py): noisy, as a daemon's heap and
    # the kernel memory charged to it move with allocator and GC timing between runs
    Metric("mem_{role}_idle_mib", "MiB", Better.LOWER,
           "Memory per {role} container, idle (MiB)", noisy=True),
    Metric("mem_{role}_load_mib", "MiB", Better.LOWER,
           "Memory per {role} container, under load: the stream, the room's requests (MiB)",
           noisy=True),
    Metric("mem_{role}_peak_mib", "MiB", Better.LOWER,
           label="Memory peak of any {role} container since it started, page cache "
                 "included (MiB)", noisy=True),
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
    Metric("rtt_mean_ms_at_{size}b", "ms", Better.LOWER,
           "Mean ping round trip, {size}-byte payload"),
    Metric("rtt_min_ms_at_{size}b", "ms", Better.LOWER),
    Metric("rtt_max_ms_at_{size}b", "ms", Better.LOWER, noisy=True),
    Metric("rtt_mdev_ms_at_{size}b", "ms", Better.LOWER, noisy=True),
    Metric("ping_loss_at_{size}b", "%", Better.LOWER),
    Metric("tunnel_mtu", "bytes", label="Tunnel MTU (as the kernel reports it)"),
    Metric("link_mtu", "bytes", label="Link MTU (as the kernel reports it)"),
)

JOIN_SECONDS = Metric("join_seconds", "s", Better.LOWER, "Machines joining at once",
                      lead=True)
JOIN = (
    JOIN_SECONDS,
    Metric("joined", "count", Better.HIGHER, "Machines joined"),
    Metric("gate_spread_ms", "ms", Better.LOWER, "Start gate spread", noisy=True),
    Metric("gate_node_skew_ms", "ms", Better.LOWER,
           label="Start gate: the hosts' gates opened, first to last", noisy=True),
    Metric("machines", "count"),
    Metric("not_joined", "count", Better.LOWER),
    Metric("gate_never_released", "count", Better.LOWER),
    Metric("joined_on_{switch}", "count"),
    Metric("restart_seconds", "s", Better.LOWER,
           label="Programs stopped and started again before the pass", noisy=True),
    Metric("settle_seconds", "s", label="Quiet host awaited before the release"),
    Metric("not_restarted", "count", Better.LOWER),
)

CONFIG = (
    Metric("config_seconds", "s", Better.LOWER, "Config change", lead=True),
    Metric("config_lines", "count"),
    Metric("config_bytes", "bytes"),
    Metric("switches_confirmed", "count", Better.HIGHER),
)

FLOOD = (
    Metric("pings_answered", "count", Better.HIGHER, "Pings answered under flood",
           lead=True),
    Metric("flood_packets_dropped", "count", Better.NEITHER,
           "Flood packets lost (receiver count)"),
    Metric("limiter_drops", "count", Better.NEITHER, "Packets dropped by the rate limit"),
    Metric("predicted_drops", "count", Better.NEITHER,
           "Token-bucket prediction of those drops"),
    Metric("pings_sent", "count"),
    Metric("ping_rtt_mean_ms", "ms", Better.LOWER),
    Metric("flood_packets_sent", "count"),
    Metric("flood_packets_received", "count"),
    Metric("flood_received_mbit", "Mbit/s"),
    Metric("prediction_difference", "%"),
    Metric("limit_allowed_pps", "packets/s"),
)

TRANSFER_DIRECTIONS = ("upload", "download")
INTERVAL_BYTES_SUFFIX = "_interval_bytes"  # a direction's bytes of one interval (interval_s)
TRANSFER = tuple(metric for d in TRANSFER_DIRECTIONS for metric in (
    Metric(f"{d}_seconds", "s", Better.LOWER, f"Time to the last byte, {d}"),
    Metric(f"{d}_mbit", "Mbit/s", Better.HIGHER, f"Rate of the {d}", plot="transfer",
           lead=True),
    Metric(f"{d}_bytes", "bytes", Better.HIGHER),
    Metric(f"{d}_interval_mbit", "Mbit/s"),  # rows with interval_s
    Metric(f"{d}{INTERVAL_BYTES_SUFFIX}", "bytes")))

ANSWERED_PREFIX = "answered_"  # failover's timeline: probes answered per 0.1 s
FAULT_AT_PREFIX = "fault_at_s_"  # where on that timeline the fault was injected
# failover: one of each per fault, `{fault}` its kind (switch-restart, backbone-down...)
FAILOVER = (
    Metric("outage_ms_{fault}", "ms", Better.LOWER, "Outage across switches, {fault}",
           lead=True),
    Metric("lost_{fault}", "count", Better.LOWER, "Probes lost (10 ms apart), {fault}"),
    Metric("tcp_stall_ms_{fault}", "ms", Better.LOWER, "TCP stall, {fault}"),
    Metric("tcp_survived_{fault}", BOOL, Better.HIGHER, "TCP connection survived, {fault}",
           lead=True),
    Metric("rejoin_seconds_{fault}", "s", Better.LOWER, "Agents registered again, {fault}"),
    Metric("not_recovered_{fault}", "count", Better.LOWER, "Never recovered, {fault}"),
    Metric("late_join_s_{fault}", "s", Better.LOWER,
           "A machine restarted during the kill: its join, {fault}"),
    Metric("late_joined_during_{fault}", BOOL,
           label="That machine joined before the killed role was back, {fault}"),
    Metric("local_outage_ms_{fault}", "ms", Better.LOWER,
           label="Outage on the same switch, {fault}"),
    Metric("local_lost_{fault}", "count", Better.LOWER),
    Metric("ready_seconds_{fault}", "s", Better.LOWER,
           label="Killed container: started again to ready, {fault}", noisy=True),
    Metric(ANSWERED_PREFIX + "{fault}", "share"),  # rows with interval_s: the timeline
    Metric(FAULT_AT_PREFIX + "{fault}", "s",
           label="Fault injected, seconds after the probe began, {fault}"),
)

ROOM_P99_MS = Metric("room_p99_ms", "ms", Better.LOWER, "Room: request latency p99",
                     plot="room-p99", lead=True)
ROOM_LATENCY_PREFIX = "room_latency_q"  # room's latency CDF: room_latency_q{point}_ms
# room: one row each per pass, over every request of every machine (measure/room.py)
ROOM = (
    Metric("room_p50_ms", "ms", Better.LOWER, "Room: request latency p50", plot="room-p50"),
    ROOM_P99_MS,
    Metric("room_failed", "count", Better.LOWER, "Room: requests failed or timed out"),
    Metric("room_fairness", "index", Better.HIGHER,
           "Room: fairness of the machines' goodput (Jain's index, 1 = equal)"),
    Metric("room_goodput_mbit", "Mbit/s", Better.HIGHER, "Room: aggregate goodput",
           lead=True),
    Metric("room_cpu_server_percent", "% of a core", Better.LOWER,
           "Room: CPU of the server agent's container (% of a core)", noisy=True),
    Metric("room_cpu_{role}_percent", "% of a core", Better.LOWER,
           "Room: CPU of the {role} containers (% of a core)", noisy=True),
    Metric("room_host_cpu_percent", "% of all cores",
           label="Room: the host's CPU busy during the load (all cores)"),
    Metric("room_p95_ms", "ms", Better.LOWER, label="Room: request latency p95"),
    Metric("room_max_ms", "ms", Better.LOWER, label="Room: request latency max", noisy=True),
    Metric("room_timeouts", "count", Better.LOWER, label="Room: requests timed out"),
    Metric("room_answered", "count", label="Room: requests answered"),
    Metric("room_requests_per_s", "requests/s", label="Room: requests answered per second"),
    Metric("room_goodput_min_mbit", "Mbit/s", Better.HIGHER,
           label="Room: the slowest machine's goodput"),
    Metric("room_machines", "count", label="Room: machines that ran"),
    Metric("room_no_record", "count", Better.LOWER,
           label="Room: machines whose load left no record"),
    Metric("room_stalled", "count", Better.LOWER,
           label="Room: machines whose wrk never ended (stopped, its counts lost)"),
    Metric("room_late_s", "s", Better.LOWER, noisy=True,
           label="Room: the latest machine's start after the room's instant"),
    Metric("room_probes_start_s", "s", noisy=True,
           label="Room: starting every machine's probe took (before the instant)"),
    Metric(ROOM_LATENCY_PREFIX + "{point}_ms", "ms",
           label="Room: request latency, {point}th percentile"),
)

# transactions: netperf's request/response tests, alone, then `{instances}` at once
# (rr_parallel; their rates summed, the worst instance's p99)
RR_TESTS = {"tcp_rr": "TCP_RR", "tcp_crr": "TCP_CRR"}
TRANSACTIONS = tuple(metric for prefix, test in RR_TESTS.items() for metric in (
    Metric(f"{prefix}_tps", "transactions/s", Better.HIGHER, f"{test} (transactions/s)",
           lead=True),
    Metric(f"{prefix}_p50_us", "µs", Better.LOWER, f"{test} latency, p50 (µs)"),
    Metric(f"{prefix}_p90_us", "µs", Better.LOWER, label=f"{test} latency, p90 (µs)"),
    Metric(f"{prefix}_p99_us", "µs", Better.LOWER, f"{test} latency, p99 (µs)", noisy=True),
    Metric(f"{prefix}_max_us", "µs", Better.LOWER, label=f"{test} latency, max (µs)",
           noisy=True),
    Metric(f"{prefix}_mean_us", "µs", Better.LOWER, label=f"{test} latency, mean (µs)"),
    Metric(f"{prefix}_tps_x{{instances}}", "transactions/s", Better.HIGHER,
           f"{test}, {{instances}} at once (transactions/s, summed)"),
    Metric(f"{prefix}_p99_us_x{{instances}}", "µs", Better.LOWER,
           f"{test}, {{instances}} at once: the worst p99 (µs)", noisy=True)))

# loaded_latency: pings every 10 ms idle, under TCP one way, then both ways (RRUL)
LOAD_PHASES = {"idle": "idle", "one_way": "under load one way",
               "both_ways": "under load both ways"}
LOADED = ("one_way", "both_ways")
LOADED_LATENCY = (
    *(Metric(f"{phase}_added_p{q}_ms", "ms", Better.LOWER,
             f"Latency added {LOAD_PHASES[phase]}, p{q} (ms)",
             noisy=q == 99, lead=q == 50) for phase in LOADED for q in (50, 99)),
    *(metric for phase, words in LOAD_PHASES.items() for metric in (
        Metric(f"{phase}_rtt_p50_ms", "ms", Better.LOWER,
               f"Ping round trip, {words}, p50" if phase == "idle" else None,
               label=f"Ping round trip, {words}, p50"),
        Metric(f"{phase}_rtt_p99_ms", "ms", Better.LOWER,
               label=f"Ping round trip, {words}, p99", noisy=True),
        Metric(f"{phase}_rtt_max_ms", "ms", Better.LOWER,
               label=f"Ping round trip, {words}, max", noisy=True),
        Metric(f"{phase}_ping_loss", "%", Better.LOWER, label=f"Ping loss, {words}"),
        Metric(f"{phase}_pings_sent", "count", label=f"Pings sent, {words}"))),
    *(Metric(f"{phase}_load_mbit", "Mbit/s", Better.HIGHER,
             label=f"TCP goodput {LOAD_PHASES[phase]} (the load)") for phase in LOADED),
)

CATALOGUE = Catalogue((*THROUGHPUT, *JOIN, *CONFIG, *FLOOD, *TRANSFER, *FAILOVER,
                       *ROOM, *TRANSACTIONS, *LOADED_LATENCY))


def catalogue() -> Catalogue:
    """Every declared metric (no scenario need be loaded to read results)."""
    return CATALOGUE
