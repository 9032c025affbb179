"""A workload's figures per phase and per at-once event, from the open loop's
per-request records (measure/room_faults.py `Request`, one machine's in its
schedule's order, as `requests_of` reads them) and the plan that scheduled them
(scenarios/room/workload_schedule.py); pure.

A machine's records are matched to its plan by position: the generator keeps one
column entry per scheduled request, in order, so the n-th record is the n-th
request planned, whatever instant it shares with another (an at-once event and a
kind's request can fall on the same microsecond). A machine whose record count is
not its plan's is left out of the figures and named (its requests count as
unrecorded), rather than guessed at.

Per phase, over its mix's requests (an at-once event has figures of its own, so a
phase's percentiles say what its steady requests met, burst or not): planned,
answered, failed (connect, read, write, status, or timed out, waiting for a
connection included), unrecorded (planned on machines without records), and
latency p50, p99 and max of those answered, from each one's scheduled instant as
the open loop counts it. Per at-once event: how many machines got the object, the
time from its instant until the last of them had it (their latency: every one was
scheduled at the instant) and their p50, and how many never had it (failed, timed
out, or no record), named.

A workload asking over HTTPS has, per phase and per at-once event, the TLS
handshakes its requests opened, full and resumed (a machine's new connection offers
its latest session), and the p99 of the time opening those connections took (TCP's
and TLS's handshakes): after a switch restart, the reconnect storm's handshakes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from vnetbench.measure.room import machines_named
from vnetbench.measure.room_faults import Request, latencies, quantile
from vnetbench.scenarios.room.workload_schedule import Part, WorkloadPlan

TIMEOUT = "timeout"


@dataclass(frozen=True)
class PhaseFigures:
    phase: str
    planned: int
    answered: int
    failed: int  # any error, timeouts included
    timed_out: int
    unrecorded: int  # planned on machines whose records could not be read per request
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    tls: TlsFigures | None = None


@dataclass(frozen=True)
class TlsFigures:
    """The TLS handshakes a set of requests opened, and opening's time (ms)."""

    full: int
    resumed: int
    connect_p99_ms: float | None

    @staticmethod
    def of(requests: Sequence[Request]) -> TlsFigures:
        opened = [r for r in requests if r.handshake is not None]
        return TlsFigures(sum(1 for r in opened if r.handshake == "full"),
                          sum(1 for r in opened if r.handshake == "resumed"),
                          quantile([r.connect_ms for r in opened if r.connect_ms is not None],
                                   99))


@dataclass(frozen=True)
class EventFigures:
    event: str
    phase: str
    machines: int  # planned: one request each
    done: int
    last_ms: float | None  # from the instant until the last machine that got it had it
    p50_ms: float | None
    unfinished: int  # machines that never had it: failed, timed out or no record
    unfinished_machines: tuple[str, ...] = ()  # those machines, in room order
    tls: TlsFigures | None = None


@dataclass(frozen=True)
class WorkloadFigures:
    phases: tuple[PhaseFigures, ...]
    events: tuple[EventFigures, ...]
    unattributed: dict[str, str] = field(default_factory=dict)  # machine -> why


def attributed(plan: WorkloadPlan, records: Mapping[str, Sequence[Request]]
               ) -> tuple[list[tuple[Part, Request]], dict[str, str]]:
    """Every record with its part, by position; the machines whose records do not
    match their plan, with why."""
    pairs: list[tuple[Part, Request]] = []
    unmatched: dict[str, str] = {}
    for machine, requests in records.items():
        parts = plan.parts.get(machine)
        if parts is None:
            unmatched[machine] = "not a machine of the plan"
        elif len(parts) != len(requests):
            unmatched[machine] = (f"{len(requests)} records for {len(parts)} planned "
                                  "requests: not matched to the plan")
        else:
            pairs += zip(parts, requests, strict=True)
    return pairs, unmatched


def phase_figures(phase: str, planned: int, requests: Sequence[Request],
                  tls: bool = False) -> PhaseFigures:
    """`tls`: the workload asks over HTTPS (its handshakes counted)."""
    answered = latencies(requests)
    failed = [r for r in requests if r.error is not None]
    return PhaseFigures(phase, planned, len(answered), len(failed),
                        sum(1 for r in failed if r.error == TIMEOUT),
                        planned - len(requests), quantile(answered, 50), quantile(answered, 99),
                        quantile(answered, 100), TlsFigures.of(requests) if tls else None)


def event_figures(event: str, phase: str, machines: int,
                  requests: Sequence[Request], asked: Sequence[str] = (),
                  tls: bool = False) -> EventFigures:
    """`asked`: the machines the plan gave the event (named when they never had it);
    `tls`: the workload asks over HTTPS."""
    done = latencies(requests)
    had = {r.machine for r in requests if r.answered}
    return EventFigures(event, phase, machines, len(done), max(done, default=None),
                        quantile(done, 50), machines - len(done),
                        tuple(machines_named(set(asked) - had)),
                        TlsFigures.of(requests) if tls else None)


def workload_figures(plan: WorkloadPlan,
                     records: Mapping[str, Sequence[Request]]) -> WorkloadFigures:
    """Figures per phase and per at-once event; `records`: each machine's requests in
    its schedule's order (a machine without a record is absent)."""
    pairs, unmatched = attributed(plan, records)
    planned = Counter(part for parts in plan.parts.values() for part in parts)
    recorded: dict[Part, list[Request]] = defaultdict(list)
    for part, request in pairs:
        recorded[part].append(request)

    def mix_of(phase: str) -> list[Part]:
        return [part for part in planned if part.phase == phase and not part.at_once]

    tls = any(target.startswith("s") for target in plan.targets)
    phases = tuple(phase_figures(span.name, sum(planned[p] for p in mix_of(span.name)),
                                 [r for p in mix_of(span.name) for r in recorded[p]], tls)
                   for span in plan.phases)
    events = tuple(event_figures(e.name, e.phase, planned[part], recorded[part],
                                 [m for m, parts in plan.parts.items() if part in parts], tls)
                   for e in plan.events
                   for part in [Part(e.phase, e.name, at_once=True)])
    return WorkloadFigures(phases, events, unmatched)
