"""A run's plan: its tasks (a scenario's passes in one topology's settings, a
method's step, a matrix cell), which of them share a stack, and each in the settings
its engine and overlay run."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from vnetbench.core.schema import CellKey, Variant
from vnetbench.deploy.lifecycle import Prepared
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.runtime.rundir import slug
from vnetbench.scenarios import Scenario
from vnetbench.terminal.ui import note


@dataclass(frozen=True)
class Task:
    """A scenario's passes in one topology's settings. Consecutive tasks of the same
    `group` whose stacks' topologies differ only in measurement settings share a stack
    (a method's steps, a matrix's cells of one shape); a task without a group gets its
    own (join: one per pass)."""

    scenario: Scenario
    topology: Topology
    variant: str | None = None  # a step's label: its rows' variant (None: the run's)
    group: str | None = None
    # a matrix cell's variant, its rows' whatever the run's (its name and parameters)
    cell_variant: Variant | None = None
    remark: str = ""  # how the overlay adjusted the settings (filled in by run_tasks)
    rows_variant: Variant = field(default_factory=Variant)  # (filled in by run_tasks)

    def cell(self, run_id: str) -> CellKey:
        """The cell its rows belong to."""
        return CellKey(run_id, self.scenario.name, self.topology.overlay, self.rows_variant)

    @property
    def directory_name(self) -> str:
        """The task's folder in the run directory: the scenario, or the step's slug."""
        return self.scenario.name if self.variant is None else slug(self.variant)

    @property
    def step_name(self) -> str | None:
        """What names it beside the other tasks of a stack (its raw folder, its passes'
        labels): a step's label, a matrix cell's scenario/variant; None: a run's own."""
        if self.variant is not None:
            return self.variant
        if self.cell_variant is not None:
            return f"{self.scenario.name}/{self.cell_variant.name}"
        return None


def prepared_task(prepared: Prepared, task: Task, rows_variant: Variant) -> Task:
    """The task in the settings its engine and overlay run, with the remark saying how,
    and the variant its rows carry (a matrix cell's own, else `rows_variant`)."""
    if prepared.remark:
        note(f"{prepared.overlay.name}"
             f"{f' ({task.variant})' if task.variant else ''}: {prepared.remark}", style="yellow")
    return replace(task, topology=prepared.topology, remark=prepared.remark,
                   rows_variant=task.cell_variant or rows_variant)


def stack_groups(tasks: list[Task], overlay: Overlay) -> list[list[Task]]:
    """Consecutive tasks of one group whose stacks (their scenario's stack topology on
    this overlay) have one stack key run together."""
    groups: list[list[Task]] = []
    for task in tasks:
        last = groups[-1][-1] if groups else None
        if (last is not None and task.group is not None and task.group == last.group
                and not task.scenario.fresh_stack_per_pass(task.topology)
                and not last.scenario.fresh_stack_per_pass(last.topology)
                and stack_key(task, overlay) == stack_key(last, overlay)):
            groups[-1].append(task)
        else:
            groups.append([task])
    return groups


def stack_key(task: Task, overlay: Overlay) -> str:
    """The key of the stack the task runs on (its scenario may build it: a room)."""
    return task.scenario.stack_topology(task.topology, overlay).stack_key()
