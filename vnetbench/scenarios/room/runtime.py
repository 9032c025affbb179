"""room: a contest room under load. `machines` agents request replies at once from
one server agent on another switch, as contestants fetch statements, submit and
refresh the scoreboard: latency percentiles over every request, failures and
timeouts, each machine's goodput and the room's fairness, and the CPU each role
used meanwhile (the host's too: a saturated host is the limit, not the overlay).

Tools: nginx serves the replies from memory in the server's namespace; each
machine runs `vnetbench-room` in the tools image: by default its open loop (each
request at an instant of a schedule computed here, whatever the replies do), a
switch's machines in one shared generator (generators.py), or with room_loop closed
wrk with one connection in a probe of its own.
Every machine's probe is created first and waits for one instant on the host's
clock, so the whole room starts at once. When the engine starts them slower than
the lead allows, they are removed and started once more with a lead from the pace
measured (the pass says so); when a probe still began after the instant, the pass
says how late.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from vnetbench.core.outcome import Kind, Outcome, Problem, State, single
from vnetbench.core.schema import MACHINES
from vnetbench.declared.declaration import GENERATOR_BEHIND, Values
from vnetbench.declared.room import DECLARATION, ROOM_LATENCY, RoomSettings
from vnetbench.engines.base import LARGEST_CPU_SHARES, EngineError, Mount
from vnetbench.engines.usage import cpu_jiffies
from vnetbench.errors import UserError
from vnetbench.faults.on_stack import ScheduleOutcome, expand_within
from vnetbench.faults.schedule import Schedule, expand
from vnetbench.measure.cpu import cpu_percent, role_percent
from vnetbench.measure.memory import by_role
from vnetbench.measure.probe import save_raw, start_probe, stop_probes
from vnetbench.measure.room import (
    BEHIND_SHARE_OF_GAP,
    CDF_POINTS,
    MachineLoad,
    OpenLoopFigures,
    RoomFigures,
    RoomRecordError,
    joined,
    machines_named,
    parse_machine,
)
from vnetbench.measure.room_faults import Request, requests_of, unsent_during
from vnetbench.model.capabilities import Capability
from vnetbench.model.faults.path import refuse_untouched
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.scenarios.base import Metrics, PassResult, Scenario, ScenarioContext, build_room
from vnetbench.scenarios.resources import CPU_ROLES, MemoryFigures
from vnetbench.scenarios.room.end import BARRIER_PORT, RoomEnd
from vnetbench.scenarios.room.fault_schedule import FaultedRoom, Resume, first_kills
from vnetbench.scenarios.room.faults import room_fault_result
from vnetbench.scenarios.room.generators import (
    Generator,
    generator_prefix,
    generators,
    groups_of,
    is_open_loop,
    machine_text,
    pids_of,
)
from vnetbench.scenarios.room.open_loop import encode, plan_fits, room_schedules, within
from vnetbench.scenarios.room.snapshots import RoomNodes, attributed, take
from vnetbench.scenarios.room.start_gate import StartGate
from vnetbench.scenarios.room.tls import TLS_PORT, server_tls, tls_url
from vnetbench.scenarios.room.workload import (
    by_machine,
    check_workload,
    timeout_of,
    workload_argv,
    workload_fault_result,
    workload_metrics,
    workload_notes,
    workload_settings,
)
from vnetbench.scenarios.room.workload_figures import workload_figures
from vnetbench.scenarios.room.workload_schedule import (
    WorkloadPlan,
    plan_workload,
    until_killed,
)
from vnetbench.terminal.ui import waiting

SERVER = "server"
PORT = 8080
# Probes are started (read, removed) this many at a time; the room's instant is set so
# that the engine has them all waiting by then. The engine's pace moves with the host's load:
# 0.08 s a probe (4 at a time) in 2026-11, 0.16 s and 0.22 s on 2026-12-03 (50 probes
# in 7.8 and 10.9 s; in the latter one began 1.04 s after a 2 + 0.15 x 50 s lead).
# So the lead allows 0.3 s a machine, and more when the pass's own server probe,
# started alone just before, says the engine is slower: twice its share of STARTERS.
# When the engine is slower still (CI, 2026-12-03: one of 50 probes 2.8 s after a 17 s
# lead), the room is started again with twice the pace that start measured.
STARTERS = 4
LEAD_S = 2.0
LEAD_PER_MACHINE_S = 0.3
PACE_HEADROOM = 2.0
SERVER_READY_S = 15.0
# after the load's end, for the probes' last line: a stalled wrk is stopped 3 s after
# it (images/tools/vnetbench-room's STALL_GRACE_S), then prints its record
RECORD_GRACE_S = 6.0
# the open loop's generators stay until the room's end (held), then print and exit
HELD_EXIT_S = 0.5
REFUSED_LOG_LINES = 3  # of a machine whose container died: its last log lines, quoted
LATE_TOLERANCE_S = 1.0  # a machine whose load began later than this makes the pass partial
# the open loop's room sent less than this share of what it planned: partial (issue #37's
# "sends what it planned, within 2 %")
SENT_TOLERANCE = 0.98
# A venue's machines each have their own CPU; here they share the host's with the server,
# the switches' forwarding and the engine. The load's probes (generators) outweigh every
# other container (1024 each) so that they send at their instants, and the shortage, if
# any, falls on what is measured (its latency) rather than on the load offered (the
# generators' lag, which makes a pass partial). docs/reference/scenarios/room.md.
LOAD_CPU_SHARES = LARGEST_CPU_SHARES


@dataclass(frozen=True)
class Load:
    """The room's load as it ran: every machine's record, those without one, CPU."""

    loads: dict[str, MachineLoad]
    without_record: dict[str, str]
    cpu: dict[str, float]  # percent of a core per role during the load
    memory: MemoryFigures  # per role, before the load and halfway through it
    server_cpu: float | None  # percent of a core of the server agent's container
    host_percent: float | None  # the host's CPU busy, percent of all its cores
    planned: float
    lead_s: float
    starting_s: float  # creating and starting every machine's probe took this long
    schedule: ScheduleOutcome | None = None  # the schedule of faults as stamped
    requests: list[Request] = field(default_factory=list)  # the open loop's, each
    notes: list[str] = field(default_factory=list)  # how the probes were started


@dataclass(frozen=True)
class LoadArgv:
    """Every machine's probe for one instant, the last request's offset after it, and
    the probes' bound (timeout(1), from their start)."""

    argv: dict[str, list[str]]
    last_s: float
    bound: float


@dataclass(frozen=True)
class RoomStart:
    """The room's probes as started: for which instant, with what lead, how long the
    engine took, what it refused, and what was done when it was too slow."""

    planned: float
    lead: float
    starting_s: float
    load: LoadArgv
    refused: dict[str, str]
    notes: list[str]


class Room(Scenario):
    declaration = DECLARATION
    shares_stack = True  # its server and machines are probes, removed when the pass ends
    injects_faults = True  # the topology's `faults`, as one schedule during the load
    runs_workload = True  # the topology's `workload`, in place of room_rate
    needs: ClassVar[frozenset[Capability]] = frozenset()

    def stack_topology(self, topology: Topology, overlay: Overlay) -> Topology:
        """`machines` agents on every switch but the last, the server on the last (with
        one switch, the server shares it)."""
        machines = topology.settings.machines
        agents = [{"name": name, "switch": switch} for name, switch in
                  zip(room_machine_names(machines), machine_switches(topology), strict=True)]
        agents.append({"name": SERVER, "switch": topology.switches[-1]})
        room_switches = topology.switches[:-1] or topology.switches
        why = (f"{machines} machines (settings.machines, --machines or BENCH_MACHINES) on "
               f"{len(room_switches)} switch(es) and a server on {topology.switches[-1]}, "
               "one container each (and the open loop's generator per switch)")
        return build_room(topology, self.name, why, "Give fewer machines, or more switches.",
                          agents=agents, agent_pool=1)

    def settings(self, topology: Topology) -> dict[str, object]:
        s = topology.settings
        room = s.of(RoomSettings)
        chosen: dict[str, object] = {
            MACHINES: s.machines, "seconds": s.seconds, "room_loop": room.loop,
            "room_rate": room.rate, "room_sizes": ",".join(str(size) for size in room.sizes),
            "room_connection": room.connection, "room_timeout_s": room.timeout_s}
        if room.loop == "open":
            chosen |= {"room_arrivals": room.arrivals, "room_connections": room.connections}
        if topology.workload is not None:
            del chosen["room_rate"]
            chosen |= workload_settings(topology.workload, room)
        return chosen

    def check(self, topology: Topology) -> None:
        """The room fits its switches and overlay, and each machine's open-loop
        schedule fits in one argument of its probe."""
        super().check(topology)
        room = topology.settings.of(RoomSettings)
        if topology.workload is not None:
            check_workload(topology, topology.workload)
        elif room.loop == "open":
            plan_fits(room.rate, topology.settings.seconds)
        else:
            closed_loop_asks(room.rate, topology.settings.seconds)
        if topology.faults:
            schedule_fits(topology, room)
            refuse_untouched(topology.faults, room_switches(topology), topology.switches,
                             topology.overlay, "room", topology.name,
                             "give the room two switches or more and machines on "
                             "every one but the server's, the last (--machines)")

    @staticmethod
    def schedule(topology: Topology) -> Schedule | None:
        """The topology's faults as the room's schedule (None: no faults)."""
        if not topology.faults:
            return None
        return expand(topology, room_machine_names(topology.settings.machines))

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        stack, topology = context.stack, context.topology
        target = context.overlay.target_address(topology, context.plan, SERVER)
        machines = [a.name for a in topology.agents if a.name != SERVER]
        prefix = f"{stack.rendered.project}-room-{pass_no}"
        server = f"{prefix}-server"
        room = topology.settings.of(RoomSettings)
        schedule = self.schedule(topology)
        plan = None if topology.workload is None else plan_workload(
            topology.workload, machines_named(machines), room.arrivals, pass_no)
        if plan is not None and schedule is not None:  # machines killed for good ask less
            plan = until_killed(plan, first_kills(schedule))
        sizes = [str(size) for size in (plan.sizes if plan else room.sizes)]
        names = {machine: f"{prefix}-{machine}" for machine in machines}
        url = f"http://{target}:{PORT}"
        https = topology.workload is not None and topology.workload.https
        if https and stack.placement_settings():
            return PassResult({}, {}, single(State.NOT_APPLICABLE, Kind.NOT_RUN, (
                "the workload asks over HTTPS, and the server's key is a directory of this "
                "machine mounted into its probe (scenarios/room/tls.py): on several hosts "
                "the server's may not have it. Run it on one host, or over http.")))
        keys = ExitStack()  # the server's TLS key, removed when the pass ends (tls.py)
        mounts: tuple[Mount, ...] = ()
        ports = f"{PORT},{TLS_PORT}" if https else str(PORT)

        def serve(name: str) -> None:
            start_probe(stack, context.container(SERVER),
                        ["vnetbench-room", "server", ports, *sizes], name, remove=False,
                        mounts=mounts)

        # the start gate (start_gate.py) is a file of this machine: one host only
        gate_dir = (None if stack.placement_settings()
                    else stack.rendered.directory / f"room-gate-{pass_no}")
        faulted = None if schedule is None else FaultedRoom(
            context, schedule, prefix, pass_no,
            lambda resume: self.resume(context, resume, url, pass_no), serve)
        try:
            if https:  # made inside the try: whatever ends the pass, `keys` removes it
                mounts = (keys.enter_context(server_tls(stack.run_id, stack.rendered.directory,
                                                        server)),)
            began = time.monotonic()
            serve(server)
            per_machine_s = lead_per_machine_s(time.monotonic() - began)
            problem = self.wait_serving(context, server)
            if problem:
                return PassResult({}, {}, single(State.FAILED, Kind.FAILED, problem))
            nodes = RoomNodes(machines, SERVER, server)
            counted = take(context, nodes, "before")  # nothing is read during the load
            end = None if faulted else self.room_end(context, server, names, url, pass_no,
                                                     plan, f"http://{target}:{BARRIER_PORT}")
            load = self.run_load(context, names, url, pass_no, faulted, plan, per_machine_s,
                                 end, gate_dir)
            counted_after = take(context, nodes, "after")
        except BaseException:
            if faulted is not None:  # no kill or start after this; then the probes go
                faulted.cancel()
            raise
        finally:
            with keys:  # once the server's probes are gone
                self.remove_probes(context, [*names.values(), server,
                                             *(faulted.probes() if faulted else [])])
            if gate_dir is not None:  # once no probe can read it
                shutil.rmtree(gate_dir, ignore_errors=True)
        excused = 0
        if load.schedule is not None:
            excused = unsent_during(load.requests, load.schedule.events)
        pooled = RoomFigures.of(load.loads, load.without_record)
        result = result_of(pooled, load, load_seconds(topology), excused)
        result.notes[:0] = load.notes
        faults = () if load.schedule is None else tuple(
            event.label for event in load.schedule.events if event.start is not None)
        result.notes += attributed(context, nodes, counted, counted_after,
                                   load_seconds(topology), pass_no, pooled, load.loads,
                                   load.server_cpu, load.host_percent, faults)
        with_workload_and_faults(result, load, plan, faulted, timeout_of(topology.workload, room),
                                 lambda: context.last_log_lines(REFUSED_LOG_LINES,
                                                                roles=("agent",)))
        return result

    def wait_serving(self, context: ScenarioContext, server: str) -> str | None:
        """Wait (bounded) for the server's mark; the reason when it never came."""
        deadline = time.monotonic() + SERVER_READY_S
        text = ""
        while time.monotonic() < deadline:
            text = probe_log(context, server)
            if "vnetbench-room: serving" in text:
                time.sleep(0.3)  # nginx binds right after the mark
                return None
            time.sleep(0.2)
        return (f"the room's server (nginx) did not start within {SERVER_READY_S:g} s: "
                f"{text.strip()[-300:] or 'no output'}")

    def run_load(self, context: ScenarioContext, names: dict[str, str], url: str,
                 pass_no: int, faulted: FaultedRoom | None = None,
                 plan: WorkloadPlan | None = None,
                 per_machine_s: float = LEAD_PER_MACHINE_S, end: RoomEnd | None = None,
                 gate_dir: Path | None = None) -> Load:
        """Create every machine's probe, let them start at one instant (the schedule of
        faults staged before it, fired from it), read CPU at its start and end, then
        their records. `plan`: a workload's schedules in place of the steady rate's;
        `per_machine_s`: the lead each machine's probe is given to start; `end`: the
        room's end, when it has one (the open loop without faults); `gate_dir`: where
        the start gate's file goes (start_gate.py; None: the lead is waited out)."""
        stack, settings = context.stack, context.topology.settings
        room = settings.of(RoomSettings)
        fault_lead = faulted.lead_s if faulted else 0.0
        lead = LEAD_S + per_machine_s * probe_starts(context.topology, names) + fault_lead
        seconds = load_seconds(context.topology)
        pace = (f"at {room.rate:g}/s each" if plan is None
                else f"in {len(plan.phases)} phases of a workload")
        with waiting(f"pass {pass_no}: {len(names)} machines request from the server "
                     f"{pace}", lead + seconds):
            start = self.start_room(context, names, lambda planned, lead: self.load_argv(
                context, names, url, pass_no, faulted, plan, planned, lead,
                end.url if end else None), lead, fault_lead, gate_dir)
            planned, lead, last_s = start.planned, start.lead, start.load.last_s
            if faulted:
                faulted.stage(planned, planned + last_s, planned - lead + start.load.bound)
                faulted.fire()
            time.sleep(max(0.0, planned - time.time()))
            server = {context.container(SERVER)}
            idle = by_role(stack.memory_by_role())
            before = (*stack.cpu_readings(server), cpu_jiffies())
            at = time.time()
            time.sleep(max(0.0, planned + seconds / 2 - time.time()))
            loaded = by_role(stack.memory_by_role())
            time.sleep(max(0.0, planned + seconds - time.time()))
            after = (*stack.cpu_readings(server), cpu_jiffies())
            seconds = time.time() - at
        roles, _ = role_percent(before[0], after[0], seconds)
        server_cpu = cpu_percent(before[1], after[1], seconds)
        ends = planned + last_s + timeout_of(context.topology.workload, room)
        outcome = None
        if faulted:
            with waiting("reading where and when each fault took effect", 2):
                outcome = faulted.finish()
        started = {m: [*([n] if m in start.load.argv else []),
                       *(faulted.resumed.get(m, []) if faulted else [])]
                   for m, n in names.items() if m not in start.refused}
        started = {m: probes for m, probes in started.items() if probes}
        with waiting(f"pass {pass_no}: the room's last requests, then every machine's "
                     "record", max(0.0, ends + HELD_EXIT_S - time.time())):
            if end is not None:  # every generator released: nothing is left in flight
                ends = min(ends, end.wait(ends) or ends)
            loads, missing, requests = self.records(context, started, ends, pass_no)
        missing |= self.with_last_lines(context, start.refused)
        return Load(loads, missing, {r: v for r, v in roles.items() if r in CPU_ROLES},
                    MemoryFigures(idle, loaded),
                    next(iter(server_cpu.values()), None),
                    host_busy_percent(before[2], after[2], seconds), planned, lead,
                    start.starting_s, outcome, requests, start.notes)

    def load_argv(self, context: ScenarioContext, names: dict[str, str], url: str,
                  pass_no: int, faulted: FaultedRoom | None, plan: WorkloadPlan | None,
                  planned: float, lead: float, barrier: str | None = None) -> LoadArgv:
        """Each machine's probe for a load from `planned`, bounded by timeout(1);
        `barrier`: the room's end's URL (end.py), for the open loop."""
        settings = context.topology.settings
        room = settings.of(RoomSettings)
        if plan is not None and context.topology.workload is not None:
            argv = workload_argv(plan, room, context.topology.workload, url, planned,
                                 tls_url(url))
            last_s = plan.last_s
        elif room.loop == "open":
            spans = {m: (0.0, faulted.first_span(m) if faulted else math.inf)
                     for m in names}
            argv, last_s = open_argv(machines_named(names), room, settings.seconds, url,
                                     planned, pass_no, spans)
        else:
            argv, last_s = closed_argv(machines_named(names), room, settings.seconds, url,
                                       planned)
        timeout = timeout_of(context.topology.workload, room)
        if room.loop == "open":  # a workload's too: it runs on the open loop only
            argv = held(argv, planned + last_s + timeout, barrier)
        # the closed loop's bound as it always was: wrk stops itself after its seconds
        span_s = last_s if room.loop == "open" else settings.seconds
        bound = lead + span_s + timeout + RECORD_GRACE_S + 10
        return LoadArgv({machine: ["timeout", "-k", "2", str(int(bound)), *tool]
                         for machine, tool in argv.items()}, last_s, bound)

    def start_room(self, context: ScenarioContext, names: dict[str, str],
                   argv_for: Callable[[float, float], LoadArgv], lead: float,
                   fault_lead: float, gate_dir: Path | None = None) -> RoomStart:
        """Start every machine's probe for an instant `lead` from now, or sooner
        through the start gate once all are up (`gate_dir`, start_gate.py). When the
        engine is too slow for that lead (a start not done `fault_lead` before the
        instant), the probes are removed and started once more, the lead from the pace
        this start measured (PACE_HEADROOM, at least that times the lead missed); a
        second miss is left to the records (the pass says how late)."""
        planned = time.time() + lead
        load = argv_for(planned, lead)
        began = time.monotonic()
        with start_gate(gate_dir, "first") as gate:
            refused, done = self.start_machines(context, names, gated(load.argv, gate),
                                                planned - fault_lead, gate)
            starting_s = time.monotonic() - began
            if done == len(load.argv) and time.time() <= planned - fault_lead:
                early = gate.open_early(planned, len(names), fault_lead) if gate else planned
                return RoomStart(early, lead - (planned - early), starting_s, load, refused,
                                 [])
        slower = max(lead * PACE_HEADROOM, LEAD_S + fault_lead + PACE_HEADROOM
                     * starting_s / max(1, done) * len(names))
        note = (f"the engine started {done} of {len(load.argv)} probes in {starting_s:.1f} "
                f"s, too slow for the {lead:.1f} s lead: they were removed and the room "
                f"started again with a lead of {slower:.1f} s")
        self.remove_probes(context, list(names.values()))
        planned = time.time() + slower
        load = argv_for(planned, slower)
        began = time.monotonic()
        with start_gate(gate_dir, "again") as gate:
            refused, _ = self.start_machines(context, names, gated(load.argv, gate),
                                             math.inf, gate)
            starting_s = time.monotonic() - began
            early = (gate.open_early(planned, len(names), fault_lead)
                     if gate and time.time() <= planned - fault_lead else planned)
        return RoomStart(early, slower - (planned - early), starting_s, load, refused, [note])

    def start_machines(self, context: ScenarioContext, names: dict[str, str],
                       argv: dict[str, list[str]], start_by: float,
                       gate: StartGate | None = None) -> tuple[dict[str, str], int]:
        """Each machine's probe started, STARTERS at a time, none begun after
        `start_by` (epoch seconds); (the machines the engine refused, how many started
        or refused). The open loop's machines share a generator per switch
        (generators.py): `names` then has each machine's generator."""
        if argv and all(is_open_loop(command) for command in argv.values()):
            return self.start_generators(context, names, argv, start_by, gate)

        def start(item: tuple[str, str]) -> tuple[bool, tuple[str, str] | None]:
            machine, name = item
            if time.time() > start_by:
                return False, None
            return True, self.start_machine(context, machine, argv[machine], name,
                                            (gate.mount,) if gate else ())

        with ThreadPoolExecutor(max_workers=STARTERS) as pool:
            tried = list(pool.map(start, [(m, n) for m, n in names.items() if m in argv]))
        return dict(said for _, said in tried if said), sum(1 for went, _ in tried if went)

    def start_generators(self, context: ScenarioContext, names: dict[str, str],
                         argv: dict[str, list[str]], start_by: float,
                         gate: StartGate | None = None) -> tuple[dict[str, str], int]:
        """As start_machines, a generator per switch's machines (each machine's name in
        `names` made its generator's); a machine without a running container is
        refused, as the engine refuses its own probe."""
        machines = [m for m in names if m in argv]
        container_of = {m: context.container(m) for m in machines}
        machine_of = {container: m for m, container in container_of.items()}
        listed = [c for c in context.stack.containers("agent") if c.name in machine_of]
        pids = pids_of(context.stack.engine.inspect(listed), machine_of)
        place = {machine_of[c.name]: c.where for c in listed}
        switch_of = {agent.name: agent.switch for agent in context.topology.agents}
        prefix = generator_prefix(names[machines[0]], machines[0])
        made = generators(prefix, groups_of(machines, switch_of, place), argv, pids,
                          container_of)
        refused = {m: "its container is not running" for m in machines if m not in pids}

        def start(made: Generator) -> tuple[bool, dict[str, str]]:
            if time.time() > start_by:
                return False, {}
            said = self.start_machine(context, made.machines[0], list(made.argv), made.name,
                                      (gate.mount,) if gate else (), shared=True)
            return True, {} if said is None else dict.fromkeys(made.machines, said[1])

        for each in made:
            names.update(dict.fromkeys(each.machines, each.name))
        with ThreadPoolExecutor(max_workers=STARTERS) as pool:
            tried = list(pool.map(start, made))
        for _, said in tried:
            refused |= said
        done = sum(len(each.machines) for each, (went, _) in zip(made, tried, strict=True)
                   if went)
        return refused, done + len(machines) - len(pids)

    @staticmethod
    def remove_probes(context: ScenarioContext, names: list[str]) -> None:
        stop_probes(context.stack, list(dict.fromkeys(names)))

    def resume(self, context: ScenarioContext, resume: Resume, url: str,
               pass_no: int) -> bool:
        """A machine the schedule started again: a generator for its requests due from
        then on (False: none due, or it would not start)."""
        topology = context.topology
        room = topology.settings.of(RoomSettings)
        machine = resume.machine
        argv, _ = open_argv([machine], room, topology.settings.seconds, url, resume.zero,
                            pass_no, {machine: (resume.from_s, resume.until_s)},
                            [a.name for a in topology.agents if a.name != SERVER])
        if not argv:
            return False
        argv = held(argv, resume.load_end + timeout_of(topology.workload, room))
        bound = max(1, int(resume.bound_at - time.time()))
        return self.start_machine(context, machine,
                                  ["timeout", "-k", "2", str(bound), *argv[machine]],
                                  resume.name) is None

    @staticmethod
    def start_machine(context: ScenarioContext, machine: str, argv: list[str],
                      name: str, mounts: tuple[Mount, ...] = (),
                      shared: bool = False) -> tuple[str, str] | None:
        """Start one machine's probe (`shared`: a generator of its switch's machines,
        beside this one); (machine, what the engine said) when it refused (the
        machine's container is not running: it died at bring-up)."""
        try:
            start_probe(context.stack, context.container(machine), argv, name, remove=False,
                        mounts=mounts, enters_namespaces=shared, cpu_shares=LOAD_CPU_SHARES)
            return None
        except EngineError as error:
            said = (getattr(error, "stderr", "") or str(error)).strip().splitlines()
            return machine, said[0] if said else "the engine refused"

    @staticmethod
    def with_last_lines(context: ScenarioContext, refused: dict[str, str]) -> dict[str, str]:
        """Each refused machine's reason with its container's last log line."""
        if not refused:
            return {}
        # three lines: a program's error is often followed by its wrapper's own line
        last = context.last_log_lines(REFUSED_LOG_LINES, roles=("agent",))
        return {machine: f"its probe could not start ({said}); its log ends: "
                f"{' | '.join(last.get(machine) or ['no log'])}"
                for machine, said in refused.items()}

    def room_end(self, context: ScenarioContext, server: str, names: dict[str, str],
                 url: str, pass_no: int, plan: WorkloadPlan | None,
                 barrier: str) -> RoomEnd | None:
        """The open loop's end, its barrier started in the server's probe before any
        machine's (None for the closed loop: wrk ends by itself)."""
        room = context.topology.settings.of(RoomSettings)
        if plan is None and room.loop != "open":
            return None
        machines = len(self.load_argv(context, names, url, pass_no, None, plan, 0.0, 0.0).argv)
        return RoomEnd(context.stack, server, machines, barrier).start()

    def records(self, context: ScenarioContext, names: dict[str, list[str]], ends: float,
                pass_no: int) -> tuple[dict[str, MachineLoad], dict[str, str], list[Request]]:
        """Every machine's record, waiting (bounded) for the last; the raw output kept.
        A machine whose wrk failed (it could not connect at all) has none. A machine the
        schedule of faults started again ran a generator per span it was up: their
        records are joined. The open loop's requests, each on the host's clock."""
        time.sleep(max(0.0, ends + HELD_EXIT_S - time.time()))
        deadline = time.time() + RECORD_GRACE_S
        loads: dict[str, MachineLoad] = {}
        missing: dict[str, str] = {}
        requests: dict[str, tuple[Request, ...]] = {}
        pending = machines_named(names)
        while pending:
            read = read_records(context, {m: names[m] for m in pending})
            for machine in pending:
                texts = read[machine]
                for number, text in enumerate(texts, start=1):
                    suffix = "" if number == 1 else f"-{number}"
                    save_raw(context.raw_dir / f"room-pass{pass_no}-{machine}{suffix}.txt",
                             text)
                try:
                    record = joined(texts)
                    loads[machine] = parse_machine(record)
                    missing.pop(machine, None)
                    if loads[machine].generator is not None:
                        requests[machine] = requests_of(machine, record)
                except RoomRecordError as error:
                    missing[machine] = str(error)
            pending = [machine for machine in pending if machine in missing]
            if not pending or time.time() >= deadline:
                break
            time.sleep(1.0)
        for machine in [m for m, load in loads.items() if load.error]:
            missing[machine] = loads.pop(machine).error or "wrk failed"
            requests.pop(machine, None)
        return loads, missing, [r for found in requests.values() for r in found]


def machine_switches(topology: Topology) -> list[str]:
    """Each room machine's switch: every switch but the last in turn (the server's;
    with one switch, the server shares it)."""
    room_switches = topology.switches[:-1] or topology.switches
    return [room_switches[n % len(room_switches)] for n in range(topology.settings.machines)]


def room_switches(topology: Topology) -> set[str]:
    """The switches the room's load crosses: its machines' and its server's."""
    return {*machine_switches(topology), topology.switches[-1]}


def closed_loop_asks(rate: float, seconds: float) -> None:
    """Refuse a closed loop whose pause is a pass or longer: wrk waits 1/rate before
    every request, its first too (delay() runs before the first write), so each
    machine would send nothing, and the pass measure an empty room."""
    if rate > 0 and rate * seconds <= 1:
        raise UserError(
            f"room_rate {rate:g} with seconds {seconds:g}: the closed loop waits 1/rate "
            f"({1 / rate:g} s) before each request, the first included, so no machine would "
            f"send a request in a pass of {seconds:g} s. Give room_rate above {1 / seconds:g}, "
            f"seconds above {1 / rate:g}, or room_loop: open (its first request is at 0).")


def closed_argv(machines: list[str], room: RoomSettings, seconds: float, url: str,
                planned: float) -> tuple[dict[str, list[str]], float]:
    """Each machine's wrk loop (`vnetbench-room client`), and the last one's end in
    seconds after the room's instant."""
    spread = phases(machines, room.rate)
    argv = {machine: ["vnetbench-room", "client", f"{planned + phase:.3f}", f"{seconds:g}",
                      f"{room.rate:g}", room.connection, str(room.timeout_s), url,
                      *(str(size) for size in room.sizes)]
            for machine, phase in spread.items()}
    return argv, max(spread.values()) + seconds


def open_argv(machines: list[str], room: RoomSettings, seconds: float, url: str,
              planned: float, pass_no: int,
              spans: Mapping[str, tuple[float, float]] | None = None,
              room_machines: list[str] | None = None) -> tuple[dict[str, list[str]], float]:
    """Each machine's open loop (`vnetbench-room open`) with its schedule, and the last
    request's instant in seconds after the room's. `spans`: a machine's requests only
    those due in [from, until) (a schedule of faults kills it; none due: no argv);
    `room_machines`: the whole room, when `machines` is a part of it (each machine's
    schedule depends on its place in the room)."""
    room_machines = room_machines or machines
    schedules = room_schedules(room_machines, room.rate, seconds, len(room.sizes),
                               room.arrivals, pass_no)
    sizes = ",".join(str(size) for size in room.sizes)
    argv = {}
    for machine in machines:
        schedule = schedules[machine]
        if spans and machine in spans:
            schedule = within(schedule, *spans[machine])
        if len(schedule):
            argv[machine] = ["vnetbench-room", "open", f"{planned:.3f}", str(room.timeout_s),
                             room.connection, str(room.connections), url, sizes,
                             encode(schedule)]
    return argv, max((schedules[m].last_s for m in machines), default=0.0)


@contextmanager
def start_gate(directory: Path | None, attempt: str) -> Iterator[StartGate | None]:
    """A start gate in `directory`/`attempt` (a gate a start of the room's), let go
    on leaving whatever happened; None without a directory."""
    if directory is None:
        yield None
        return
    with StartGate(directory / attempt) as gate:
        yield gate


def gated(argv: dict[str, list[str]], gate: StartGate | None) -> dict[str, list[str]]:
    """Each probe's command with the gate's option before vnetbench-room's subcommand."""
    if gate is None:
        return argv
    tool = "vnetbench-room"
    return {machine: [*command[:command.index(tool) + 1], *gate.argv_prefix(),
                      *command[command.index(tool) + 1:]]
            for machine, command in argv.items()}


def held(argv: dict[str, list[str]], until: float,
         barrier: str | None = None) -> dict[str, list[str]]:
    """Each open-loop generator told to stay until `until` (epoch seconds: the room's
    last request's deadline) once its own requests have ended, or until `barrier` (a
    URL: end.py) releases it. A probe's exit costs the engine CPU: measured on 2
    cores (WireGuard, 10 to 40 machines), each machine's last request took 2-5 ms
    while no machine had ended and up to 380 ms once the first had, the room's whole
    p99 (every request in its top 1 % was a last one)."""
    return {machine: [*tool, f"{until:.3f}", *([barrier] if barrier else [])]
            for machine, tool in argv.items()}


def phases(machines: list[str], rate: float) -> dict[str, float]:
    """Each machine's first request, seconds after the room's instant: spread evenly
    over one pause (1/rate), as a room's machines are not in step. All at once, their
    closed loops would stay in step, every request of the room a burst together."""
    gap = 1 / rate / len(machines) if rate > 0 and machines else 0.0
    return {machine: index * gap for index, machine in enumerate(machines)}


def probe_log(context: ScenarioContext, name: str) -> str:
    try:
        return context.stack.engine.logs(name)
    except EngineError:
        return ""


def probe_starts(topology: Topology, names: Mapping[str, str]) -> int:
    """How many probes the engine starts for the room's machines: the open loop's
    generators (a switch's machines share one, generators.py), or one a machine."""
    if topology.settings.of(RoomSettings).loop != "open":
        return len(names)
    switch_of = {agent.name: agent.switch for agent in topology.agents}
    return len(groups_of(list(names), switch_of, {}))


def read_records(context: ScenarioContext,
                 names: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each machine's part of each of its probes' logs; a log shared by a switch's
    machines (generators.py) is read once."""
    unique = sorted({name for probes in names.values() for name in probes})
    with ThreadPoolExecutor(max_workers=STARTERS) as readers:  # 50 logs: 50 calls
        logs = dict(zip(unique, readers.map(lambda name: probe_log(context, name), unique),
                        strict=True))
    return {machine: [machine_text(logs[name], machine) for name in probes]
            for machine, probes in names.items()}


def host_busy_percent(before: int, after: int, seconds: float) -> float | None:
    """The host's busy share of all its cores between two /proc/stat readings."""
    cores = os.cpu_count() or 1
    tick = os.sysconf("SC_CLK_TCK")
    return 100 * (after - before) / tick / seconds / cores if seconds > 0 else None


def lead_per_machine_s(start_call_s: float) -> float:
    """The lead a machine's probe is given: the floor, or the engine's pace as one
    probe's start measured it (STARTERS at a time), with headroom."""
    return max(LEAD_PER_MACHINE_S, PACE_HEADROOM * start_call_s / STARTERS)


def result_of(room: RoomFigures, load: Load, seconds: float, excused: int = 0) -> PassResult:
    """The pass's rows, summary and state; `excused`: requests never sent because the
    faults of the schedule held their connections (not the generator's shortfall)."""
    metrics = room_metrics(room, load)
    summary: dict[str, float | int | str | None] = {
        "machines": room.machines, "p50_ms": room.percentile_ms(50),
        "p99_ms": room.percentile_ms(99), "failed": room.failed,
        "goodput_mbit": room.goodput_mbit, "fairness": room.fairness}
    total = room.machines + len(room.without_record)
    if room.machines == 0 or room.answered == 0:
        why = next(iter({**room.stalled, **room.without_record}.values()),
                   "every request failed or timed out")
        state = State.DEAD if room.machines else State.FAILED
        return PassResult(metrics, summary, single(
            state, Kind.DEAD if state is State.DEAD else Kind.FAILED,
            f"no request of {total} machines was answered: {why}"))
    problems = []
    if room.without_record:
        first = next(iter(room.without_record.items()))
        problems.append(f"{len(room.without_record)} of {total} machines gave no record "
                        f"({first[0]}: {first[1]})")
    if room.stalled:
        first = next(iter(room.stalled.items()))
        problems.append(f"{len(room.stalled)} of {total} machines stalled ({first[0]}: "
                        f"{first[1]})")
    if room.late_s > LATE_TOLERANCE_S:
        late = sum(1 for m in load.loads.values() if m.late_s > LATE_TOLERANCE_S)
        problems.append(f"the load began late on {late} machine(s), up to {room.late_s:.1f} s "
                        f"after the room's instant (the engine started the probes slower "
                        f"than {load.lead_s:.0f} s allowed): they overlapped for less than "
                        f"{seconds:g} s")
    notes = []
    if room.open_loop:
        problems += open_loop_problems(room.open_loop, room.machines, excused)
        if excused:
            notes.append(f"{excused} request(s) were never sent: due once the faults "
                         "began, they waited for a connection the faults held until they "
                         "timed out (not counted against the room's sent share)")
    return PassResult(metrics, summary, Outcome(State.PARTIAL, [
        Problem(Kind.PARTIAL, p) for p in problems]) if problems else Outcome(), notes)


def with_workload_and_faults(result: PassResult, load: Load, plan: WorkloadPlan | None,
                             faulted: FaultedRoom | None, timeout_s: float,
                             last_lines: Callable[[], Mapping[str, list[str]]]) -> None:
    """The workload's rows, the schedule of faults', and under both each event's rows
    per phase and the at-once events it caught; `timeout_s`: a request's timeout as
    the load ran (the workload's when it has one: the band leaves out what failed
    within it before a fault)."""
    figures = None
    if plan is not None:
        figures = workload_figures(plan, by_machine(load.requests))
        result.metrics |= workload_metrics(figures)
        result.notes += workload_notes(figures)
    if faulted is None or load.schedule is None:
        return
    with_faults(result, load, faulted, last_lines, timeout_s)
    if plan is not None and figures is not None:
        metrics, notes = workload_fault_result(plan, figures, by_machine(load.requests),
                                               load.schedule.events, load.planned, timeout_s)
        result.metrics |= metrics
        result.notes += notes


def with_faults(result: PassResult, load: Load, faulted: FaultedRoom,
                last_lines: Callable[[], Mapping[str, list[str]]], timeout_s: float) -> None:
    """The schedule of faults' rows, timeline and words added to the pass; a fault not
    stamped as planned makes it partial; the services it killed are not its failure."""
    outcome = load.schedule
    assert outcome is not None
    metrics, series, words = room_fault_result(load.requests, outcome.events, load.planned,
                                               outcome.declared, last_lines, timeout_s)
    result.metrics |= metrics
    result.series += series
    result.notes += words + outcome.notes
    result.fault_killed |= faulted.killed
    if outcome.problems:
        problems = [Problem(Kind.PARTIAL, p) for p in outcome.problems]
        state = State.PARTIAL if result.state is State.OK else result.state
        result.outcome = Outcome(state, [*result.outcome.problems, *problems])


def open_loop_problems(generators: OpenLoopFigures, machines: int,
                       excused: int = 0) -> list[str]:
    """Why the open loop's pass is partial: a generator fell behind its schedule (its
    lag is in every latency), or the room sent too little of what it planned (less
    `excused`: those a fault's held connection kept from being sent)."""
    problems = []
    if generators.behind:
        first = next(iter(generators.behind.items()))
        problems.append(f"{GENERATOR_BEHIND} on {len(generators.behind)} "
                        f"of {machines} machines ({first[0]}: {first[1]}; over "
                        f"{BEHIND_SHARE_OF_GAP:.0%} of the gap, the planned arrivals are "
                        "not kept: the host's CPU is short)")
    if generators.planned and generators.sent + excused < SENT_TOLERANCE * generators.planned:
        problems.append(f"the room sent {generators.sent} of {generators.planned} planned "
                        f"requests ({generators.sent_percent:.1f} %, under "
                        f"{SENT_TOLERANCE:.0%}): the rest timed out waiting for a "
                        f"connection or could not connect ({generators.waited} waited for "
                        "one)")
    return problems


def room_metrics(room: RoomFigures, load: Load) -> Metrics:
    metrics = DECLARATION.emitted({
        "room_p50_ms": room.percentile_ms(50),
        "room_p95_ms": room.percentile_ms(95),
        "room_p99_ms": room.percentile_ms(99),
        "room_max_ms": room.percentile_ms(100),
        "room_failed": room.failed,
        "room_timeouts": room.errors["timeout"],
        "room_answered": room.answered,
        "room_requests_per_s": room.requests_per_s,
        "room_goodput_mbit": room.goodput_mbit,
        "room_fairness": room.fairness,
        "room_goodput_min_mbit": min(room.goodputs_mbit, default=None),
        "room_machines": room.machines,
        "room_no_record": len(room.without_record),
        "room_stalled": len(room.stalled),
        "room_late_s": room.late_s,
        "room_probes_start_s": load.starting_s,
        "room_probes_lead_s": load.lead_s,
        "room_host_cpu_percent": load.host_percent,
        "room_cpu_server_percent": load.server_cpu,
    })
    generators = room.open_loop
    if generators:
        metrics |= DECLARATION.emitted({
            "room_planned": generators.planned,
            "room_sent": generators.sent,
            "room_sent_percent": generators.sent_percent,
            "room_behind_p99_ms": generators.lag_ms(99),
            "room_behind_max_ms": generators.lag_ms(100),
            "room_waited": generators.waited,
            "room_reopened": generators.reopened,
            "room_generator_cpu_s_per_1000": generators.cpu_s_per_1000,
            "room_generator_mib": generators.max_rss_mib,
        })
    metrics |= load.memory.metrics()  # memory per role (scenarios/resources.py)
    values: Values = {DECLARATION.series("room_cpu_percent", role=role): value
                      for role, value in load.cpu.items()}
    values |= {DECLARATION.series(ROOM_LATENCY, quantile=f"{point:g}"): room.percentile_ms(point)
               for point in CDF_POINTS}
    return metrics | DECLARATION.emitted(values)


def load_seconds(topology: Topology) -> float:
    """How long the room's load runs: its workload's phases, else `seconds`."""
    return topology.workload.seconds if topology.workload else topology.settings.seconds


def room_machine_names(machines: int) -> list[str]:
    """The room's machines as stack_topology names them."""
    return [f"agent{n + 1}" for n in range(machines)]


def schedule_fits(topology: Topology, room: RoomSettings) -> None:
    """A schedule of faults runs on the open loop only (the closed loop keeps no
    per-request record), fits the room (machines to kill, switches), and ends within
    the load."""
    if room.loop != "open":
        raise UserError(f"Topology '{topology.name}': a room under faults needs the open "
                        "loop (settings.room.loop: open): the closed loop keeps no record "
                        "per request, so no fault's figures can be read. Set the loop to "
                        "open, or leave the faults out.")
    expand_within(topology, room_machine_names(topology.settings.machines),
                  "the room's load",
                  topology.workload.seconds if topology.workload else None)
