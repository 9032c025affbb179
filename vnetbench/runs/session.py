"""A run: allocate, render, bring up, measure pass by pass, always tear down.

Everything goes under one run directory: compose.yml, raw tool output,
container logs, results.{parquet,csv,txt} and run.json.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from vnetbench.addressing import AddressPlan, plan_addresses
from vnetbench.allocation import BlockClaim, claimed_block
from vnetbench.engines import engine_for, require_engine
from vnetbench.engines.base import RenderedRun
from vnetbench.engines.build import build_project_images
from vnetbench.engines.stack import Stack
from vnetbench.labels import current_owner, detached_owner
from vnetbench.lifecycle import Prepared, StackSpec, prepare, running, start
from vnetbench.measure.cpu import host_sample, outside_cores
from vnetbench.measure.events import events_frame, write_events
from vnetbench.metrics import OUTSIDE_LOAD, SKIPPED
from vnetbench.outcome import Applicable, NotRunnable, State
from vnetbench.overlays import Overlay, overlay_for
from vnetbench.results import ResultSet, result_line
from vnetbench.rundir import RunLayout, new_run_id, slug
from vnetbench.runrecord import TIMING_PARTS, Links, RunRecord, new_record, recorded
from vnetbench.scenarios import Scenario, ScenarioContext
from vnetbench.scenarios.base import PassResult
from vnetbench.schema import BACKBONE_LINKS, SITE_LINKS, CellKey, Variant
from vnetbench.shaping.apply import ShapingKeeper
from vnetbench.topology import Topology
from vnetbench.ui import note, out_console, step_done


def link_record(topology: Topology) -> Links:
    """run.json's links: the declared profiles; `applied` is filled per stack from
    what the kernel reports back (shaping.apply.read_back)."""
    declared = {name: profile.model_dump(mode="json")
                for name, profile in (("site", topology.links.site),
                                      ("backbone", topology.links.backbone))
                if profile.is_shaped or not profile.offloads or profile.mtu}
    declared |= {f"agent {a.name}": a.link.model_dump(mode="json")
                 for a in topology.agents if a.link}
    return Links(declared=declared, applied={})


def link_settings(topology: Topology) -> dict[str, object]:
    """Result columns for the links a measurement ran on (set_site, set_backbone)."""
    return {SITE_LINKS: topology.links.site.describe(),
            BACKBONE_LINKS: topology.links.backbone.describe()}


def new_run_directory(topology: Topology, out_dir: Path) -> tuple[str, Path]:
    run_id = new_run_id(topology.name)
    directory = out_dir / run_id
    directory.mkdir(parents=True)
    return run_id, directory


def bring_up_detached(topology: Topology, overlay: Overlay, out_dir: Path,
                      claim: BlockClaim) -> RenderedRun:
    """`vnetbench up`: a new run directory, brought up and shaped, left running; on
    any failure torn down. Another block when the engine refuses the first."""
    prepared = prepare(topology, overlay)
    run_id, directory = new_run_directory(prepared.topology, out_dir)
    record = up_record(run_id, directory, prepared, claim)

    def moved(refused: IPv4Network, claimed: IPv4Network) -> None:
        record_moved_block(record, directory, refused, claimed, prepared.topology)

    spec = StackSpec(prepared, run_id, directory, detached_owner("vnetbench up"),
                     block_moved=moved)
    stack = start(spec, claim)
    record.hosts = stack.where_record()
    record.links.applied["up"] = spec.applied
    record.save(directory)
    return stack.rendered


def up_record(run_id: str, directory: Path, prepared: Prepared,
              claim: BlockClaim) -> RunRecord:
    """run.json for a topology left running by `vnetbench up` (read by `shape`)."""
    plan = plan_addresses(prepared.topology, run_id, claim.block)
    record = start_record(directory, run_id, plan, prepared.topology, prepared.overlay, [])
    record.status = "up"
    if claim.refused:  # blocks refused before this run (by an earlier stack)
        record.address_blocks_refused = [str(b) for b in claim.refused]
    record.save(directory)
    return record


def start_record(directory: Path, run_id: str, plan: AddressPlan, topology: Topology,
                 overlay: Overlay, scenarios: list[Scenario]) -> RunRecord:
    record = new_record(
        "run", [overlay],
        run_id=run_id,
        scenarios=[s.name for s in scenarios],
        address_block=str(plan.block),
        networks=network_record(plan),
        topology=topology.model_dump(mode="json"),
        links=link_record(topology),
    )
    record.save(directory)
    return record


@dataclass(frozen=True)
class Task:
    """A scenario's passes in one topology's settings. Consecutive tasks of the same
    `group` whose topologies differ only in measurement settings share a stack (a
    method's steps); a task without a group gets its own (join: one per pass)."""

    scenario: Scenario
    topology: Topology
    variant: str | None = None  # a step's label: its rows' variant (None: the run's)
    group: str | None = None
    remark: str = ""  # how the overlay adjusted the settings (filled in by run_tasks)
    rows_variant: Variant = field(default_factory=Variant)  # (filled in by run_tasks)

    def cell(self, run_id: str) -> CellKey:
        """The cell its rows belong to."""
        return CellKey(run_id, self.scenario.name, self.topology.overlay, self.rows_variant)

    @property
    def directory_name(self) -> str:
        """The task's folder in the run directory: the scenario, or the step's slug."""
        return self.scenario.name if self.variant is None else slug(self.variant)


def run_scenarios(topology: Topology, scenarios: list[Scenario], out_dir: Path,
                  results: ResultSet | None = None, overlay: Overlay | None = None,
                  variant: Variant | None = None) -> Path:
    """Run each scenario's passes on its own stack; return the run directory."""
    return run_tasks([Task(s, topology) for s in scenarios], out_dir, results, overlay,
                     variant)


def run_tasks(tasks: list[Task], out_dir: Path, results: ResultSet | None = None,
              overlay: Overlay | None = None, variant: Variant | None = None) -> Path:
    """Run the tasks' passes into one run directory; return it.

    Rows go to `results` when given (the matrix's shared set), else to a
    result set in the run directory; they carry `variant` (a step's: its label as
    the name). A scenario the overlay does not support
    gives one row per pass saying why, without starting anything. `overlay` is the
    run's configured adapter (made from the first topology when not given).
    """
    for task in tasks:
        task.scenario.check(task.topology)
    require_engine()
    overlay = overlay or overlay_for(tasks[0].topology)
    overlay.require_available()  # run() and sweep() check every overlay first
    engine = engine_for(tasks[0].topology)  # a swarm: found and checked before anything starts
    images = build_project_images()
    variant = variant or Variant()
    tasks = [prepared_task(prepare(task.topology, overlay, engine, images,
                                   refuse_unsupported=False), task, variant.step(task.variant))
             for task in tasks]
    topology = tasks[0].topology
    run_id, directory = new_run_directory(topology, out_dir)
    if results is None:
        results = ResultSet(directory)
    with claimed_block() as claim:  # kept for every stack of the run
        plan = plan_addresses(topology, run_id, claim.block)
        record = start_record(directory, run_id, plan, topology, overlay,
                              list({t.scenario.name: t.scenario for t in tasks}.values()))
        if any(t.variant for t in tasks):
            record.steps = {t.variant: t.topology.settings.model_dump(mode="json")
                                    for t in tasks if t.variant}
        note(f"run {run_id}: results in {directory}")
        try:
            with recorded(directory, record):
                run_each(tasks, Prepared(topology, overlay, engine, images), run_id, claim,
                         results, record, directory)
        finally:
            results.write()
    return directory


def prepared_task(prepared: Prepared, task: Task, rows_variant: Variant) -> Task:
    """The task in the settings its engine and overlay run, with the remark saying how,
    and the variant its rows carry."""
    if prepared.remark:
        note(f"{prepared.overlay.name}"
             f"{f' ({task.variant})' if task.variant else ''}: {prepared.remark}", style="yellow")
    return replace(task, topology=prepared.topology, remark=prepared.remark,
                   rows_variant=rows_variant)


def stack_groups(tasks: list[Task]) -> list[list[Task]]:
    """Consecutive tasks of one group on one stack key run together."""
    groups: list[list[Task]] = []
    for task in tasks:
        last = groups[-1][-1] if groups else None
        if (last is not None and task.group is not None and task.group == last.group
                and not task.scenario.fresh_stack_per_pass(task.topology)
                and not last.scenario.fresh_stack_per_pass(last.topology)
                and task.topology.stack_key() == last.topology.stack_key()):
            groups[-1].append(task)
        else:
            groups.append([task])
    return groups


def runnable(task: Task, overlay: Overlay, results: ResultSet, run_id: str) -> bool:
    """Can the overlay run this task? If not, its rows say why."""
    applicability = task.scenario.applicability(overlay, task.topology)
    if isinstance(applicability, Applicable):
        applicability = overlay.settings_applicability(task.topology)
    if isinstance(applicability, Applicable):
        return True
    record_not_run(task.scenario, task.topology, applicability, results, task.cell(run_id))
    return False


def run_each(tasks: list[Task], run: Prepared, run_id: str, claim: BlockClaim,
             results: ResultSet, record: RunRecord, directory: Path) -> None:
    """Each group of tasks on its own stack (join: one per pass), into one run directory."""
    layout = RunLayout(directory)
    for group in stack_groups(tasks):
        group = [task for task in group if runnable(task, run.overlay, results, run_id)]
        if not group:
            continue
        first = group[0]
        passes = list(range(1, first.topology.settings.passes + 1))
        stacks = ([([p], layout.logs(first.directory_name, p)) for p in passes]
                  if first.scenario.fresh_stack_per_pass(first.topology)
                  else [(passes, layout.logs(first.directory_name))])
        prepared = replace(run, topology=first.scenario.stack_topology(first.topology,
                                                                       run.overlay))

        moved = partial(record_moved_block, record, directory, topology=first.topology)
        for stack_passes, logs_dir in stacks:
            spec = StackSpec(prepared, run_id, layout.scenario(first.directory_name),
                             current_owner(), logs_dir, block_moved=moved)
            run_on_stack(group, spec, claim, results, stack_passes, record, directory)


def record_moved_block(record: RunRecord, directory: Path, refused: IPv4Network,
                       claimed: IPv4Network, topology: Topology) -> None:
    """run.json says which block the engine refused and which the run moved to."""
    record.address_blocks_refused = [*(record.address_blocks_refused or []), str(refused)]
    record.address_block = str(claimed)
    record.networks = network_record(plan_addresses(topology, str(record.run_id), claimed))
    record.save(directory)


def network_record(plan: AddressPlan) -> dict[str, dict[str, str]]:
    return {n.key: {"subnet": str(n.subnet), "bridge": n.bridge} for n in plan.networks}


def run_on_stack(tasks: list[Task], spec: StackSpec, claim: BlockClaim,
                 results: ResultSet, passes: list[int], record: RunRecord,
                 directory: Path) -> None:
    """Bring one stack up, run each task's passes, tear down; keep its logs and
    events, and the time each part took (run.json `timings`: the testbed's cost
    beside the measurement's). `passes` are the first task's (join: one per stack)."""
    stack: Stack | None = None
    first = tasks[0]
    overlay = spec.prepared.overlay
    clock = StackClock(first.directory_name, passes, first.scenario.fresh_between_passes)
    try:
        with running(spec, claim) as stack:
            record_stack(record, directory, first.directory_name, stack, spec.applied)
            checks = record.links.checks.get(first.directory_name, [])
            clock.mark()  # up and shaped
            with ShapingKeeper(stack, spec.topology, checks) as keeper:
                run_passes(tasks, stack, overlay, results, passes, spec.run_id, keeper.verify,
                           keeper)
            clock.mark()  # measured
            clock.restart_s = stack.release_overhead_s
        clock.mark()  # torn down
    finally:
        # kept in memory: run.json is written when the run ends (recorded()), so a
        # full disk here cannot mask the run's error
        record.timings.append(clock.record())
        patterns = overlay.event_patterns()
        if stack is not None and stack.saved_logs and patterns:
            write_events(events_frame(stack.saved_logs, patterns),
                         (spec.logs_dir or stack.rendered.directory / "logs")
                         / "events.parquet")


def record_stack(record: RunRecord, directory: Path, name: str, stack: Stack,
                 applied: dict[str, Any]) -> None:
    """run.json: where the stack ran, the shaping read back and a list for its checks."""
    where = stack.where_record()
    if where:
        record.hosts[name] = where
    if applied:
        record.links.applied[name] = applied
        record.links.checks.setdefault(name, [])
    record.save(directory)


def run_passes(tasks: list[Task], stack: Stack, overlay: Overlay, results: ResultSet,
               passes: list[int], run_id: str, verify: Callable[[str], list[str]],
               keeper: ShapingKeeper | None = None) -> None:
    """Each task's passes on the stack (the first task's `passes`, the others' all)."""
    started: dict[str, datetime] = {}  # "pass 2" (of a step: "STEP, pass 2")
    first = tasks[0]
    for task in tasks:
        raw = stack.rendered.directory / "raw"
        measured = task.scenario.stack_topology(task.topology, overlay)
        context = ScenarioContext(stack, measured, overlay, stack.rendered.plan,
                                  raw / slug(task.variant) if len(tasks) > 1
                                  and task.variant else raw, keeper)
        own = passes if task is first else list(range(1, task.topology.settings.passes + 1))
        for pass_no in own:
            step = f"{task.variant}, " if len(tasks) > 1 and task.variant else ""
            started[f"{step}pass {pass_no}"] = datetime.now(UTC)
            run_pass(task.scenario, context, pass_no, results, task.cell(run_id),
                     task.remark, started, verify)


class StackClock:
    """Seconds of one stack: bring-up (with shaping), restarts between passes, measurement,
    teardown (with logs)."""

    def __init__(self, scenario: str, passes: list[int], between_passes: str) -> None:
        self.scenario, self.passes, self.between_passes = scenario, passes, between_passes
        self.marks = [time.monotonic()]
        self.restart_s = 0.0  # of the measurement's span: the testbed's, between passes

    def mark(self) -> None:
        """The end of the current part (up, then measured, then torn down)."""
        self.marks.append(time.monotonic())

    def record(self) -> dict[str, Any]:
        """The spans measured so far (a stack that failed has fewer), with the restarts
        between passes taken out of the measurement."""
        measured = [round(b - a, 2) for a, b in zip(self.marks, self.marks[1:], strict=False)]
        spans = dict(zip(("bring_up_s", "measure_s", "teardown_s"), measured, strict=False))
        if "measure_s" in spans:
            spans["measure_s"] = round(spans["measure_s"] - self.restart_s, 2)
            spans["restart_s"] = round(self.restart_s, 2)
        spans = {part: spans[part] for part in TIMING_PARTS if part in spans}
        fresh = {f"pass {p}": "containers and programs" if i == 0 else self.between_passes
                 for i, p in enumerate(self.passes)}
        return {"scenario": self.scenario, "passes": self.passes, **spans, "fresh": fresh}


def record_not_run(scenario: Scenario, topology: Topology, why: NotRunnable,
                   results: ResultSet, cell: CellKey) -> None:
    """One row per pass saying why the scenario cannot run on this overlay."""
    settings = scenario.settings(topology) | link_settings(topology)
    for pass_no in range(1, topology.settings.passes + 1):
        results.add(cell, pass_no, {SKIPPED.name: (None, "")},
                    settings, status=why.status, state=why.state)
        emit(results, result_line(scenario.name, topology.overlay, pass_no,
                                  {"status": why.status}))
        step_done(f"{scenario.name} on {topology.overlay}: pass {pass_no} not run")


def run_pass(scenario: Scenario, context: ScenarioContext, pass_no: int,
             results: ResultSet, cell: CellKey, remark: str = "",
             started: dict[str, datetime] | None = None,
             verify_shaping: Callable[[str], list[str]] | None = None) -> None:
    """One pass; `remark` (how the overlay adjusted the settings) joins its status,
    and so does every container of the system under test that has died, named with
    its exit code, when, during which pass, and its last log line, and whatever
    `verify_shaping` (ShapingKeeper.verify) finds changed in the links' shaping: such
    a pass failed (a path dead for want of a delay line is the testbed's failure)."""
    topology = context.topology
    before = host_sample()
    outcome = scenario.run_pass(context, pass_no)
    mark_outside_load(outcome, outside_cores(before, host_sample()))
    hosts = context.stack.placement_settings()
    deaths = [d for d in context.stack.deaths() if d.service not in outcome.fault_killed]
    if deaths:
        failed(outcome, "; ".join(d.describe(pass_of(d.finished, started or {}))
                                  for d in deaths))
    changed = verify_shaping(current_pass(started or {}, pass_no)) if verify_shaping else []
    if changed:  # a path dead for want of its delay line is the testbed's failure too
        failed(outcome, "shaping not as planned: " + "; ".join(changed), dead_too=True)
    status = f"{outcome.status}; {remark}" if remark else outcome.status
    settings = scenario.settings(topology) | link_settings(topology) | hosts
    results.add(cell, pass_no, outcome.metrics, settings,
                status=status, state=outcome.state, remark=remark)
    for point in outcome.series:
        results.add(cell, pass_no, {point.metric: (point.value, point.unit)}, settings,
                    status=status, state=outcome.state, remark=remark, interval_s=point.interval_s)
    fields = dict(outcome.summary)
    if status != "ok":
        fields["status"] = status
    emit(results, result_line(scenario.name, topology.overlay, pass_no, fields))
    for text in outcome.notes:
        note(text, style="yellow")
    step_done(f"{scenario.name} on {topology.overlay}: pass {pass_no} done")


def failed(outcome: PassResult, said: str, dead_too: bool = False) -> None:
    """What went wrong joins the pass's status, and a measured pass (a dead one too,
    with `dead_too`) is failed: its figure is not what it says."""
    outcome.status = said if outcome.status == "ok" else f"{outcome.status}; {said}"
    if outcome.state.measured or (dead_too and outcome.state is State.DEAD):
        outcome.state = State.FAILED
    outcome.notes.append(said)


OUTSIDE_LOAD_SHARE = 0.1  # of the machine's cores: a pass measured beside this is marked


def mark_outside_load(outcome: PassResult, cores: float | None) -> None:
    """The pass's CPU outside the testbed as a metric, and in its status when it was
    a tenth of the machine or more (the figure may be the machine's, not the overlay's);
    the state is left as it is: the pass measured what it says, on a busy machine."""
    if cores is None:
        return
    outcome.metrics[OUTSIDE_LOAD.name] = (round(cores, 3), OUTSIDE_LOAD.unit)
    if cores >= OUTSIDE_LOAD_SHARE * (os.cpu_count() or 1):
        said = (f"measured under outside load: {cores:.2f} cores busy outside the testbed "
                "during the pass")
        outcome.status = said if outcome.status == "ok" else f"{outcome.status}; {said}"
        outcome.notes.append(said)


def current_pass(started: dict[str, datetime], pass_no: int) -> str:
    """The pass begun last ("pass 2", of a step "STEP, pass 2")."""
    return max(started, key=started.__getitem__) if started else f"pass {pass_no}"


def pass_of(moment: datetime, started: dict[str, datetime]) -> str:
    """'during pass N' (of its step) for the last pass begun by then, else 'before the
    first pass'."""
    begun = {name: at for name, at in started.items() if at <= moment}
    return f"during {max(begun, key=begun.__getitem__)}" if begun else "before the first pass"


def emit(results: ResultSet, line: str) -> None:
    results.lines.append(line)
    results.write()
    out_console.print(line)
