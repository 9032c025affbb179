"""throughput: one TCP stream between two agents on different switches, then pings.

As the seed: BENCH_SECONDS of TCP with iperf3, then 200 pings at 10 ms (pings at
several sizes, a method's own ping test, go first, on the idle path). A
path that delivers nothing is reported as "path dead", within bounded time.
The reference methods vary it: several client containers at once (each its
own iperf3 against its own server, InstaGENI's "clients"), UDP at a rate in
datagrams of a given size (galaxy42), pings at several payloads (VpnCloud),
and CPU per side of the stream (VpnCloud's "sender, receiver"). Memory per role is
read idle (before the stream) and under load (in the stream, near its end).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from vnetbench.core.outcome import Kind, State, single
from vnetbench.core.units import burst_bytes
from vnetbench.declared.declaration import Values
from vnetbench.declared.throughput import DECLARATION
from vnetbench.engines.base import EngineError
from vnetbench.engines.stack import Stack
from vnetbench.faults.on_stack import FaultSchedule, ScheduleOutcome
from vnetbench.faults.schedule import expand
from vnetbench.measure.cpu import (
    cpu_percent,
    role_percent,
    went_backwards,
)
from vnetbench.measure.iperf import (
    CLIENT_GRACE_SECONDS,
    CONNECT_TIMEOUT_MS,
    END_MARGIN_S,
    PORT,
    IperfError,
    IperfResult,
    IperfServer,
    UdpResult,
    combined_tcp,
    combined_udp,
    generator_short,
    iperf_server,
    parse_iperf_json,
    parse_iperf_udp,
    udp_options,
)
from vnetbench.measure.memory import RoleMemory, by_role
from vnetbench.measure.ping import PingResult, PingRun, run_ping
from vnetbench.measure.probe import Began, ToolRun, parsed, run_probe
from vnetbench.model.faults.path import missed_at_run_time, refuse_untouched
from vnetbench.model.topology import SharedSettings, Topology
from vnetbench.scenarios.base import Metrics, PassResult, ScenarioContext
from vnetbench.scenarios.pair import (
    PairScenario,
    declared_round_trip_s,
    path_status,
    pick_pair,
    stall_floor_mbit,
    with_last_log_lines,
)
from vnetbench.scenarios.resources import CPU_ROLES, MemoryFigures
from vnetbench.scenarios.throughput_faults import (
    INTERVAL_OPTIONS,
    check_stream_faults,
    stream_fault_result,
)
from vnetbench.shaping.plan import TBF_LATENCY_MS
from vnetbench.terminal.ui import waiting


class Throughput(PairScenario):
    declaration = DECLARATION
    # its streams and pings stopped when the pass ends, counters read as deltas; its
    # idle memory is read before each stream, so after any cell before it on a shared
    # stack as pass 2 reads it after pass 1 (in the matrix it comes first: declared first)
    shares_stack = True
    injects_faults = True  # the topology's `faults`, as one schedule during the stream

    def check(self, topology: Topology) -> None:
        super().check(topology)
        if topology.faults:
            check_stream_faults(topology)
            client, server = pick_pair(topology, scenario=self.name)
            refuse_untouched(topology.faults, {client.switch, server.switch},
                             topology.switches, topology.overlay,
                             f"stream from {client.name} to {server.name}", topology.name,
                             "measure a pair across it (--pair FROM,TO, or the topology's "
                             "measure: {from: ..., to: ...})")

    def settings(self, topology: Topology) -> dict[str, object]:
        s = topology.settings
        return {"seconds": s.seconds, "pings": s.pings, "ping_interval_ms": s.ping_interval_ms,
                "streams": s.streams, "reverse": s.reverse, "udp_mbit": s.udp_mbit or 0,
                "ping_size": s.ping_size, "tls": s.tls, "limits": s.limits,
                "encryption": s.encryption, "tunnel_mtu": s.tunnel_mtu or 0,
                "clients": s.clients, "udp_length": s.udp_length or 0,
                "ping_sizes": ",".join(str(size) for size in s.ping_sizes)}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        client, server = pick_pair(context.topology, context.placement())
        target = context.overlay.target_address(context.topology, context.plan, server.name)
        # a series of ping sizes (VpnCloud's own ping test) goes first, before this
        # pass's stream, as VpnCloud ran it apart from its throughput test
        early = context.topology.settings.ping_sizes
        if early:  # the tunnel's counter read after them: their bytes are not the stream's
            mtus = interface_mtus(context, client.name)
            pings = self._pings(context, client.name, target, pass_no)
            tunnel = TunnelCounter(context, server.name)
        else:  # two reads in two namespaces before anything measures: side by side
            pings = []
            mtus, tunnel = beside(lambda: interface_mtus(context, client.name),
                                  lambda: TunnelCounter(context, server.name))
        stream = self._stream(context, client.name, server.name, target, pass_no, tunnel)
        tcp, udp, tcp_error = stream.tcp, stream.udp, stream.error
        pings = pings or self._pings(context, client.name, target, pass_no)
        ping, ping_error = pings[0].result, pings[0].error
        metrics = (stream_metrics(stream) | ping_metrics(ping) | sized_ping_metrics(
            context.topology, pings) | mtus)
        summary: dict[str, float | int | str | None] = {
            "tcp_mbit": tcp.receiver_mbit if tcp else None,
            "retransmits": tcp.retransmits if tcp else None,
            "rtt_ms": ping.rtt_mean_ms if ping else None,
            "pings": f"{ping.received}/{ping.transmitted}" if ping else None,
        }
        if udp:
            summary = {"udp_mbit": udp.receiver_mbit,
                       "udp_loss": udp_metrics(udp)["udp_loss"][0],
                       **{k: v for k, v in summary.items() if not k.startswith(("tcp", "ret"))}}
        outcome = path_status(tcp or udp, tcp_error, ping, ping_error,
                              stall_floor_mbit(context.topology))
        short = offered_short(udp, context.topology.settings)
        if outcome.state is State.OK and (stream.apart or short):
            outcome = single(State.PARTIAL, Kind.PARTIAL, f"partial: {stream.apart or short}")
        if outcome.state.measured:
            for metric, why in stream.unmeasured.items():
                outcome.add(Kind.UNMEASURED, f"no {metric}: {why}", addendum=True)
        notes = []
        if outcome.state is State.DEAD:
            with_last_log_lines(context, outcome, pass_no, client, server)
            notes.append(outcome.status)
        for missed in missed_at_run_time(context.topology.faults, {client.switch, server.switch},
                                         context.topology.switches, context.overlay.name):
            outcome.add(Kind.NOTE, missed, addendum=True)
        result = PassResult(metrics, summary, outcome, notes)
        if stream.faults is not None:
            with_stream_faults(result, stream.faults)
        return result

    def _stream(
        self, context: ScenarioContext, client: str, server: str, target: str, pass_no: int,
        tunnel: TunnelCounter,
    ) -> Stream:
        """The stream (or the clients' streams, all at once), with the CPU each role and
        each side of it used meanwhile, each role's memory before it and under it, and
        the bytes the server's tunnel received (`tunnel`: its counter, read before)."""
        stack, settings = context.stack, context.topology.settings
        options = stream_options(context.topology)
        sides = {"sending": context.container(server if settings.reverse else client),
                 "receiving": context.container(client if settings.reverse else server)}
        kind = " ".join(options) or "TCP"
        count = f"{settings.clients} clients: " if settings.clients > 1 else ""
        with ExitStack() as servers, waiting(
                f"pass {pass_no}: {count}{kind} {client} → {server} ({target})",
                settings.seconds):
            grace_s = stream_grace_s(context.topology)
            iperfs = [servers.enter_context(iperf_server(
                stack, context.container(server), target,
                f"{stack.rendered.project}-iperf-server-{pass_no}-{n}", PORT + n, grace_s))
                for n in range(settings.clients)]
            idle = by_role(stack.memory_by_role())
            schedule = Throughput.schedule(context, pass_no)
            start_at = None
            if schedule is not None:  # staged before the stream's instant, fired from it
                start_at = time.time() + CLIENTS_LEAD_S + schedule.lead_s
                schedule.stage_at(start_at)
                options = [*options, *INTERVAL_OPTIONS]
            roles_before, sides_before = role_and_side_cpu(stack, sides)
            started = time.monotonic()
            loaded = MemoryUnderLoad(stack, LOAD_READ_SHARE * settings.seconds)
            try:
                if schedule is not None:
                    schedule.fire()
                runs = run_clients(iperfs, context.container(client), settings.seconds,
                                   options, context.raw_dir, pass_no,
                                   udp=bool(settings.udp_mbit), start_at=start_at)
            except BaseException:
                if schedule is not None:  # no kill or start after this: teardown follows
                    schedule.cancel()
                raise
            finally:
                load = loaded.result()
            elapsed = time.monotonic() - started
            roles_after, sides_after = role_and_side_cpu(stack, sides)
            cpu = CpuFigures.of(roles_before, roles_after, sides_before, sides_after, elapsed)
            tunnel_bytes = tunnel.delta()
            faulted = schedule.finish() if schedule is not None else None
        stream = Stream.of(runs, cpu, tunnel_bytes, MemoryFigures(idle, load), settings.seconds)
        if schedule is not None and faulted is not None:
            return replace(stream, faults=StreamFaults(faulted, runs[0], schedule.killed))
        return stream

    @staticmethod
    def schedule(context: ScenarioContext, pass_no: int) -> FaultSchedule | None:
        """The topology's faults as this pass's schedule (None: no faults)."""
        topology = context.topology
        if not topology.faults:
            return None
        return FaultSchedule(context, expand(topology, []),
                             f"{context.stack.rendered.project}-stream-{pass_no}",
                             context.raw_dir / f"iperf3-pass{pass_no}-")

    def _pings(self, context: ScenarioContext, client: str, target: str,
               pass_no: int) -> list[PingRun]:
        """Pings at each payload size in turn (the first size gives the rtt_* metrics)."""
        settings = context.topology.settings
        interval = settings.ping_interval_ms / 1000
        expected = settings.pings * interval
        sizes = settings.measured_ping_sizes()
        runs = []
        for size in sizes:
            suffix = f"-{size}b" if settings.ping_sizes else ""
            with waiting(f"pass {pass_no}: {settings.pings} pings of {size} bytes every "
                         f"{settings.ping_interval_ms:g} ms", expected):
                runs.append(run_ping(context.stack, context.container(client), target,
                                     settings.pings, interval, size,
                                     context.raw_dir / f"ping-pass{pass_no}{suffix}.txt",
                                     timeout_seconds=3 * expected + 10))
        return runs


ClientRun = ToolRun[IperfResult] | ToolRun[UdpResult]
First = TypeVar("First")
Second = TypeVar("Second")


def beside(first: Callable[[], First], second: Callable[[], Second]) -> tuple[First, Second]:
    """`first` in a thread while `second` runs here (each a probe: a container's start
    and end, most of its time the engine's); both results, `first`'s error raised."""
    with ThreadPoolExecutor(max_workers=1) as other:
        running = other.submit(first)
        done = second()
        return running.result(), done


# Several clients are started at one instant (the tools image's vnetbench-at), this
# long after their containers are asked for: started as the engine starts each
# container, two clients on this busy 2-core host began 0-3 s apart, so a 2 s test's
# senders did not overlap at all, or the second's one datagram opening its UDP test
# was lost in the first's flood (iperf3 then waits 30 s and fails "unable to read from
# stream socket").
CLIENTS_LEAD_S = 2.0
CLIENTS_LEAD_PER_CLIENT_S = 0.25
# The clients ran at once when they began within this share of the stream apart.
TOGETHER_SHARE = 0.1


@dataclass(frozen=True)
class ClientEnd:
    """One client's run, when it began (started at an instant) and when it ended."""

    run: ClientRun
    began: Began | None
    ended: float  # time.monotonic()


def run_clients(servers: list[IperfServer], client: str, seconds: float, options: list[str],
                raw_dir: Path, pass_no: int, udp: bool,
                start_at: float | None = None) -> list[ClientEnd]:
    """One client container per server; several start together at one instant (their
    begins and ends show how far apart they ran); `start_at`: that instant, given (a
    schedule of faults counts from it)."""
    if start_at is None and len(servers) > 1:
        start_at = time.time() + CLIENTS_LEAD_S + CLIENTS_LEAD_PER_CLIENT_S * len(servers)

    def one(index: int) -> ClientEnd:
        suffix = f"-client{index + 1}" if len(servers) > 1 else ""
        path = raw_dir / f"iperf3-pass{pass_no}{suffix}.json"
        raw, began = servers[index].client_output_at(client, seconds, options, path, start_at)
        run: ClientRun = (parsed(raw, parse_iperf_udp, IperfError) if udp
                          else parsed(raw, parse_iperf_json, IperfError))
        return ClientEnd(run, began, time.monotonic())

    if len(servers) == 1:
        return [one(0)]
    pool = ThreadPoolExecutor(max_workers=len(servers))
    try:
        return list(pool.map(one, range(len(servers))))
    finally:  # never wait here: on Ctrl-C the teardown ends the clients' probes
        pool.shutdown(wait=False, cancel_futures=True)


def apart(ends: list[ClientEnd], seconds: float) -> str:
    """Why several clients did not run at once, or '' when they did: one never began at
    the instant, or they began more than TOGETHER_SHARE of the stream apart."""
    if len(ends) < 2:
        return ""
    began = [end.began for end in ends]
    if any(b is None for b in began):
        return ""  # a client that never began failed: its error says why
    starts = [b.at for b in began if b is not None]
    spread = max(starts) - min(starts)
    if spread <= TOGETHER_SHARE * seconds:
        return ""
    latest = max(b.late_s for b in began if b is not None)
    return (f"the clients did not run at once: they began {spread:.2f} s apart in a "
            f"{seconds:g} s stream (one {latest:.2f} s after the shared instant: the "
            "engine started its container late)")


def offered_short(udp: UdpResult | None, settings: SharedSettings) -> str:
    """Why the UDP load offered was not the declared one, or '' when it was."""
    if udp is None or not settings.udp_mbit:
        return ""
    return generator_short(udp, settings.udp_mbit * settings.clients)


def role_and_side_cpu(stack: Stack, sides: dict[str, str]
                      ) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """CPU seconds so far per role (Stack.cpu_by_role), and of the sending and the
    receiving agent's containers, from one listing (Stack.cpu_readings)."""
    roles, used = stack.cpu_readings(set(sides.values()))
    return roles, {side: used[name] for side, name in sides.items() if name in used}


@dataclass(frozen=True)
class CpuFigures:
    """CPU during the stream: per role and per side, and the metrics with no figure
    (a container restarted or ended meanwhile), each with why."""

    roles: dict[str, float]  # percent of a core per role
    sides: dict[str, float]  # percent of a core of the sending and receiving agent
    unmeasured: dict[str, str]  # metric -> why it has no figure

    @classmethod
    def of(cls, roles_before: dict[str, dict[str, float]],
           roles_after: dict[str, dict[str, float]], sides_before: dict[str, float],
           sides_after: dict[str, float], seconds: float) -> CpuFigures:
        roles, unmeasured_roles = role_percent(roles_before, roles_after, seconds)
        unmeasured = {DECLARATION.series("cpu_percent", role=role): why
                      for role, why in unmeasured_roles.items() if role in CPU_ROLES}
        unmeasured |= {f"cpu_{side}_agent_percent": "its container restarted (counter "
                       "went backwards)" for side in went_backwards(sides_before, sides_after)}
        unmeasured |= {f"cpu_{side}_agent_percent": "its container ended"
                       for side in set(sides_before) - set(sides_after)}
        return cls({r: v for r, v in roles.items() if r in CPU_ROLES},
                   cpu_percent(sides_before, sides_after, seconds), unmeasured)


# memory under load is read this share of the stream's seconds after its clients are
# started: past their start-up, before the stream ends and its buffers are let go
LOAD_READ_SHARE = 0.8


class MemoryUnderLoad:
    """Each role's memory, read once in a thread `delay` seconds from now; none when
    the stream ended before (result() called earlier) or the engine failed."""

    def __init__(self, stack: Stack, delay: float) -> None:
        self.stop = threading.Event()
        self.found: dict[str, RoleMemory] = {}
        self.thread = threading.Thread(target=self.read, args=(stack, delay), daemon=True)
        self.thread.start()

    def read(self, stack: Stack, delay: float) -> None:
        # an engine that failed gives no figure, as a stream that ended early does
        with suppress(EngineError):
            if not self.stop.wait(delay):
                self.found = by_role(stack.memory_by_role())

    def result(self) -> dict[str, RoleMemory]:
        self.stop.set()
        self.thread.join()
        return self.found


@dataclass(frozen=True)
class Stream:
    tcp: IperfResult | None
    udp: UdpResult | None
    error: str | None  # the first client's error, if any client failed
    cpu: dict[str, float]  # percent of a core per role during the stream
    sides: dict[str, float]  # percent of a core of the sending and receiving agent
    tunnel_bytes: int | None  # received on the server's tunnel device
    end_spread_s: float | None  # between the first and the last client's end
    unmeasured: dict[str, str]  # CPU metrics with no figure, with why
    memory: MemoryFigures
    start_spread_s: float | None = None  # between the first and the last client's begin
    apart: str = ""  # why the clients did not run at once ('' when they did)
    faults: StreamFaults | None = None  # the schedule of faults during it, as stamped

    @classmethod
    def of(cls, runs: list[ClientEnd], cpu: CpuFigures, tunnel_bytes: int | None,
           memory: MemoryFigures | None = None, seconds: float = 0.0) -> Stream:
        """The clients' runs as one stream: all of them, or none with the error."""
        errors = [end.run.error for end in runs if end.run.result is None]
        results = [end.run.result for end in runs if end.run.result is not None]
        error = (f"{len(errors)} of {len(runs)} clients failed: {errors[0]}"
                 if errors and len(runs) > 1 else errors[0] if errors else None)
        tcp = [r for r in results if isinstance(r, IperfResult)]
        udp = [r for r in results if isinstance(r, UdpResult)]
        ends = [end.ended for end in runs]
        starts = [end.began.at for end in runs if end.began is not None]
        return cls(combined_tcp(tcp) if tcp and not errors else None,
                   combined_udp(udp) if udp and not errors else None, error, cpu.roles,
                   cpu.sides, tunnel_bytes, max(ends) - min(ends) if len(ends) > 1 else None,
                   cpu.unmeasured, memory or MemoryFigures({}, {}),
                   max(starts) - min(starts) if len(starts) > 1 else None,
                   apart(runs, seconds))


@dataclass(frozen=True)
class StreamFaults:
    """The schedule of faults during the stream: its windows, the client's run, and the
    services it killed (their deaths are the measurement)."""

    outcome: ScheduleOutcome
    client: ClientEnd
    killed: set[str]


def with_stream_faults(result: PassResult, faults: StreamFaults) -> None:
    """The schedule's rows, timeline and words added to the pass; a fault not stamped as
    planned makes it partial; the services it killed are not its failure."""
    client = faults.client
    began = client.began.at if client.began is not None else None
    if began is None:
        partial(result, ["the stream under faults has no start instant: its intervals "
                         "cannot be placed on the faults' clock"])
        return
    metrics, series, words = stream_fault_result(
        client.run.raw, began, faults.outcome, client.run.result is not None)
    result.metrics |= metrics
    result.series += series
    result.notes += words + faults.outcome.notes
    result.fault_killed |= faults.killed
    partial(result, faults.outcome.problems)


def partial(result: PassResult, problems: list[str]) -> None:
    """An ok pass with these problems is partial; a worse one keeps its state."""
    if problems and result.outcome.state is State.OK:
        result.outcome.state = State.PARTIAL
    for problem in problems:
        result.outcome.add(Kind.PARTIAL, problem)


def stream_metrics(stream: Stream) -> Metrics:
    """TCP's or UDP's metrics, CPU per role and per side, memory per role, tunnel bytes."""
    metrics = udp_metrics(stream.udp) if stream.udp else tcp_metrics(stream.tcp)
    cpu: Values = {DECLARATION.series("cpu_percent", role=role): value
                   for role, value in stream.cpu.items() if role in CPU_ROLES}
    cpu |= {f"cpu_{side}_agent_percent": value for side, value in stream.sides.items()}
    cpu |= dict.fromkeys(stream.unmeasured)
    metrics |= DECLARATION.emitted(cpu) | stream.memory.metrics()
    counted = {"tunnel_rx_bytes": stream.tunnel_bytes,
               "clients_end_spread_s": stream.end_spread_s,
               "clients_start_spread_s": stream.start_spread_s}
    return metrics | DECLARATION.emitted({k: v for k, v in counted.items() if v is not None})


def udp_metrics(udp: UdpResult) -> Metrics:
    return DECLARATION.emitted({
        "udp_mbit": udp.receiver_mbit,
        "udp_loss": 100 * udp.packets_lost / max(udp.packets_sent, 1),
        "udp_sent_mbit": udp.sender_mbit,
        "udp_datagrams_sent": udp.packets_sent})


def sized_ping_metrics(topology: Topology, runs: list[PingRun]) -> Metrics:
    """Per payload size, when the settings name sizes (ping_sizes)."""
    metrics: Metrics = {}
    for size, run in zip(topology.settings.ping_sizes, runs, strict=False):
        for name, (value, unit) in ping_metrics(run.result).items():
            if name.startswith(("rtt_", "ping_loss")):
                metrics[DECLARATION.series(f"sized_{name}", size=size)] = (value, unit)
    return metrics


def interface_mtus(context: ScenarioContext, agent: str) -> Metrics:
    """The MTUs the kernel reports in the agent's namespace: its tunnel device's and
    its underlay link's (the largest of its eth* devices), as applied."""
    out = run_probe(context.stack, context.container(agent),
                    ["sh", "-c", "for i in /sys/class/net/*; do echo ${i##*/} "
                     "$(cat $i/mtu); done"], 10)
    mtus = dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
    tunnel = context.overlay.tunnel_interface
    links = [int(v) for k, v in mtus.items() if k.startswith("eth") and v.isdigit()]
    values: Values = {"link_mtu": max(links) if links else None}
    if tunnel:
        value = mtus.get(tunnel, "")
        values["tunnel_mtu"] = int(value) if value.isdigit() else None
    return DECLARATION.emitted(values)


# iperf3's round trips besides its stream: connect, parameters, the stream's own
# connect, results (topology.py MAX_HOLD_MS)
EXCHANGE_ROUND_TRIPS = 5
# above this loss on a segment, the end's exchange may lose a packet several times
# over (each retransmission waits twice the last): the whole grace is kept
LOSSY_PERCENT = 5.0


def stream_grace_s(topology: Topology) -> float:
    """The clients' bound beyond their stream (measure/iperf.py END_MARGIN_S): their
    connect, five round trips of the slowest profile on every segment, a rate's shaper
    queue to drain (what is queued at the stream's end holds the report back), and the
    margin; at most CLIENT_GRACE_SECONDS, which the link profiles' bounds are made for.
    Kept whole where the topology cannot say the path: faults change it during the
    stream, another host's path is not in it, a lossy one may retransmit at length,
    and a UDP client waits 30 s for the answer to its opening datagram (iperf.py
    UDP_OPEN_LOST): cut short, it could not say why itself."""
    profiles = [topology.links.site, topology.links.backbone,
                *(agent.link for agent in topology.agents if agent.link is not None)]
    round_trip_s = declared_round_trip_s(topology)
    if (round_trip_s is None or topology.settings.udp_mbit
            or any(profile.loss > LOSSY_PERCENT for profile in profiles)):
        return CLIENT_GRACE_SECONDS
    drain_s = max((TBF_LATENCY_MS / 1000 + 8 * burst_bytes(profile.rate) / profile.rate
                   for profile in profiles if profile.rate), default=0.0)
    needed = (CONNECT_TIMEOUT_MS / 1000 + EXCHANGE_ROUND_TRIPS * round_trip_s
              + drain_s + END_MARGIN_S)
    return min(float(CLIENT_GRACE_SECONDS), needed)


def stream_options(topology: Topology) -> list[str]:
    """iperf3 options the reference benchmarks vary: streams, reverse, UDP at a rate."""
    s = topology.settings
    options = ["-P", str(s.streams)] if s.streams > 1 else []
    options += ["-R"] if s.reverse else []
    options += udp_options(s.udp_mbit, s.udp_length) if s.udp_mbit else []
    return options


class TunnelCounter:
    """Bytes received on the server's tunnel device: proof the stream used the overlay."""

    def __init__(self, context: ScenarioContext, agent: str) -> None:
        self.context, self.agent = context, agent
        self.interface = context.overlay.tunnel_interface
        self.before = self.read()

    def read(self) -> int | None:
        if not self.interface:
            return None
        out = run_probe(self.context.stack, self.context.container(self.agent),
                        ["cat", f"/sys/class/net/{self.interface}/statistics/rx_bytes"], 10)
        return int(out.stdout) if out.stdout.strip().isdigit() else None

    def delta(self) -> int | None:
        after = self.read()
        return after - self.before if after is not None and self.before is not None else None


def tcp_metrics(tcp: IperfResult | None) -> Metrics:
    return DECLARATION.emitted({
        "tcp_mbit": tcp.receiver_mbit if tcp else None,
        "tcp_retransmits": tcp.retransmits if tcp else None,
        "tcp_bytes": tcp.bytes_received if tcp else None,
        "tcp_sender_cpu": tcp.sender_cpu_percent if tcp else None,
    })


def ping_metrics(ping: PingResult | None) -> Metrics:
    return DECLARATION.emitted({
        "rtt_min_ms": ping.rtt_min_ms if ping else None,
        "rtt_mean_ms": ping.rtt_mean_ms if ping else None,
        "rtt_max_ms": ping.rtt_max_ms if ping else None,
        "rtt_mdev_ms": ping.rtt_mdev_ms if ping else None,
        "ping_sent": ping.transmitted if ping else None,
        "ping_received": ping.received if ping else None,
        "ping_loss": ping.loss_percent if ping else None,
    })
