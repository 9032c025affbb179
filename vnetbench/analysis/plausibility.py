"""Figures the testbed's mechanism cannot produce, each rule with its bound and why.

A pass's figures are checked here once it has measured (runs/passes.py), before
its rows are written. A figure beyond its bound does not measure what its name
says, so it is never reported plainly: the pass says so in its status (a problem
of kind IMPLAUSIBLE, naming the figure, the bound and its reason) and

- a figure below what the testbed resolves (a negative latency added under load)
  is withheld (no value): never shown as a negative figure, never divided by;
- a rate above the shaped link fails the pass: the link did not hold its shaping;
- a figure the mechanism allows only through a pathology (TCP_CRR hundreds of
  times under its TCP_RR) is kept, with the pathology named.

Each bound comes from how the figure is made (a queue only adds delay; a token
bucket passes its rate and one burst; a new connection costs a round trip more
than a request), not from the spread of passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vnetbench.core.outcome import IMPLAUSIBLE_MARK, Kind, Problem, State
from vnetbench.core.units import burst_bytes, format_rate
from vnetbench.declared.loaded_latency import LOAD_PHASES, LOADED
from vnetbench.declared.transfer import TRANSFER_DIRECTIONS
from vnetbench.model.topology import Topology
from vnetbench.scenarios.base import Metrics, PassResult


@dataclass(frozen=True)
class Finding:
    """What a rule found: the figure (its metric), why (no "; " in it: the status joins
    its problems with it), whether the figure is withheld (set to no value) and whether
    the pass failed for it."""

    figure: str
    why: str
    withheld: bool = False
    fails: bool = False

    @property
    def sentence(self) -> str:
        """The status's sentence: 'tcp_crr_tps implausible: TCP_CRR 6/s is ...'."""
        return f"{self.figure} {IMPLAUSIBLE_MARK}: {self.why}"


Rule = Callable[[Metrics, Topology], list[Finding]]


def value(metrics: Metrics, name: str) -> float | None:
    found = metrics.get(name)
    return None if found is None or found[0] is None else float(found[0])


# --- latency added under load: at least zero -----------------------------------------
# A load adds queueing to the path and never takes any away, so a loaded percentile
# below the idle p50 is not an effect of the load: it is the idle path's own
# variation (its cores wake for each idle ping, and stay awake under load), larger
# than what the load added. The testbed cannot resolve the figure: it is withheld.
ADDED_BOUND_MS = 0.0


def added_latency_resolved(metrics: Metrics, topology: Topology) -> list[Finding]:
    idle = value(metrics, "idle_rtt_p50_ms")
    found = []
    for phase in LOADED:
        for q in (50, 99):
            added = value(metrics, f"{phase}_added_p{q}_ms")
            loaded = value(metrics, f"{phase}_rtt_p{q}_ms")
            if added is None or added >= ADDED_BOUND_MS or idle is None or loaded is None:
                continue
            found.append(Finding(
                f"{phase}_added_p{q}_ms",
                f"latency added {LOAD_PHASES[phase]}, p{q}, below the testbed's resolution, "
                f"not given (the loaded p{q} {loaded:.3f} ms is {-added:.3f} ms under the "
                f"idle p50 {idle:.3f} ms: a load only adds queueing, so the difference is "
                "the idle path's own variation, its cores waking for each idle ping)",
                withheld=True))
    return found


# --- a rate at most the shaped link's --------------------------------------------------
# Every byte an agent sends or receives crosses its own interface, shaped each way by
# a token bucket (shaping/plan.py's tbf) that passes at most its rate over a
# measurement plus one bucket (units.burst_bytes); goodput, below the headers, is
# less. So a pair's rate is at most the shaped rate of the faster agent's link (of
# the two directions summed, twice it) plus one bucket over the measurement's seconds.
# Unshaped links (an agent with no rate) set no bound.
RATE_FIGURES: dict[str, tuple[int, str | None]] = {
    # figure: (directions it sums, the metric giving its seconds; None: the settings')
    "tcp_mbit": (1, None), "udp_mbit": (1, None),
    "one_way_load_mbit": (1, None), "both_ways_load_mbit": (2, None),
    **{f"{d}_mbit": (1, f"{d}_seconds") for d in TRANSFER_DIRECTIONS},
}


def shaped_rate(topology: Topology) -> int | None:
    """The fastest agent's link rate (bit/s), None when an agent's link is unshaped."""
    rates = [(agent.link or topology.links.site).rate for agent in topology.agents]
    return None if not rates or None in rates else max(r for r in rates if r is not None)


def rate_within_the_link(metrics: Metrics, topology: Topology) -> list[Finding]:
    rate = shaped_rate(topology)
    if rate is None:
        return []
    found = []
    for name, (directions, seconds_from) in RATE_FIGURES.items():
        measured = value(metrics, name)
        seconds = (value(metrics, seconds_from) if seconds_from
                   else float(topology.settings.seconds))
        if measured is None or not seconds:
            continue
        bound = directions * (rate + burst_bytes(rate) * 8 / seconds) / 1e6
        if measured > bound:
            ways = " each way, summed" if directions > 1 else ""
            found.append(Finding(
                name, f"{measured:.1f} Mbit/s is above what the links pass: at most "
                f"{bound:.1f} Mbit/s (the agents' links are shaped to {format_rate(rate)}"
                f"{ways}, plus one token bucket over {seconds:g} s): the links did not hold "
                "their shaping, so the figure is not theirs", fails=True))
    return found


# --- TCP_CRR within a few TCP_RR -------------------------------------------------------
# A TCP_CRR transaction is a TCP_RR one (a request and its response: a round trip)
# plus a handshake's round trip and the sockets' setup and close, which on these
# paths cost microseconds to tens of them: a few TCP_RR transactions' time (recorded
# here 3-5x: tests/data/netperf-tcp-*.txt). CRR_RR_BOUND times leaves a wide margin;
# beyond it each new connection waits on something an open one does not: a packet
# of its start lost and resent after TCP's timeout (200 ms at least, Linux's
# TCP_RTO_MIN; 1 s for a SYN, TCP_TIMEOUT_INIT), a lookup on its first packet, or,
# on a tunnel carried over TCP, Nagle's algorithm holding each packet sent behind
# another until the peer's delayed ACK (40 ms and more, Linux's TCP_DELACK_MIN):
# OpenVPN without tcp-nodelay, captured at 44 ms a packet, 5 CRR/s (docs/overlays.md).
TCP_DELAYED_ACK_US = 40_000
CRR_RR_BOUND = 20
TCP_MIN_RTO_US = 200_000
TCP_SYN_RTO_US = 1_000_000


def crr_within_rr(metrics: Metrics, topology: Topology) -> list[Finding]:
    rr, crr = value(metrics, "tcp_rr_tps"), value(metrics, "tcp_crr_tps")
    if rr is None or crr is None or crr <= 0 or crr * CRR_RR_BOUND >= rr:
        return []
    p99 = value(metrics, "tcp_crr_p99_us")
    if p99 is not None and p99 >= TCP_SYN_RTO_US * 0.8:
        why = (f"each new connection loses its SYN (p99 {p99 / 1000:.0f} ms ≈ the SYN's "
               "retransmission timeout, 1 s)")
    elif p99 is not None and p99 >= 2 * TCP_DELAYED_ACK_US:
        why = (f"each new connection waits {p99 / 1000:.0f} ms at p99: a packet of its "
               "start lost and resent (TCP's minimum retransmission timeout, 200 ms), or, "
               "on a tunnel carried over TCP, packets held by Nagle's algorithm for the "
               "peer's delayed ACK (40 ms each; OpenVPN without tcp-nodelay)")
    else:
        why = "each new connection waits on something an open one does not"
    return [Finding(
        "tcp_crr_tps", f"TCP_CRR {crr:.0f}/s is {rr / crr:.0f} times under its TCP_RR "
        f"{rr:.0f}/s, beyond the {CRR_RR_BOUND} times a new connection's handshake and "
        f"setup can cost: {why}")]


RULES: tuple[Rule, ...] = (added_latency_resolved, rate_within_the_link, crr_within_rr)


def check_plausible(result: PassResult, topology: Topology) -> list[Finding]:
    """Every rule on a measured pass's figures; what they find is said in its status
    (after "ok" when nothing else was; a failing finding first, and the pass failed),
    and withheld figures lose their value (in its RESULT line too)."""
    if not result.state.measured:
        return []
    found = [finding for rule in RULES for finding in rule(result.metrics, topology)]
    for finding in found:
        if finding.withheld:
            name = finding.figure
            result.metrics[name] = (None, result.metrics[name][1])
            if name in result.summary:
                result.summary[name] = None
        if finding.fails:  # said first: the status starts with why the pass failed
            result.outcome.problems.insert(0, Problem(Kind.IMPLAUSIBLE, finding.sentence))
            result.outcome.state = State.FAILED
        else:
            result.outcome.add(Kind.IMPLAUSIBLE, finding.sentence, addendum=True)
        result.notes.append(finding.sentence)
    return found
