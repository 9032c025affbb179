"""What the scenarios of the measured pair share (throughput, transactions,
loaded_latency; transfer's pair): the pair picked, the limits it is measured under,
its path judged alive, stalled or dead, and a dead path's last log lines."""

from __future__ import annotations

from vnetbench.core.outcome import Kind, Outcome, Problem, State, single
from vnetbench.errors import UserError
from vnetbench.measure.iperf import IperfResult, UdpResult
from vnetbench.measure.ping import PingResult
from vnetbench.measure.probe import save_raw
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import AgentSpec, Topology
from vnetbench.scenarios.base import Scenario, ScenarioContext

SEGMENTS_EACH_WAY = 3  # site, backbone, site: the worst profile taken for each


def declared_round_trip_s(topology: Topology) -> float | None:
    """A round trip of the pair's path as its links declare it (the slowest profile's
    delay and jitter on each of the three segments each way); None where the topology
    cannot say the path: faults change it, another host's path is not in it."""
    if topology.faults or topology.engine.name != "compose":
        return None
    profiles = [topology.links.site, topology.links.backbone,
                *(agent.link for agent in topology.agents if agent.link is not None)]
    return 2 * SEGMENTS_EACH_WAY * max(p.delay + p.jitter for p in profiles) / 1000


def pick_pair(topology: Topology, placement: dict[str, str] | None = None,
              scenario: str = "throughput") -> tuple[AgentSpec, AgentSpec]:
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
        f"The {scenario} scenario needs two agents, and topology '{topology.name}' has "
        f"{len(topology.agents)}. Set 'agents: 2' (or more) in the topology."
    )


class PairScenario(Scenario):
    """A scenario of the measured pair (pick_pair): it needs the limits the settings ask
    for, and a topology that has the pair."""

    @classmethod
    def needs_for(cls, topology: Topology | None = None) -> frozenset[Capability]:
        return super().needs_for(topology) | limits_asked(topology)

    def check(self, topology: Topology) -> None:
        pick_pair(topology, scenario=self.name)


def limits_asked(topology: Topology | None) -> frozenset[Capability]:
    """Limits asked for are what the pair is measured under."""
    return frozenset({Capability.LIMITS} if topology and topology.settings.limits else set())


def with_last_log_lines(context: ScenarioContext, outcome: Outcome, pass_no: int,
                        client: AgentSpec, server: AgentSpec) -> None:
    """A dead path's outcome with the pair's and their switches' last log lines (every
    agent's and switch's kept in the raw directory)."""
    logs = context.last_log_lines()
    save_raw(context.raw_dir / f"path-dead-pass{pass_no}.txt",
             "\n".join(f"{node}: {line}" for node, lines in logs.items() for line in lines))
    wanted = {client.name, server.name, client.switch, server.switch}
    outcome.add(Kind.LOGS, "last log lines: " + " | ".join(
        f"{node}: {lines[-1]}" for node, lines in logs.items() if node in wanted and lines))


STALL_FLOOR_MBIT = 0.1  # a TCP stream below this, with pings answered, has stalled


def stall_floor_mbit(topology: Topology) -> float:
    """The rate below which a TCP stream counts as stalled: 0.1 Mbit/s, or a tenth of
    the slowest declared link rate when that is lower."""
    rates = [p.rate for p in (topology.links.site, topology.links.backbone,
                              *(a.link for a in topology.agents if a.link)) if p and p.rate]
    return min([STALL_FLOOR_MBIT, *(rate / 1e6 / 10 for rate in rates)])


def path_status(
    tcp: IperfResult | UdpResult | None, tcp_error: str | None, ping: PingResult | None,
    ping_error: str | None, floor_mbit: float = STALL_FLOOR_MBIT,
) -> Outcome:
    """OK, DEAD or FAILED, with plain sentences ("path dead: 0 of 200 pings ...").
    A stream that moves (almost) nothing is never OK: with pings answered it is FAILED
    (small packets pass and full-size ones are lost, e.g. a tunnel MTU its path cannot
    carry), without them the path is DEAD. So is a UDP stream of which nothing
    arrived, and pings of which none was answered while the stream delivered (no
    round trip was measured): a figure of 0 marked ok would hide each."""
    answered = ping.received if ping else 0
    sent = ping.transmitted if ping else 0
    moved = stream_shortfall(tcp, floor_mbit)
    if (tcp is None or moved) and answered == 0:
        error = tcp_error or ping_error
        return single(State.DEAD, Kind.DEAD, (
            f"path dead: {answered} of {sent} pings answered, "
            f"{moved or '0 bytes delivered'}" + (f" ({error})" if error else "")))
    problems = []
    if tcp is None:
        problems.append(f"the stream failed: {tcp_error}")
    if ping is None:
        problems.append(f"ping failed: {ping_error}")
    elif answered == 0:
        problems.append(f"no ping answered (0 of {sent}) while the stream delivered: no "
                        "round trip was measured (ICMP does not cross the path?)")
    if moved and isinstance(tcp, IperfResult):
        problems.append(f"the TCP stream stalled ({tcp.receiver_mbit:.3f} Mbit/s) while "
                        f"{answered} of {sent} pings were answered: full-size packets are "
                        "lost on the path (a tunnel MTU larger than its links carry?)")
    elif moved:
        problems.append(f"{moved} while {answered} of {sent} pings were answered")
    return Outcome(State.FAILED, [Problem(Kind.FAILED, p) for p in problems]) if problems \
        else Outcome()


def stream_shortfall(stream: IperfResult | UdpResult | None, floor_mbit: float) -> str:
    """Why a stream that ran delivered nothing to measure, or '' when it did: TCP below
    the stall floor; UDP of which nothing was sent or nothing arrived."""
    if isinstance(stream, IperfResult) and stream.receiver_mbit < floor_mbit:
        return f"the TCP stream moved {stream.receiver_mbit:.3f} Mbit/s"
    if isinstance(stream, UdpResult) and stream.packets_sent == 0:
        return "the UDP client sent no datagram"
    if isinstance(stream, UdpResult) and (stream.packets_received <= 0
                                          or stream.receiver_mbit <= 0):
        return f"none of the UDP stream's {stream.packets_sent} datagrams arrived"
    return ""
