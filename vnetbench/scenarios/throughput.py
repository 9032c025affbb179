"""throughput: one TCP stream between two agents on different switches, then pings.

As the seed: BENCH_SECONDS of TCP with iperf3, then 200 pings at 10 ms. A
path that delivers nothing is reported as "path dead", within bounded time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from vnetbench.errors import UserError
from vnetbench.measure.cpu import cpu_by_role, cpu_percent
from vnetbench.measure.iperf import IperfResult, iperf_server, udp_options
from vnetbench.measure.ping import PingResult, PingRun, run_ping
from vnetbench.measure.probe import run_probe, save_raw
from vnetbench.metrics import Better, Metric
from vnetbench.outcome import State
from vnetbench.scenarios.base import Metrics, PassResult, Scenario, ScenarioContext
from vnetbench.topology import AgentSpec, Topology
from vnetbench.ui import waiting


def pick_pair(topology: Topology,
              placement: dict[str, str] | None = None) -> tuple[AgentSpec, AgentSpec]:
    """Client and server: the topology's `measure` pair (--pair) when given; else the
    first agents of the first and last switch that have one, by the actual placement
    when given (an overlay may choose the switch itself)."""
    if topology.measure is not None:
        return topology.agent(topology.measure.source), topology.agent(topology.measure.target)
    placement = placement or {a.name: a.switch for a in topology.agents}
    agents = [a.model_copy(update={"switch": placement[a.name]})
              for a in topology.agents if a.name in placement]
    occupied = [s for s in topology.switches if any(a.switch == s for a in agents)]
    if len(occupied) >= 2:
        first = next(a for a in agents if a.switch == occupied[0])
        last = next(a for a in agents if a.switch == occupied[-1])
        return first, last
    if len(agents) >= 2:
        return agents[0], agents[1]
    raise UserError(
        f"The throughput scenario needs two agents, and topology '{topology.name}' has "
        f"{len(topology.agents)}. Set 'agents: 2' (or more) in the topology."
    )


class Throughput(Scenario):
    name = "throughput"
    description = "TCP rate and ping RTT between two agents on different switches"
    metrics = (
        Metric("tcp_mbit", "Mbit/s", Better.HIGHER, "TCP between two agents", plot="throughput"),
        Metric("rtt_mean_ms", "ms", Better.LOWER, "Mean ping round trip", plot="rtt"),
        Metric("ping_loss", "%", Better.LOWER, "Ping loss"),
        Metric("tcp_retransmits", "count", Better.LOWER, "TCP retransmits"),
        Metric("cpu_{role}_percent", "% of a core", Better.LOWER,
               "CPU of the {role} containers during the stream (% of a core)"),
        Metric("tcp_bytes", "bytes"),
        Metric("tcp_sender_cpu", "%", Better.LOWER),
        Metric("rtt_min_ms", "ms", Better.LOWER),
        Metric("rtt_max_ms", "ms", Better.LOWER),
        Metric("rtt_mdev_ms", "ms", Better.LOWER),
        Metric("ping_sent", "count"),
        Metric("ping_received", "count", Better.HIGHER),
        Metric("tunnel_rx_bytes", "bytes"),
    )

    def check(self, topology: Topology) -> None:
        pick_pair(topology)

    def settings(self, topology: Topology) -> dict[str, object]:
        s = topology.settings
        return {"seconds": s.seconds, "pings": s.pings, "ping_interval_ms": s.ping_interval_ms,
                "streams": s.streams, "reverse": s.reverse, "udp_mbit": s.udp_mbit or 0,
                "ping_size": s.ping_size, "tls": s.tls, "limits": s.limits,
                "encryption": s.encryption}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        client, server = pick_pair(context.topology, context.placement())
        target = context.overlay.target_address(context.topology, context.plan, server.name)
        stream = self._tcp(context, client.name, server.name, target, pass_no)
        tcp, tcp_error = stream.result, stream.error
        pings = self._ping(context, client.name, target, pass_no)
        ping, ping_error = pings.result, pings.error
        metrics = tcp_metrics(tcp) | ping_metrics(ping) | {
            f"cpu_{role}_percent": (value, "% of a core") for role, value in stream.cpu.items()
            if role in ("agent", "switch", "conductor")}
        if context.overlay.tunnel_interface:
            metrics["tunnel_rx_bytes"] = (stream.tunnel_bytes, "bytes")
        summary: dict[str, float | int | str | None] = {
            "tcp_mbit": tcp.receiver_mbit if tcp else None,
            "retransmits": tcp.retransmits if tcp else None,
            "rtt_ms": ping.rtt_mean_ms if ping else None,
            "pings": f"{ping.received}/{ping.transmitted}" if ping else None,
        }
        state, status = path_status(tcp, tcp_error, ping, ping_error)
        notes = []
        if state is State.DEAD:
            logs = context.last_log_lines()
            save_raw(context.raw_dir / f"path-dead-pass{pass_no}.txt",
                     "\n".join(f"{node}: {line}" for node, lines in logs.items() for line in lines))
            wanted = {client.name, server.name, client.switch, server.switch}
            status += "; last log lines: " + " | ".join(
                f"{node}: {lines[-1]}" for node, lines in logs.items() if node in wanted and lines)
            notes.append(f"[yellow]{status}[/]")
        return PassResult(metrics, summary, status, notes, state)

    def _tcp(
        self, context: ScenarioContext, client: str, server: str, target: str, pass_no: int
    ) -> Stream:
        stack, seconds = context.stack, context.topology.settings.seconds
        options = stream_options(context.topology)
        tunnel = TunnelCounter(context, server)
        kind = " ".join(options) or "TCP"
        with iperf_server(stack.run_id, context.container(server), target,
                          f"{stack.rendered.project}-iperf-server-{pass_no}") as iperf, \
                waiting(f"pass {pass_no}: {kind} {client} → {server} ({target})", seconds):
            cpu_before, started = cpu_by_role(stack.run_id), time.monotonic()
            run = iperf.run(context.container(client), seconds, options,
                            context.raw_dir / f"iperf3-pass{pass_no}.json")
            cpu = cpu_percent(cpu_before, cpu_by_role(stack.run_id), time.monotonic() - started)
            tunnel_bytes = tunnel.delta()
        return Stream(run.result, run.error, cpu, tunnel_bytes)

    def _ping(self, context: ScenarioContext, client: str, target: str,
              pass_no: int) -> PingRun:
        settings = context.topology.settings
        interval = settings.ping_interval_ms / 1000
        expected = settings.pings * interval
        with waiting(f"pass {pass_no}: {settings.pings} pings every "
                     f"{settings.ping_interval_ms:g} ms", expected):
            return run_ping(context.stack.run_id, context.container(client), target,
                            settings.pings, interval, settings.ping_size,
                            context.raw_dir / f"ping-pass{pass_no}.txt",
                            timeout_seconds=3 * expected + 10)


@dataclass(frozen=True)
class Stream:
    result: IperfResult | None
    error: str | None
    cpu: dict[str, float]  # percent of a core per role during the stream
    tunnel_bytes: int | None  # received on the server's tunnel device


def stream_options(topology: Topology) -> list[str]:
    """iperf3 options the reference benchmarks vary: streams, reverse, UDP at a rate."""
    s = topology.settings
    options = ["-P", str(s.streams)] if s.streams > 1 else []
    options += ["-R"] if s.reverse else []
    options += udp_options(s.udp_mbit) if s.udp_mbit else []
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
        out = run_probe(self.context.stack.run_id, self.context.container(self.agent),
                        ["cat", f"/sys/class/net/{self.interface}/statistics/rx_bytes"], 10)
        return int(out.stdout) if out.stdout.strip().isdigit() else None

    def delta(self) -> int | None:
        after = self.read()
        return after - self.before if after is not None and self.before is not None else None


def tcp_metrics(tcp: IperfResult | None) -> Metrics:
    return {
        "tcp_mbit": (tcp.receiver_mbit if tcp else None, "Mbit/s"),
        "tcp_retransmits": (tcp.retransmits if tcp else None, "count"),
        "tcp_bytes": (tcp.bytes_received if tcp else None, "bytes"),
        "tcp_sender_cpu": (tcp.sender_cpu_percent if tcp else None, "%"),
    }


def ping_metrics(ping: PingResult | None) -> Metrics:
    return {
        "rtt_min_ms": (ping.rtt_min_ms if ping else None, "ms"),
        "rtt_mean_ms": (ping.rtt_mean_ms if ping else None, "ms"),
        "rtt_max_ms": (ping.rtt_max_ms if ping else None, "ms"),
        "rtt_mdev_ms": (ping.rtt_mdev_ms if ping else None, "ms"),
        "ping_sent": (ping.transmitted if ping else None, "count"),
        "ping_received": (ping.received if ping else None, "count"),
        "ping_loss": (ping.loss_percent if ping else None, "%"),
    }


def path_status(
    tcp: IperfResult | None, tcp_error: str | None, ping: PingResult | None,
    ping_error: str | None,
) -> tuple[State, str]:
    """OK, DEAD or FAILED, with a plain sentence ("path dead: 0 of 200 pings ...")."""
    answered = ping.received if ping else 0
    sent = ping.transmitted if ping else 0
    if tcp is None and answered == 0:
        return State.DEAD, (f"path dead: {answered} of {sent} pings answered, 0 bytes "
                            f"delivered ({tcp_error or ping_error})")
    problems = []
    if tcp is None:
        problems.append(f"TCP failed: {tcp_error}")
    if ping is None:
        problems.append(f"ping failed: {ping_error}")
    return (State.FAILED, "; ".join(problems)) if problems else (State.OK, "ok")
