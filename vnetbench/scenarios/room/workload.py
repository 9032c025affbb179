"""The room under a workload (vnetbench/model/workload.py: the topology's `workload:`, or
`run --workload`) instead of its steady room_rate: what it refuses before anything
starts, each machine's generator with its share of the compiled plan
(scenarios/room/workload_schedule.py), and the pass's rows per phase and per at-once
event (scenarios/room/workload_figures.py), a `phase` or `event` column each; under a
schedule of faults, each event's rows per phase and the at-once events it caught
(scenarios/room/workload_faults.py), a `fault` column beside.

A workload runs on the open loop only (the closed loop keeps no per-request
record). Under a schedule of faults, the rule: every fault is allowed whose target
is not a room machine started again. A switch, the control plane, the backbone
(down, loss, delay, flap, ramp), a partition of the switches: the machines' generators
run on, their requests fail or wait while it holds. The server (killed, started
again or not): its nginx is started anew (scenarios/room/fault_schedule.py), no
machine's generator is. Machines killed for good (`kill: {machines: N}` without
restart_after): each one's share of the plan is cut at its kill before it starts
(workload_schedule.py `until_killed`), its parts with it, as the steady room's
machine asks nothing once switched off. Refused: machines started again
(`kill: {machines: N}` with restart_after, and churn): a machine started again runs
a new generator for the rest of its schedule, and the figures match each machine's
records to its plan by position, one generator's columns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from vnetbench.declared.declaration import Values
from vnetbench.declared.room import DECLARATION, RoomSettings
from vnetbench.errors import UserError
from vnetbench.measure.room_faults import EventWindow, Request
from vnetbench.model.topology import Topology
from vnetbench.model.workload import Workload
from vnetbench.scenarios.base import Metrics
from vnetbench.scenarios.room.open_loop import encode
from vnetbench.scenarios.room.workload_faults import (
    CaughtBurst,
    PhaseFault,
    caught_bursts,
    phase_fault_figures,
)
from vnetbench.scenarios.room.workload_figures import TlsFigures, WorkloadFigures
from vnetbench.scenarios.room.workload_schedule import WorkloadPlan, connection_of, plan_problems

NAMED_AT_MOST = 3  # machines named in a note; the count says the rest
# the fault kinds (vnetbench/model/faults/declared.py Fault.kind) that start a room machine again
RESTARTS_MACHINES = ("machines-restart", "churn")


def workload_problems(topology: Topology, workload: Workload) -> list[str]:
    """Why the room cannot run this workload, one sentence each (none: it can)."""
    room = topology.settings.of(RoomSettings)
    problems = []
    if room.loop != "open":
        problems.append("a workload runs on the open loop (settings.room.loop: open): the "
                        "closed loop keeps no record per request, so no phase's figures "
                        "could be read. Set the loop to open, or leave the workload out.")
    restarting = [f"faults.{n} ({fault.kind})" for n, fault in enumerate(topology.faults)
                  if fault.kind in RESTARTS_MACHINES]
    if restarting:
        problems.append(f"{', '.join(restarting)} starts room machines again, which a "
                        "workload cannot follow: a machine started again runs a new "
                        "generator for the rest of its schedule, and the phases' figures "
                        "match each machine's records to its plan by position. Kill the "
                        "machines for good (drop restart_after), fault a switch, a link, "
                        "the control plane or the server instead, or leave the workload "
                        "out.")
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
            "room_sizes": ",".join(workload.targets),  # a plain workload's: its sizes
            "room_timeout_s": timeout_of(workload, room)}


def timeout_of(workload: Workload | None, room: RoomSettings) -> int:
    """A request's timeout: the workload's when it has one, else room_timeout_s."""
    return workload.timeout_s if workload and workload.timeout_s else room.timeout_s


def workload_argv(plan: WorkloadPlan, room: RoomSettings, workload: Workload, url: str,
                  planned: float, tls_url: str | None = None) -> dict[str, list[str]]:
    """Each machine's open loop (`vnetbench-room open`) with its schedule of the plan;
    a machine the plan asks nothing of has none. `tls_url`: the server's HTTPS, for a
    workload asking over it."""
    connection = connection_of(workload, room.connection)
    assert connection is not None  # check_workload refused a workload mixing them
    sizes = ",".join(plan.targets)
    urls = f"{url},{tls_url}" if tls_url and workload.https else url
    return {machine: ["vnetbench-room", "open", f"{planned:.3f}",
                      str(timeout_of(workload, room)),
                      connection, str(room.connections), urls, sizes, encode(schedule)]
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
        own |= tls_values("room_phase", p.tls)
        values |= {DECLARATION.series(name, phase=p.phase): value
                   for name, value in own.items()}
    for e in figures.events:
        own = {"room_burst_last_ms": e.last_ms, "room_burst_p50_ms": e.p50_ms,
               "room_burst_unfinished": e.unfinished}
        own |= tls_values("room_burst", e.tls)
        values |= {DECLARATION.series(name, event=e.event): value
                   for name, value in own.items()}
    return values


def tls_values(prefix: str, tls: TlsFigures | None) -> dict[str, float | None]:
    """A phase's or event's handshakes, when the workload asks over HTTPS."""
    if tls is None:
        return {}
    return {f"{prefix}_tls_full": tls.full, f"{prefix}_tls_resumed": tls.resumed,
            f"{prefix}_tls_connect_p99_ms": tls.connect_p99_ms}


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
              f"the object{named_in(e.unfinished_machines, e.unfinished)} (its time is the "
              "last of those that did)"
              for e in figures.events if e.unfinished]
    return notes


def named_in(machines: Sequence[str], count: int) -> str:
    """' (agent2, agent5, agent7 and 4 more)': NAMED_AT_MOST named, the count the rest
    ('' when none is known by name)."""
    if not machines:
        return ""
    more = count - min(len(machines), NAMED_AT_MOST)
    return (f" ({', '.join(machines[:NAMED_AT_MOST])}"
            f"{f' and {more} more' if more > 0 else ''})")


def workload_fault_values(phases: Sequence[PhaseFault],
                          caught: Sequence[CaughtBurst]) -> Values:
    """Each fault event's figures per phase it reached (`fault` and `phase` columns),
    and each at-once event it caught (`fault` and `event`)."""
    values: Values = {}
    for p in phases:
        f = p.figures
        own: dict[str, float | None] = {
            "room_fault_phase_requests": f.requests, "room_fault_phase_failed": f.failed,
            "room_fault_phase_timeouts": f.timed_out, "room_fault_phase_p99_ms": f.p99_ms,
            "room_fault_phase_after_p99_ms": f.after_p99_ms,
            "room_fault_phase_recovery_ms": f.recovery_ms}
        own |= tls_values("room_fault_phase", p.tls)
        values |= {DECLARATION.series(name, fault=p.fault, phase=p.phase): value
                   for name, value in own.items()}
    for c in caught:
        own = {"room_fault_burst_last_ms": c.burst.last_ms,
               "room_fault_burst_unfinished": c.burst.unfinished}
        values |= {DECLARATION.series(name, fault=c.fault, event=c.burst.event): value
                   for name, value in own.items()}
    return values


def workload_fault_notes(caught: Sequence[CaughtBurst]) -> list[str]:
    """What the pass says of each at-once event a fault caught."""
    notes = []
    for c in caught:
        b = c.burst
        last = ("no machine had it" if b.last_ms is None else
                f"the last of the {b.done} machines that had it had it {b.last_ms:.0f} ms "
                "after its instant")
        never = (f"; {b.unfinished} of {b.machines} never did"
                 f"{named_in(b.unfinished_machines, b.unfinished)}" if b.unfinished else "")
        notes.append(f"at-once event {b.event}, caught by {c.fault}: {last}{never}")
    return notes


def workload_fault_result(plan: WorkloadPlan, figures: WorkloadFigures,
                          records: Mapping[str, Sequence[Request]],
                          events: Sequence[EventWindow], origin: float,
                          timeout_s: float) -> tuple[Metrics, list[str]]:
    """A workload's rows and notes under its schedule of faults; `origin`: the room's
    instant (epoch seconds), `timeout_s`: a request's timeout (the workload's)."""
    phases = phase_fault_figures(plan, records, events, origin, timeout_s)
    caught = caught_bursts(plan, figures, records, events, origin, timeout_s)
    return (DECLARATION.emitted(workload_fault_values(phases, caught)),
            workload_fault_notes(caught))

