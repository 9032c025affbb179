"""flood: does a machine that floods its switch hurt the others?

As the seed: per-agent limits 5000 packets/s and 50 Mbit/s; one agent sends
UDP at BENCH_FLOOD_MBIT for 5 s to an agent on the same switch while an agent
on the other switch pings the target 15 times. Drops are measured from
outside (iperf3's receiver count), valid for any overlay; the limiter's own
count is added when the overlay logs it, beside a token bucket's prediction.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from vnetbench.core.outcome import Kind, Outcome, Problem, State, single
from vnetbench.declared.declaration import Values
from vnetbench.declared.flood import DECLARATION, FloodSettings
from vnetbench.errors import UserError
from vnetbench.measure.iperf import UdpResult, UdpRun, generator_short, iperf_server
from vnetbench.measure.ping import PingResult, PingRun, run_ping
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import AgentLimits, Overlay
from vnetbench.scenarios.base import (
    Metrics,
    PassResult,
    Scenario,
    ScenarioContext,
    build_room,
)
from vnetbench.terminal.ui import waiting

FLOOD_SECONDS = 5.0
PINGS = 15
PAYLOAD_BYTES = 1400
IP_UDP_HEADER_BYTES = 28  # a limiter counts IP packets: payload + UDP (8) + IPv4 (20)
SEED_LIMIT_PPS = 5000
SEED_LIMIT_MBIT = 50.0


@dataclass(frozen=True)
class Prediction:
    offered_pps: float
    allowed_pps: float
    dropped: float


def token_bucket_drops(packets_sent: int, seconds: float, payload_bytes: int,
                       limits: AgentLimits) -> Prediction:
    """Drops a token bucket with `burst_seconds` of burst predicts for a steady flood.

    The packet and byte buckets both apply; the tighter one binds. Seed check:
    300 Mbit/s of 1400-byte payloads is 26786 packets/s; 50 Mbit/s of 1428-byte
    IP packets allows 4377/s; over 5 s with 1 s of burst about 107670 drop.
    """
    wire_bits = (payload_bytes + IP_UDP_HEADER_BYTES) * 8
    allowed_pps = min(limits.packets_per_second, limits.bits_per_second / wire_bits)
    allowed = allowed_pps * (seconds + limits.burst_seconds)
    return Prediction(offered_pps=packets_sent / seconds, allowed_pps=allowed_pps,
                      dropped=max(0.0, packets_sent - allowed))


@dataclass(frozen=True)
class Roles:
    sender: str
    target: str
    pinger: str


def pick_roles(topology: Topology, placement: dict[str, str]) -> Roles:
    """Sender and target on one switch, the pinger on another."""
    for switch in topology.switches:
        local = [a.name for a in topology.agents if placement.get(a.name) == switch]
        remote = [a.name for a in topology.agents
                  if placement.get(a.name) not in (switch, None)]
        if len(local) >= 2 and remote:
            return Roles(sender=local[1], target=local[0], pinger=remote[0])
    raise UserError(
        f"The flood scenario needs two agents on one switch and one on another; topology "
        f"'{topology.name}' has no such placement. Give it two switches and four agents."
    )


class Flood(Scenario):
    declaration = DECLARATION

    def stack_topology(self, topology: Topology, overlay: Overlay) -> Topology:
        """At least two agents per switch, and the seed's limits unless set otherwise."""
        agents = max(len(topology.agents), 2 * len(topology.switches))
        settings = topology.settings.model_copy(update={
            "limits": True,
            "limit_pps": topology.settings.limit_pps or SEED_LIMIT_PPS,
            "limit_mbit": topology.settings.limit_mbit or SEED_LIMIT_MBIT})
        changes: dict[str, object] = {"settings": settings.model_dump()}
        if agents > len(topology.agents):
            changes["agents"] = agents
        return build_room(topology, self.name, f"{agents} agents with the seed's limits",
                          "Give fewer agents or more switches.", **changes)

    def check(self, topology: Topology) -> None:
        if len(topology.switches) < 2:
            raise UserError(f"The flood scenario needs two switches; topology "
                            f"'{topology.name}' has {len(topology.switches)}.")
        super().check(topology)

    def settings(self, topology: Topology) -> dict[str, object]:
        return {"flood_mbit": topology.settings.of(FloodSettings).mbit,
                "seconds": FLOOD_SECONDS, "pings": PINGS}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        placement = context.placement()
        try:
            roles = pick_roles(context.topology, placement)
        except UserError:  # the topology has the roles (checked): agents did not join
            return unplaced(context, placement)
        target = context.overlay.target_address(context.topology, context.plan, roles.target)
        flood_run, ping_run = self._flood_and_ping(context, roles, target, pass_no)
        flood, ping = flood_run.result, ping_run.result
        limits = context.overlay.agent_limits(context.topology)
        limiter = limiter_count(context)
        metrics = flood_metrics(flood, ping, limits, limiter)
        summary: dict[str, float | int | str | None] = {
            "pings": f"{ping.received}/{ping.transmitted}" if ping else None,
            "sent": flood.packets_sent if flood else None,
            "received": flood.packets_received if flood else None,
            "limiter_drops": limiter,
            "predicted_drops": round(metrics["predicted_drops"][0] or 0) if limits else None,
            "limits": (f"{limits.packets_per_second:.0f}pps/{limits.bits_per_second / 1e6:g}Mbit"
                       if limits else "none on this overlay or build"),
        }
        mbit = context.topology.settings.of(FloodSettings).mbit
        return PassResult(metrics, summary, flood_status(flood_run, ping_run, mbit))

    def _flood_and_ping(self, context: ScenarioContext, roles: Roles, target: str,
                        pass_no: int) -> tuple[UdpRun, PingRun]:
        """The flood and the pings at once, both started once the server is up."""
        stack, raw = context.stack, context.raw_dir
        mbit = context.topology.settings.of(FloodSettings).mbit
        with iperf_server(stack, context.container(roles.target), target,
                          f"{stack.rendered.project}-flood-server-{pass_no}") as server, \
                waiting(f"pass {pass_no}: {roles.sender} floods {roles.target} at {mbit:g} "
                        f"Mbit/s; {roles.pinger} pings it", FLOOD_SECONDS + 1), \
                ThreadPoolExecutor(2) as pool:
            flood = pool.submit(server.run_udp, context.container(roles.sender), FLOOD_SECONDS,
                                mbit, PAYLOAD_BYTES, raw / f"flood-pass{pass_no}.json")
            ping = pool.submit(run_ping, stack, context.container(roles.pinger), target,
                               PINGS, FLOOD_SECONDS / PINGS, None,
                               raw / f"flood-ping-pass{pass_no}.txt", FLOOD_SECONDS + 15)
            return flood.result(), ping.result()


def unplaced(context: ScenarioContext, placement: dict[str, str]) -> PassResult:
    """A pass with no flood to run: the topology places two agents on one switch and
    one on another, but the agents that joined do not (an overlay that loses joins,
    such as vNet's public snapshot under load); said, with who joined where."""
    joined = ", ".join(f"{agent} on {switch}" for agent, switch in sorted(placement.items()))
    status = (f"nothing to flood: {len(placement)} of {len(context.topology.agents)} agents "
              f"joined ({joined or 'none'}), and the flood needs two on one switch and one "
              "on another")
    metrics = flood_metrics(None, None, context.overlay.agent_limits(context.topology), None)
    return PassResult(metrics, {"pings": None, "sent": None},
                      single(State.FAILED, Kind.FAILED, status))


def flood_status(flood_run: UdpRun, ping_run: PingRun, declared_mbit: float) -> Outcome:
    """OK; FAILED when a tool failed or the flood measured no drops (flood_shortfall);
    DEAD when, besides, no ping was answered; PARTIAL when the flood's generator did
    not offer the declared rate (its drops are those of a smaller load)."""
    flood, ping = flood_run.result, ping_run.result
    errors = [f"flood failed: {flood_run.error}"] if flood_run.error is not None else []
    errors += [f"ping failed: {ping_run.error}"] if ping_run.error is not None else []
    errors += [shortfall] if (shortfall := flood_shortfall(flood)) else []
    if (flood is None or shortfall) and (ping is None or ping.received == 0):
        return single(State.DEAD, Kind.DEAD, (
            f"path dead: 0 of {ping.transmitted if ping else PINGS} pings answered, "
            f"0 flood packets delivered ({'; '.join(errors)})"))
    if errors:
        return Outcome(State.FAILED, [Problem(Kind.FAILED, e) for e in errors])
    short = generator_short(flood, declared_mbit) if flood is not None else ""
    return single(State.PARTIAL, Kind.PARTIAL, short) if short else Outcome()


def flood_shortfall(flood: UdpResult | None) -> str:
    """Why a flood that ran measured no drops, or '': it sent nothing, or nothing of it
    reached the target, so its drops are the path's, not a limiter's (a token bucket
    lets its rate through: 4377 packets/s at the seed's limits)."""
    if flood is None:
        return ""
    if flood.packets_sent == 0:
        return "the flood sent no datagram"
    if flood.packets_received <= 0:
        return (f"none of the flood's {flood.packets_sent} datagrams reached the target: "
                "the path dropped them, not a limit")
    return ""


def limiter_count(context: ScenarioContext) -> int | None:
    """The limiter's own drop count, summed over switches, when the overlay logs it."""
    event = context.overlay.limiter_event()
    if event is None:
        return None
    frame = context.events(*event)
    if frame.empty:
        return None
    return sum(int(fields.get("packets") or 0) for fields in frame["fields"])


def flood_metrics(flood: UdpResult | None, ping: PingResult | None,
                  limits: AgentLimits | None, limiter: int | None) -> Metrics:
    values: Values = {
        "pings_answered": ping.received if ping else None,
        "pings_sent": ping.transmitted if ping else None,
        "ping_rtt_mean_ms": ping.rtt_mean_ms if ping else None,
        "flood_packets_sent": flood.packets_sent if flood else None,
        "flood_packets_received": flood.packets_received if flood else None,
        "flood_packets_dropped": flood.packets_lost if flood else None,
        "flood_received_mbit": flood.receiver_mbit if flood else None,
        "limiter_drops": limiter,
    }
    if limits and flood:
        prediction = token_bucket_drops(flood.packets_sent, flood.seconds,
                                        flood.payload_bytes or PAYLOAD_BYTES, limits)
        measured = limiter if limiter is not None else flood.packets_lost
        difference = ((measured - prediction.dropped) / prediction.dropped * 100
                      if prediction.dropped else None)
        values |= {"predicted_drops": prediction.dropped,
                   "prediction_difference": difference,
                   "limit_allowed_pps": prediction.allowed_pps}
    else:
        values |= {"predicted_drops": None, "prediction_difference": None}
    return DECLARATION.emitted(values)
