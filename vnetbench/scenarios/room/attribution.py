"""Where the time went: a pass's tail and its failures attributed to their causes,
read from the kernel's own counters over the pass (scenarios/room/counters.py), in a
sentence beside each figure, the dominant cause first. Pure functions.

The thresholds come from the mechanisms, not from a speed:
- a packet a shaper dropped is sent again by TCP, after a fast retransmit (about a
  round trip more: the pass's median stands for it) or after the retransmission
  timer, at least TCP_RTO_MIN (200 ms, include/net/tcp.h); the machines' own
  TCPTimeouts say which it was;
- a connection the server's accept queue dropped (ListenDrops, of them
  ListenOverflows: the queue full) waits for the client's next SYN, TCP_TIMEOUT_INIT
  (1 s) later;
- the p99 is the slowest 1 % of the requests: a cause that touched fewer (each drop
  delays at most the request it belongs to and those queued behind it on its
  connection) can reach the p99.9 and the maximum, not fill the p99 by itself;
- a CPU is saturated at 90 % of what it has: the server's nginx runs a worker per
  core (worker_processes auto), the host has its cores; above that, requests queue
  for the CPU and the queue grows with any burst;
- tbf's overlimits count a packet waiting for the rate's tokens (queueing, at most
  its latency, 50 ms, before tbf drops it): a wait, not a loss;
- a retransmission timer can fire while the segment still queues (on a host, behind a
  token bucket): the kernel undoes the recovery it began once the original turns out
  to have arrived (TCPLossUndo, by timestamps, D-SACK or F-RTO), so with no drop
  counted, the timeouts undone were spurious and the rest were lost outside the shapers;
  but a handshake's timeout (a SYN or SYN-ACK sent again after 1 s: TCPSynRetrans, in
  TCPTimeouts too) is never undone, so it is said apart: its answer queued, or was lost.
Causes are ranked by whether they can fill the tail, then by the least time they
added together (events x the least each costs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vnetbench.scenarios.room.counters import LinkDelta, PassCounters, TcpDelta

RTO_MIN_MS = 200.0  # TCP_RTO_MIN: the least a retransmission by timeout waits
SYN_RETRY_MS = 1000.0  # TCP_TIMEOUT_INIT: a dropped SYN is sent again after this
TAIL_SHARE = 0.01  # the p99's share of the requests
SATURATED = 0.9  # a CPU this busy (share of its cores) makes requests queue for it
SERVER = "server"
MACHINE = "machine"


@dataclass(frozen=True)
class PassFigures:
    """What the pass measured, as the attribution reads it."""

    p50_ms: float | None
    p99_ms: float | None
    requests: int  # answered and failed
    failed: int
    errors: Mapping[str, int]  # failed requests by kind (connect, read, timeout...)
    failing: tuple[str, ...]  # machines with a failed request or no record
    machines: int
    server_cpu_percent: float | None  # percent of one core
    host_percent: float | None  # percent of all the host's cores
    cores: int
    # the schedule's faults that took effect during the pass: their drops (a chain of
    # their own, gone before the second snapshot) and kills are in no shaper's counter
    faults: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cause:
    """One cause the counters show: `events` of it, each costing at least `cost_ms`."""

    what: str
    events: int
    cost_ms: float
    tail_sized: bool  # touched at least TAIL_SHARE of the requests
    kind: str  # "link", "accept queue", "cpu", "queueing", "elsewhere", "fault",
    # "queued timeout", "handshake timeout"

    @property
    def added_ms(self) -> float:
        return self.events * self.cost_ms


@dataclass(frozen=True)
class Attribution:
    """The sentences beside the pass's tail and its failures (None: none failed)."""

    tail: str
    failures: str | None
    causes: tuple[Cause, ...] = field(default=())  # the dominant first

    def notes(self) -> list[str]:
        return [self.tail, *([self.failures] if self.failures else [])]


def by_link(links: Sequence[LinkDelta]) -> dict[str, list[LinkDelta]]:
    grouped: dict[str, list[LinkDelta]] = {}
    for delta in links:
        grouped.setdefault(delta.link, []).append(delta)
    return grouped


def link_sentence(link: str, deltas: Sequence[LinkDelta]) -> str:
    """'the shapers of link site-s1 dropped 1,234 packets (loss rule 1,200, tbf queue
    full 34; tbf overlimits 5,678) on 3 interfaces'."""
    rule, queue = sum(d.loss_drops for d in deltas), sum(d.drops for d in deltas)
    kinds = "/".join(sorted({d.qdisc for d in deltas if d.qdisc})) or "qdisc"
    parts = [f"loss rule {rule:,}"] if rule else []
    # tbf drops only when its queue is full; netem's drops are its loss and its queue's
    parts += [f"{kinds} {'queue full' if kinds == 'tbf' else 'drops'} {queue:,}"] if queue else []
    overlimits = sum(d.overlimits for d in deltas)
    waits = f"; {kinds} overlimits {overlimits:,}" if overlimits else ""
    return (f"the shapers of link {link} dropped {rule + queue:,} packets "
            f"({', '.join(parts)}{waits}) on {plural(len(deltas), 'interface')}")


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def tcp_of(counters: PassCounters, role: str) -> list[TcpDelta]:
    return [t for t in counters.tcp if t.role == role]


def causes(counters: PassCounters, figures: PassFigures) -> list[Cause]:
    """Every cause the counters show, the dominant first."""
    tail_events = TAIL_SHARE * figures.requests
    machines = tcp_of(counters, MACHINE) + tcp_of(counters, SERVER)
    retrans = sum(t.retrans_segs for t in machines)
    timeouts = sum(t.timeouts for t in machines)
    round_trip = figures.p50_ms or 0.0
    drop_cost = RTO_MIN_MS if timeouts else round_trip
    found = []
    for link, deltas in by_link(counters.links).items():
        lost = sum(d.lost for d in deltas)
        if lost:
            found.append(Cause(link_sentence(link, deltas), lost, drop_cost,
                               lost >= tail_events, "link"))
    listen = sum(t.listen_drops for t in tcp_of(counters, SERVER))
    overflows = sum(t.listen_overflows for t in tcp_of(counters, SERVER))
    if listen:
        found.append(Cause(f"the server's accept queue overflowed {overflows:,} times "
                           f"({listen:,} connection attempts dropped, each sent again "
                           f"{SYN_RETRY_MS / 1000:g} s later)", listen, SYN_RETRY_MS,
                           listen >= tail_events, "accept queue"))
    found += cpu_causes(figures)
    lost_in_shapers = sum(c.events for c in found if c.kind == "link") + counters.queue_drops
    if counters.queue_drops:
        found.append(Cause(f"the delay lines' queues dropped {counters.queue_drops:,} "
                           "packets (full)", counters.queue_drops, drop_cost,
                           counters.queue_drops >= tail_events, "link"))
    if figures.faults and (retrans or figures.failed):
        found.append(Cause(f"the schedule's faults ({', '.join(figures.faults)}): what "
                           "they dropped or killed is in no shaper's counter (their rules "
                           f"are gone with them); machines retransmitted {retrans:,} "
                           "segments meanwhile", max(retrans, figures.failed), drop_cost,
                           max(retrans, figures.failed) >= tail_events, "fault"))
    elif retrans and not lost_in_shapers and not listen:
        found.append(unseen_loss(retrans, machines, drop_cost, tail_events))
    for link, deltas in by_link(counters.links).items():
        waits = sum(d.overlimits for d in deltas)
        if waits and not sum(d.lost for d in deltas):
            found.append(Cause(f"packets waited for the rate's tokens at the shapers of "
                               f"link {link} {waits:,} times (tbf overlimits, up to its "
                               "latency of 50 ms a crossing)", waits, 0.0, False, "queueing"))
    return sorted(found, key=lambda c: (not c.tail_sized, -c.added_ms, -c.events))


def handshake_timeouts(node: TcpDelta) -> int:
    """The node's timeouts that sent a SYN or SYN-ACK again (0 on a kernel without the
    counter: its handshakes are then among the others)."""
    return min(node.timeouts, node.syn_retrans or 0)


def spurious_timeouts(node: TcpDelta) -> int | None:
    """The node's timeouts the kernel found spurious: the recoveries they began that it
    undid (TCPLossUndo; F-RTO's TCPSpuriousRTOs are counted in it too, so the larger,
    not the sum), at most its timeouts but its handshakes'; None when its kernel has no
    such counter."""
    if node.loss_undo is None:
        return None
    return min(node.timeouts - handshake_timeouts(node),
               max(node.loss_undo, node.spurious_rtos or 0))


def queued(count: int) -> str:
    return (f"{count:,} fired while the segment was still queued (the kernel undid their "
            "recovery: the host or a queue, not a loss)" if count else
            "none fired while the segment was still queued")


def handshakes(count: int) -> str:
    return (f"{count:,} {'was a handshake' if count == 1 else 'were handshakes'} sent again "
            "(a SYN or SYN-ACK unanswered for 1 s or more: its answer queued, or was lost; "
            "the kernel never undoes these)")


def lost(count: int) -> str:
    if not count:
        return "none were losses outside the shapers"
    return (f"{count:,} {'was a loss' if count == 1 else 'were losses'} outside the shapers "
            "(the overlay's socket buffers, a bridge, a veth)")


def unseen_loss(retrans: int, nodes: Sequence[TcpDelta], cost_ms: float,
                tail_events: float) -> Cause:
    """Retransmissions with no drop counted by any shaper: lost outside the shapers, or
    sent again while still queued (a timer shorter than the queue's wait: 300 machines'
    statement behind one port had 1,839 timeouts and no drop). The kernel tells the
    timeouts apart: those whose recovery it undid were spurious (the segment had
    arrived), the rest were lost; the split is said, the larger part first. Without a
    timeout, or on a kernel without the undo counters, it cannot tell, and says so."""
    timeouts = sum(t.timeouts for t in nodes)
    spurious = [spurious_timeouts(t) for t in nodes if t.timeouts]
    if not timeouts or None in spurious:
        return Cause(f"machines retransmitted {retrans:,} segments though no shaper dropped "
                     "a packet: lost outside the shapers (the overlay's socket buffers, a "
                     "bridge, a veth), or sent again while still queued (a timer shorter "
                     "than the queue's wait), which these counters do not tell apart",
                     retrans, cost_ms, retrans >= tail_events, "elsewhere")
    undone = sum(s or 0 for s in spurious)
    handshaken = sum(handshake_timeouts(t) for t in nodes)
    # the larger part first, a tie in this order: the loss, the handshakes, the queued
    split = [(timeouts - handshaken - undone, lost, "elsewhere"),
             (handshaken, handshakes, "handshake timeout"), (undone, queued, "queued timeout")]
    ranked = sorted((part for part in split if part[0] or part[1] is not handshakes),
                    key=lambda part: -part[0])
    parts = [said(count) for count, said, _ in ranked]
    # the split first: what follows a cause, "(dominant)", is the whole cause's
    return Cause(f"of the machines' {plural(timeouts, 'timeout')}, {', '.join(parts)}: they "
                 f"retransmitted {retrans:,} segments though no shaper dropped a packet",
                 retrans, cost_ms, retrans >= tail_events, ranked[0][2])


def cpu_causes(figures: PassFigures) -> list[Cause]:
    """The server's CPU or the host's, when saturated (SATURATED): every request may
    have queued for it, so it reaches the tail; each wait at least a median's worth."""
    found = []
    cost = figures.p50_ms or 0.0
    server = (figures.server_cpu_percent or 0.0) / 100
    if server >= SATURATED * figures.cores:
        found.append(Cause(f"the server's CPU was saturated ({server:.2f} cores of "
                           f"{figures.cores})", figures.requests, cost, True, "cpu"))
    host = figures.host_percent or 0.0
    if host >= 100 * SATURATED:
        found.append(Cause(f"the host's CPU was saturated ({host:.0f} % of its "
                           f"{figures.cores} cores)", figures.requests, cost, True, "cpu"))
    return found


def tcp_sentence(counters: PassCounters, figures: PassFigures) -> str:
    """'41 of 300 machines retransmitted 812 segments, 37 by timeout'."""
    machines = tcp_of(counters, MACHINE)
    retrans = [t for t in machines if t.retrans_segs]
    segs = sum(t.retrans_segs for t in machines)
    timeouts = sum(t.timeouts for t in machines)
    server = tcp_of(counters, SERVER)
    server_part = (f"; the server {sum(t.retrans_segs for t in server):,} segments, "
                   f"{sum(t.timeouts for t in server):,} by timeout" if server else "")
    return (f"{len(retrans):,} of {len(machines):,} machines retransmitted {segs:,} segments, "
            f"{timeouts:,} by timeout{server_part}")


def standing(counters: PassCounters, figures: PassFigures) -> str:
    """What the counters say whatever the cause: TCP, the accept queue, the CPU."""
    server = tcp_of(counters, SERVER)
    overflows = (f"the server's accept queue overflowed "
                 f"{sum(t.listen_overflows for t in server):,} times" if server
                 else "the server's accept queue unread")
    cpu = ("server CPU unmeasured" if figures.server_cpu_percent is None
           else f"server CPU {figures.server_cpu_percent / 100:.2f} cores")
    host = ("" if figures.host_percent is None
            else f" (host {figures.host_percent:.0f} % of {figures.cores} cores)")
    unread = ""
    if counters.unread:
        node, why = next(iter(counters.unread.items()))
        unread = f"; counters of {plural(len(counters.unread), 'node')} unread ({node}: {why})"
    return f"{tcp_sentence(counters, figures)}; {overflows}; {cpu}{host}{unread}"


def tail_sentence(found: Sequence[Cause], counters: PassCounters,
                  figures: PassFigures) -> str:
    p99 = "p99 unmeasured" if figures.p99_ms is None else f"p99 {figures.p99_ms:.1f} ms"
    if not found:
        return (f"Where the time went ({p99}): the counters name no cause: no shaper dropped "
                f"or queued a packet and no CPU was saturated; {standing(counters, figures)}.")
    first, rest = found[0], found[1:]
    size = ("" if first.tail_sized else
            f", fewer than {TAIL_SHARE:.0%} of the {figures.requests:,} requests: it reaches "
            "the p99.9 and the maximum more than the p99")
    also = f"; then {'; '.join(c.what for c in rest)}" if rest else ""
    return (f"Where the time went ({p99}): {first.what} (dominant{size}){also}; "
            f"{standing(counters, figures)}.")


def failure_sentence(found: Sequence[Cause], counters: PassCounters,
                     figures: PassFigures) -> str | None:
    if not figures.failing and not figures.failed:
        return None
    kinds = ", ".join(f"{kind} {count:,}" for kind, count in figures.errors.items() if count)
    failing = set(figures.failing)
    timed_out = [t for t in tcp_of(counters, MACHINE) if t.node in failing and t.timeouts]
    losses = [c for c in found
              if c.kind in ("accept queue", "link", "elsewhere", "cpu", "fault",
                            "queued timeout", "handshake timeout")]
    why = "; ".join(c.what for c in losses) or (
        "the counters name no cause (no drop, no saturated CPU): see the machines' errors")
    retried = (f"; {len(timed_out):,} of those machines retransmitted by timeout "
               f"({sum(t.timeouts for t in timed_out):,} timeouts)" if failing else "")
    return (f"Why {plural(len(figures.failing), 'machine')} of {figures.machines:,} failed "
            f"({figures.failed:,} requests failed{': ' + kinds if kinds else ''}): "
            f"{why}{retried}.")


def attribute(counters: PassCounters, figures: PassFigures) -> Attribution:
    """The pass's tail and failures, each with its causes, the dominant first."""
    found = causes(counters, figures)
    return Attribution(tail_sentence(found, counters, figures),
                       failure_sentence(found, counters, figures), tuple(found))
