"""A workload's figures under a schedule of faults (pure): each fault event's
figures per phase, and the at-once events a fault caught.

Per event and phase: measure/room_faults.py's `event_figures` over the phase's mix
(its steady requests, matched to the plan by position as the phase's own figures
are: scenarios/room/workload_figures.py; an at-once event has its own figures
below), for every phase the event reached: whose span overlaps the event's effective
window and the AFTER_S after its lift (a kill for good: to the load's end). So its
requests, failures and timeouts are the phase's scheduled while the event was in
effect, its p99 theirs, its after-p99 the phase's in the AFTER_S after the lift,
and its recovery the phase's rolling p99 back within the phase's own band from
before the fault (none when the phase has no whole window of requests before the
fault: a fault at a phase's start is judged on the event's whole-room row). The
machines that never got an answer again are the whole room's (room_faults.py's, on
the event's row): a phase's end is no machine's last chance. Over HTTPS, the TLS
handshakes of the phase's requests scheduled from the event's start until AFTER_S
after its lift: the reconnect storm (full where a machine's session was not offered
or not taken, resumed where it was).

An at-once event is caught by a fault in effect at some point from its instant
until its last request ended (answered, failed, or its timeout passed: a machine
with no record is taken to have waited its timeout): its time until the last
machine had the object, and the machines that never had it, named.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vnetbench.measure.room_faults import (
    AFTER_S,
    EventFigures,
    EventWindow,
    Request,
    event_figures,
    with_neighbours,
)
from vnetbench.scenarios.room.workload_figures import (
    EventFigures as BurstFigures,
)
from vnetbench.scenarios.room.workload_figures import (
    TlsFigures,
    WorkloadFigures,
    attributed,
)
from vnetbench.scenarios.room.workload_schedule import EventInstant, PhaseSpan, WorkloadPlan


@dataclass(frozen=True)
class PhaseFault:
    """One fault event's figures over one phase's mix."""

    fault: str
    phase: str
    figures: EventFigures
    tls: TlsFigures | None = None  # over HTTPS: the handshakes from the fault to AFTER_S on


@dataclass(frozen=True)
class CaughtBurst:
    """An at-once event a fault caught: its figures (workload_figures.py's)."""

    fault: str
    burst: BurstFigures


def mix_requests(plan: WorkloadPlan, records: Mapping[str, Sequence[Request]]
                 ) -> dict[str, list[Request]]:
    """Each phase's mix requests (at-once events left out), matched by position."""
    pairs, _ = attributed(plan, records)
    found: dict[str, list[Request]] = defaultdict(list)
    for part, request in pairs:
        if not part.at_once:
            found[part.phase].append(request)
    return found


def reached(event: EventWindow, span: PhaseSpan, origin: float) -> bool:
    """Whether the phase overlaps the event's effect and the AFTER_S after its lift."""
    if event.start is None:
        return False
    until = (event.end if event.end is not None else math.inf) + AFTER_S
    return event.start < origin + span.end_us / 1e6 and origin + span.start_us / 1e6 < until


def phase_fault_figures(plan: WorkloadPlan, records: Mapping[str, Sequence[Request]],
                        events: Sequence[EventWindow], origin: float,
                        timeout_s: float) -> list[PhaseFault]:
    """Every event's figures over each phase it reached, events in the order given;
    `origin` the room's instant (epoch seconds), `timeout_s` a request's timeout."""
    mixes = mix_requests(plan, records)
    tls = any(target.startswith("s") for target in plan.targets)
    return [PhaseFault(n.event.label, span.name,
                       event_figures(mixes.get(span.name, []), n.event, n.previous_end,
                                     n.next_start, timeout_s),
                       TlsFigures.of(storm(mixes.get(span.name, []), n.event)) if tls else None)
            for n in with_neighbours(events)
            for span in plan.phases if reached(n.event, span, origin)]


def storm(requests: Sequence[Request], event: EventWindow) -> list[Request]:
    """The requests scheduled from the event's start until AFTER_S after its lift (a
    kill for good: to the end): those that reconnected because of it, and their
    neighbours in time."""
    if event.start is None:
        return []
    until = (event.end if event.end is not None else math.inf) + AFTER_S
    return [r for r in requests if event.start <= r.scheduled < until]


def burst_end(instant: EventInstant, records: Mapping[str, Sequence[Request]],
              plan: WorkloadPlan, origin: float, timeout_s: float) -> float:
    """When the at-once event's last request ended (epoch seconds)."""
    at = origin + instant.at_us / 1e6
    ends = [at + timeout_s]  # a machine of the plan without a record: its timeout
    pairs, _ = attributed(plan, records)
    mine = [r for part, r in pairs if part.at_once and part.name == instant.name]
    if len(mine) == sum(1 for parts in plan.parts.values() for p in parts
                        if p.at_once and p.name == instant.name):
        ends = [r.scheduled + (r.latency_ms / 1000 if r.latency_ms is not None
                               else timeout_s) for r in mine] or [at]
    return max(ends)


def caught_bursts(plan: WorkloadPlan, figures: WorkloadFigures,
                  records: Mapping[str, Sequence[Request]], events: Sequence[EventWindow],
                  origin: float, timeout_s: float) -> list[CaughtBurst]:
    """Every at-once event a fault was in effect during (from its instant to its last
    request's end), by fault in the order given, then by event."""
    bursts = {b.event: b for b in figures.events}
    spans = {e.name: (origin + e.at_us / 1e6, burst_end(e, records, plan, origin, timeout_s))
             for e in plan.events}
    return [CaughtBurst(event.label, bursts[name])
            for event in events if event.start is not None
            for name, (at, end) in spans.items()
            if name in bursts and event.start < end
            and (event.end is None or event.end > at)]
