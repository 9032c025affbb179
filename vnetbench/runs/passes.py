"""Measuring pass by pass on a running stack: each task's passes, each outcome
judged (runs/outcomes.py) and written as rows of its cell and a RESULT line."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from vnetbench.analysis.plausibility import check_plausible
from vnetbench.analysis.results import ResultSet, result_line
from vnetbench.core.metrics import SKIPPED
from vnetbench.core.outcome import Kind
from vnetbench.core.schema import BACKBONE_LINKS, SITE_LINKS, CellKey
from vnetbench.engines.stack import Stack
from vnetbench.measure.cpu import host_sample, outside_cores
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.runs.outcomes import (
    current_pass,
    mark_deaths,
    mark_outside_load,
    mark_shaping_changed,
)
from vnetbench.runs.plan import Task
from vnetbench.runtime.rundir import slug
from vnetbench.scenarios import Scenario, ScenarioContext
from vnetbench.scenarios.base import PassResult
from vnetbench.shaping.apply import ShapingKeeper
from vnetbench.terminal.ui import note, out_console, step_done


def run_passes(tasks: list[Task], stack: Stack, overlay: Overlay, results: ResultSet,
               passes: list[int], run_id: str, verify: Callable[[str], list[str]],
               keeper: ShapingKeeper | None = None,
               seconds: dict[str, float] | None = None) -> None:
    """Each task's passes on the stack (the first task's `passes`, the others' all);
    `seconds` gets each task's measuring time by its cell (scenario/overlay/variant).
    Tasks sharing the stack keep their raw output apart, in raw/STEP/."""
    started: dict[str, datetime] = {}  # "pass 2" (of a step: "STEP, pass 2")
    first = tasks[0]
    for task in tasks:
        began = time.monotonic()
        raw = stack.rendered.directory / "raw"
        step_name = task.step_name if len(tasks) > 1 else None
        measured = task.scenario.stack_topology(task.topology, overlay)
        context = ScenarioContext(stack, measured, overlay, stack.rendered.plan,
                                  raw / slug(step_name) if step_name else raw, keeper)
        own = passes if task is first else list(range(1, task.topology.settings.passes + 1))
        for pass_no in own:
            started[f"{step_name}, pass {pass_no}" if step_name
                    else f"pass {pass_no}"] = datetime.now(UTC)
            run_pass(task.scenario, context, pass_no, results, task.cell(run_id),
                     task.remark, started, verify)
        if seconds is not None:
            seconds[task.cell(run_id).name] = round(time.monotonic() - began, 2)


def run_pass(scenario: Scenario, context: ScenarioContext, pass_no: int,
             results: ResultSet, cell: CellKey, remark: str = "",
             started: dict[str, datetime] | None = None,
             verify_shaping: Callable[[str], list[str]] | None = None) -> None:
    """One pass, its figures checked against what the mechanism can produce
    (plausibility.py); `remark` (how the overlay adjusted the settings) joins its status,
    and so does every container of the system under test that has died, named with
    its exit code, when, during which pass, and its last log line, and whatever
    `verify_shaping` (ShapingKeeper.verify) finds changed in the links' shaping: such
    a pass failed (a path dead for want of a delay line is the testbed's failure)."""
    topology = context.topology
    ours = run_container_ids(context)
    before = host_sample(ours)
    result = scenario.run_pass(context, pass_no)
    check_plausible(result, topology)
    mark_outside_load(result, outside_cores(before, host_sample(ours)))
    hosts = context.stack.placement_settings()
    mark_deaths(result, context.stack.deaths(), started or {})
    if verify_shaping:
        mark_shaping_changed(result, verify_shaping(current_pass(started or {}, pass_no)))
    settings = scenario.settings(topology) | link_settings(topology) | hosts
    write_pass(results, cell, pass_no, result, settings, remark)


def run_container_ids(context: ScenarioContext) -> set[str] | None:
    """The run's containers, so that every other one on this machine counts as outside
    load; None (none counted) when some run on another node: this machine's containers
    (the test swarm's nodes) then carry the run's own work."""
    listed = context.stack.containers()
    return None if any(c.where for c in listed) else {c.id for c in listed}


def write_pass(results: ResultSet, cell: CellKey, pass_no: int, result: PassResult,
               settings: dict[str, object], remark: str) -> None:
    """The pass's rows (its metrics, then its series' points) and its RESULT line; the
    remark is a problem of its own, and the problems' sentences compose the status. A
    pass that measured nothing still leaves a row (`skipped`), so its state is read back
    (the exit status, the report)."""
    if not result.metrics:
        result.metrics[SKIPPED.name] = (None, SKIPPED.unit)
    if remark:
        result.outcome.add(Kind.REMARK, remark, addendum=True)
    status, state, kinds = result.outcome.status, result.state, result.outcome.kinds
    results.add(cell, pass_no, result.metrics, settings,
                status=status, state=state, remark=remark, kinds=kinds)
    for point in result.series:
        results.add(cell, pass_no, {point.metric: (point.value, point.unit)}, settings,
                    status=status, state=state, remark=remark, interval_s=point.interval_s,
                    kinds=kinds)
    fields = dict(result.summary)
    if result.outcome.problems:
        fields["status"] = status
    emit(results, result_line(cell.scenario, cell.overlay, pass_no, fields))
    for text in result.notes:
        note(text, style="yellow")
    step_done(f"{cell.scenario} on {cell.overlay}: pass {pass_no} done")


def link_settings(topology: Topology) -> dict[str, object]:
    """Result columns for the links a measurement ran on (set_site, set_backbone)."""
    return {SITE_LINKS: topology.links.site.describe(),
            BACKBONE_LINKS: topology.links.backbone.describe()}


def emit(results: ResultSet, line: str) -> None:
    results.lines.append(line)
    results.write()
    out_console.print(line)
