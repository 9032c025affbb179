"""A workload (vnetbench/model/workload.py) compiled into what the room's open loop runs:
each machine's schedule, the reply sizes the server serves, the requests a schedule
names by index (model/workload.py `target`: downloads and uploads, HTTP or HTTPS), and
what each request
belongs to (its phase, and its kind or at-once event), for the figures per phase.

Phases are laid end to end from the room's instant. A kind's requests are spread
as the room's steady rate spreads them (scenarios/room/open_loop.py): "even", machine i of
N shifted by i/N of the kind's gap, then those at or past the phase's end left
out, so that phases never overlap; a kind slower than one request a machine per
phase is then asked by some machines only, and the room still asks
rate x seconds x machines (open_loop.py alone asks at least one of every machine).
"poisson": as many requests a machine as "even" gives it, drawn uniformly over the
phase, so both arrivals plan the same. Draws are seeded by the machine, the pass,
the phase and the kind. An at-once event is one request of every machine at the
same microsecond.

The open-loop generator takes one connection mode per machine: kinds that ask for
different ones in one workload are refused (`plan_problems`), as is a schedule that
could exceed one argument (open_loop.py's bound over the whole workload).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from vnetbench.errors import UserError
from vnetbench.model.workload import Phase, RequestKind, Workload
from vnetbench.scenarios.room.open_loop import (
    MAX_ARGUMENT_BYTES,
    Arrivals,
    MachineSchedule,
    encoded_bound,
    machine_schedule,
    requests_per_machine,
    within,
)

Connection = Literal["keep", "new"]


@dataclass(frozen=True)
class Part:
    """What a request belongs to: its phase, and its mix's kind or its at-once event."""

    phase: str
    name: str
    at_once: bool = False


@dataclass(frozen=True)
class PhaseSpan:
    """A phase's place after the room's instant, [start_us, end_us)."""

    name: str
    start_us: int
    end_us: int


@dataclass(frozen=True)
class EventInstant:
    """An at-once event's instant after the room's, and its object's size."""

    name: str
    phase: str
    at_us: int
    size: int


@dataclass(frozen=True)
class WorkloadPlan:
    """Every machine's schedule (indexes into `targets`) and, parallel to it, what
    each of its requests belongs to; `sizes`: the replies the server serves."""

    sizes: tuple[int, ...]
    schedules: dict[str, MachineSchedule]
    parts: dict[str, tuple[Part, ...]]
    phases: tuple[PhaseSpan, ...]
    events: tuple[EventInstant, ...]
    targets: tuple[str, ...] = ()  # the generator's SIZES tokens (model/workload.py target)

    @property
    def last_s(self) -> float:
        """The last request's instant, seconds after the room's."""
        return max((s.last_s for s in self.schedules.values()), default=0.0)


def phase_spans(workload: Workload) -> tuple[PhaseSpan, ...]:
    spans, start = [], 0
    for phase in workload.phases:
        end = start + round(phase.seconds * 1e6)
        spans.append(PhaseSpan(phase.name, start, end))
        start = end
    return tuple(spans)


def kind_offsets(kind: RequestKind, phase: Phase, index: int, machines: int,
                 arrivals: Arrivals, seed: str) -> tuple[int, ...]:
    """One machine's requests of one kind, microseconds after its phase's start."""
    even = within(machine_schedule(index, machines, kind.rate, phase.seconds, 1, "even", seed),
                  0, phase.seconds)
    if arrivals == "even" or not len(even):
        return even.offsets_us
    return machine_schedule(index, machines, len(even) / phase.seconds, phase.seconds, 1,
                            "poisson", seed).offsets_us


def machine_plan(workload: Workload, spans: Sequence[PhaseSpan], index: int, machines: int,
                 name: str, arrivals: Arrivals, pass_no: int
                 ) -> tuple[MachineSchedule, tuple[Part, ...]]:
    """One machine's whole schedule, in order, and each request's part."""
    size_index = {token: n for n, token in enumerate(workload.targets)}
    requests: list[tuple[int, int, Part]] = []
    for phase, span in zip(workload.phases, spans, strict=True):
        requests += [(span.start_us + round(event.at_s * 1e6), size_index[event.target],
                      Part(phase.name, event.name, at_once=True)) for event in phase.at_once]
        for kind in phase.mix:
            seed = f"{name}/pass{pass_no}/{phase.name}/{kind.name}"
            part = Part(phase.name, kind.name)
            requests += [(span.start_us + offset, size_index[kind.target], part) for offset in
                         kind_offsets(kind, phase, index, machines, arrivals, seed)]
    requests.sort(key=lambda request: request[0])  # stable: events first at one instant
    return (MachineSchedule(tuple(r[0] for r in requests), tuple(r[1] for r in requests)),
            tuple(r[2] for r in requests))


def plan_workload(workload: Workload, machines: Sequence[str], arrivals: Arrivals,
                  pass_no: int) -> WorkloadPlan:
    """Every machine's schedule for one pass (machines in room order: each one's place
    in the room shifts its even arrivals)."""
    spans = phase_spans(workload)
    planned = {name: machine_plan(workload, spans, index, len(machines), name, arrivals,
                                  pass_no) for index, name in enumerate(machines)}
    events = tuple(EventInstant(event.name, phase.name, span.start_us + round(event.at_s * 1e6),
                                event.size)
                   for phase, span in zip(workload.phases, spans, strict=True)
                   for event in phase.at_once)
    return WorkloadPlan(workload.sizes, {m: p[0] for m, p in planned.items()},
                        {m: p[1] for m, p in planned.items()}, spans, events, workload.targets)


def until_killed(plan: WorkloadPlan, kills: Mapping[str, float]) -> WorkloadPlan:
    """The plan with each machine a schedule of faults kills for good asking only
    what is due before its kill (seconds after the room's instant), as the steady
    room's machine does: one switched off asks nothing. Its parts are cut with its
    schedule, so records still match the plan by position."""
    schedules, parts = dict(plan.schedules), dict(plan.parts)
    for machine, at_s in kills.items():
        if machine in schedules:
            schedules[machine] = within(schedules[machine], 0.0, at_s)
            parts[machine] = parts[machine][:len(schedules[machine])]
    return replace(plan, schedules=schedules, parts=parts)


def most_requests(workload: Workload) -> int:
    """The most requests any one machine can be given (open_loop.py's count per kind
    and phase, before the phase's end cuts "even" short; one per at-once event)."""
    return sum(sum(requests_per_machine(k.rate, p.seconds) for k in p.mix) + len(p.at_once)
               for p in workload.phases)


def connection_of(workload: Workload, default: Connection) -> Connection | None:
    """The one connection mode the workload's kinds ask for (unset: `default`), or
    None when they ask for both."""
    modes = {kind.connection or default for phase in workload.phases for kind in phase.mix}
    return None if len(modes) > 1 else next(iter(modes), default)


def plan_problems(workload: Workload, default: Connection) -> list[str]:
    """Why the room's open loop cannot run this workload, one sentence each (none: it
    can); checked before anything starts."""
    problems = []
    requests = most_requests(workload)
    bound = encoded_bound(requests, workload.seconds)
    if bound > MAX_ARGUMENT_BYTES:
        problems.append(
            f"the workload could hand a machine {requests} requests over {workload.seconds:g} "
            f"s, a schedule of up to {bound:,} bytes: more than the "
            f"{MAX_ARGUMENT_BYTES + 1:,} bytes Linux allows one argument of a program "
            "(MAX_ARG_STRLEN). Give lower rates or shorter phases.")
    if connection_of(workload, default) is None:
        mixed = sorted({f"{p.name}.{k.name}: {k.connection or default}"
                        for p in workload.phases for k in p.mix})
        problems.append(
            f"the workload's kinds ask for both kept and new connections ({', '.join(mixed)}; "
            f"unset is room_connection, {default}), and the room's generator holds one mode "
            "per machine: give every kind the same connection, or leave it unset.")
    return problems


def check_plan(workload: Workload, default: Connection, source: str = "The workload") -> None:
    """UserError naming every problem of `plan_problems` at once."""
    problems = plan_problems(workload, default)
    if problems:
        raise UserError("\n".join([f"{source} cannot run as the room's open loop:",
                                   *(f"  - {p}" for p in problems),
                                   "Fix these and run again."]))
