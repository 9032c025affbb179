"""The room under a workload (vnetbench/model/workload.py: the topology's `workload:`, or
`run --workload`) instead of its steady room_rate: what it refuses before anything
starts, each machine's generator with its share of the compiled plan
(scenarios/room/workload_schedule.py), and the pass's rows per phase and per at-once event
(scenarios/room/workload_figures.py), a `phase` or `event` column each.

A workload runs on the open loop only (the closed loop keeps no per-request
record), and not yet under a schedule of faults: a machine killed and started again
runs several generators on parts of its schedule, and the figures match records to
the plan by position."""

from __future__ import annotations

from collections.abc import Iterable

from vnetbench.declared.declaration import Values
from vnetbench.declared.room import DECLARATION, RoomSettings
from vnetbench.errors import UserError
from vnetbench.measure.room_faults import Request
from vnetbench.model.topology import Topology
from vnetbench.model.workload import Workload
from vnetbench.scenarios.base import Metrics
from vnetbench.scenarios.room.open_loop import encode
from vnetbench.scenarios.room.workload_figures import WorkloadFigures
from vnetbench.scenarios.room.workload_schedule import WorkloadPlan, connection_of, plan_problems

NAMED_AT_MOST = 3  # machines named in a note; the count says the rest


def workload_problems(topology: Topology, workload: Workload) -> list[str]:
    """Why the room cannot run this workload, one sentence each (none: it can)."""
    room = topology.settings.of(RoomSettings)
    problems = []
    if room.loop != "open":
        problems.append("a workload runs on the open loop (settings.room.loop: open): the "
                        "closed loop keeps no record per request, so no phase's figures "
                        "could be read. Set the loop to open, or leave the workload out.")
    if topology.faults:
        problems.append("a workload under a schedule of faults is not supported yet (a "
                        "machine started again runs a generator per part of its schedule, "
                        "and the phases' figures match records to the plan by position). "
                        "Leave the faults or the workload out.")
    return problems + plan_problems(workload, room.connection)


def check_workload(topology: Topology, workload: Workload) -> None:
    """UserError naming every problem at once, before anything starts."""
    problems = workload_problems(topology, workload)
    if problems:
        raise UserError("\n".join([
            f"Topology '{topology.name}': the room cannot run its workload "
            f"({len(problems)} problem(s)):", *(f"  - {p}" for p in problems),
            "Fix these and run again."]))


def workload_settings(workload: Workload, room: RoomSettings) -> dict[str, object]:
    """The settings a workload's pass ran with, in place of room_rate and room_sizes."""
    return {"room_workload": workload.name or "unnamed", "seconds": workload.seconds,
            "room_sizes": ",".join(str(size) for size in workload.sizes),
            "room_timeout_s": timeout_of(workload, room)}


def timeout_of(workload: Workload | None, room: RoomSettings) -> int:
    """A request's timeout: the workload's when it has one, else room_timeout_s."""
    return workload.timeout_s if workload and workload.timeout_s else room.timeout_s


def workload_argv(plan: WorkloadPlan, room: RoomSettings, workload: Workload, url: str,
                  planned: float) -> dict[str, list[str]]:
    """Each machine's open loop (`vnetbench-room open`) with its schedule of the plan;
    a machine the plan asks nothing of has none."""
    connection = connection_of(workload, room.connection)
    assert connection is not None  # check_workload refused a workload mixing them
    sizes = ",".join(str(size) for size in plan.sizes)
    return {machine: ["vnetbench-room", "open", f"{planned:.3f}",
                      str(timeout_of(workload, room)),
                      connection, str(room.connections), url, sizes, encode(schedule)]
            for machine, schedule in plan.schedules.items() if len(schedule)}


def by_machine(requests: Iterable[Request]) -> dict[str, list[Request]]:
    """The room's requests, each machine's apart in the order they came (its
    schedule's: one generator's columns)."""
    grouped: dict[str, list[Request]] = {}
    for request in requests:
        grouped.setdefault(request.machine, []).append(request)
    return grouped


def workload_values(figures: WorkloadFigures) -> Values:
    """Each phase's and each at-once event's figures, by metric series."""
    values: Values = {}
    for p in figures.phases:
        own: dict[str, float | None] = {
            "room_phase_p50_ms": p.p50_ms, "room_phase_p99_ms": p.p99_ms,
            "room_phase_max_ms": p.max_ms, "room_phase_planned": p.planned,
            "room_phase_answered": p.answered, "room_phase_failed": p.failed,
            "room_phase_timeouts": p.timed_out, "room_phase_unrecorded": p.unrecorded}
        values |= {DECLARATION.series(name, phase=p.phase): value
                   for name, value in own.items()}
    for e in figures.events:
        own = {"room_burst_last_ms": e.last_ms, "room_burst_p50_ms": e.p50_ms,
               "room_burst_unfinished": e.unfinished}
        values |= {DECLARATION.series(name, event=e.event): value
                   for name, value in own.items()}
    return values


def workload_metrics(figures: WorkloadFigures) -> Metrics:
    return DECLARATION.emitted(workload_values(figures))


def workload_notes(figures: WorkloadFigures) -> list[str]:
    """What the pass says beside its rows: machines whose records were not read per
    phase, and at-once events some machines never finished."""
    notes = []
    if figures.unattributed:
        named = list(figures.unattributed.items())[:NAMED_AT_MOST]
        notes.append(f"{len(figures.unattributed)} machine(s) left out of the phases' "
                     f"figures ({'; '.join(f'{m}: {why}' for m, why in named)})")
    notes += [f"at-once event {e.event}: {e.unfinished} of {e.machines} machines never had "
              "the object (its time is the last of those that did)"
              for e in figures.events if e.unfinished]
    return notes

