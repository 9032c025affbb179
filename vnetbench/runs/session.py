"""A run: allocate, render, bring up, measure pass by pass, always tear down.

Everything goes under one run directory: compose.yml, raw tool output,
container logs, results.{parquet,csv,txt} and run.json. The plan is
runs/plan.py's, what the run records runs/recording.py's, whether a task can
run runs/applicability.py's, the passes runs/passes.py's.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from ipaddress import IPv4Network
from pathlib import Path

from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import RunRecord, recorded
from vnetbench.core.schema import Variant
from vnetbench.deploy.lifecycle import Prepared, StackSpec, prepare, running, start
from vnetbench.engines import engine_for, local, require_engine
from vnetbench.engines.allocation import BlockClaim, claimed_block
from vnetbench.engines.base import RenderedRun
from vnetbench.engines.stack import Stack
from vnetbench.measure.events import events_frame, write_events
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay, overlay_for
from vnetbench.runs.applicability import runnable
from vnetbench.runs.passes import run_passes
from vnetbench.runs.plan import Task, prepared_task, stack_groups
from vnetbench.runs.recording import (
    StackClock,
    record_moved_block,
    record_stack,
    start_record,
    up_record,
)
from vnetbench.runtime.labels import current_owner, detached_owner
from vnetbench.runtime.rundir import RunLayout, mark_run_directory, new_run_id
from vnetbench.scenarios import Scenario
from vnetbench.shaping.apply import ShapingKeeper
from vnetbench.terminal.ui import note


def new_run_directory(topology: Topology, out_dir: Path) -> tuple[str, Path]:
    """A new run's directory, named by its run id, marked as vnetbench's."""
    run_id = new_run_id(topology.name)
    directory = out_dir / run_id
    directory.mkdir(parents=True)
    mark_run_directory(directory)
    return run_id, directory


def bring_up_detached(topology: Topology, overlay: Overlay, out_dir: Path,
                      claim: BlockClaim) -> RenderedRun:
    """`vnetbench up`: a new run directory, brought up and shaped, left running; on
    any failure torn down. Another block when the engine refuses the first."""
    prepared = prepare(topology, overlay, images=local().project_images())
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


def run_scenarios(topology: Topology, scenarios: list[Scenario], out_dir: Path,
                  results: ResultSet | None = None, overlay: Overlay | None = None,
                  variant: Variant | None = None) -> Path:
    """Run each scenario's passes on its own stack; return the run directory."""
    return run_tasks([Task(s, topology) for s in scenarios], out_dir, results, overlay,
                     variant)


def run_tasks(tasks: list[Task], out_dir: Path, results: ResultSet | None = None,
              overlay: Overlay | None = None, variant: Variant | None = None) -> Path:
    """Run the tasks' passes into one run directory; return it.

    Rows go to `results` when given (the matrix's shared set), else to a result set
    in the run directory; they carry `variant` (a step's with its label as the name).
    A scenario the overlay does not support gives one row per pass saying why,
    without starting anything. `overlay` is the run's configured adapter (made from
    the first topology when not given).
    """
    for task in tasks:
        task.scenario.check(task.topology)
    require_engine()
    overlay = overlay or overlay_for(tasks[0].topology)
    overlay.require_available()  # run() and sweep() check every overlay first
    engine = engine_for(tasks[0].topology)  # a swarm: found and checked before anything starts
    images = local().project_images()  # built here, whichever engine runs them
    variant = variant or Variant()
    tasks = [prepared_task(prepare(task.topology, overlay, engine, images=images,
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


def run_each(tasks: list[Task], run: Prepared, run_id: str, claim: BlockClaim,
             results: ResultSet, record: RunRecord, directory: Path) -> None:
    """Each group of tasks on its own stack (join: one per pass), into one run directory."""
    layout = RunLayout(directory)
    for group in stack_groups(tasks, run.overlay):
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


def run_on_stack(tasks: list[Task], spec: StackSpec, claim: BlockClaim,
                 results: ResultSet, passes: list[int], record: RunRecord,
                 directory: Path) -> None:
    """Bring one stack up, run each task's passes, tear down; keep its logs and
    events, and the time each part took (run.json `timings`: the testbed's cost
    beside the measurement's, and each task's own measurement by its cell). `passes` are
    the first task's (join: one per stack)."""
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
                           keeper, clock.cells)
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
