"""The matrix's cells on stacks: cells of one overlay that measure the same shape
share one stack, brought up once and torn down once, instead of a stack each; and
what the matrix's record says of each cell (run.json `cells`, `cell_timings`,
`shared_stacks`).

A cell shares only when its scenario says it may (`Scenario.shares_stack`: it leaves
the stack as it found it) and its stack is the others' (the scenario's stack
topology on the overlay, by `Topology.stack_key()`: settings that only a measurement
reads may differ). Each cell keeps its own rows (its variant, its pass numbers) and
its own measuring seconds; the shared bring-up and teardown are recorded once, with
the cells that shared them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import TIMING_PARTS, RunRecord, SharedStack, read_record
from vnetbench.core.schema import Variant
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.runs.plan import Task
from vnetbench.runs.session import run_tasks
from vnetbench.scenarios import Scenario

SHARED = "matrix cells"  # the tasks' group: cells of one stack key share it
SHARED_WITH = "shared stack with: "  # in a completed cell's state


@dataclass(frozen=True)
class Cell:
    scenario: Scenario
    overlay: Overlay
    variant: str
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.scenario.name}/{self.overlay.name}/{self.variant}"


@dataclass(frozen=True)
class CellGroup:
    """Cells of one overlay run on one stack, in the matrix's order, each in the
    topology the matrix runs it in (a group of one: the cell's own stack)."""

    cells: tuple[Cell, ...]
    topologies: tuple[Topology, ...]

    @property
    def keys(self) -> list[str]:
        return [cell.key for cell in self.cells]

    @property
    def overlay(self) -> Overlay:
        return self.cells[0].overlay

    def tasks(self) -> list[Task]:
        """A task per cell, carrying the cell's variant (its name and overrides) to its
        rows, as a cell run alone has them."""
        return [Task(cell.scenario, topology, group=SHARED,
                     cell_variant=Variant(cell.variant, parameters=cell.overrides))
                for cell, topology in zip(self.cells, self.topologies, strict=True)]


def group_cells(cells: list[Cell], topology_of: Callable[[Cell], Topology]) -> list[CellGroup]:
    """The cells in stacks: those of one overlay whose scenarios share a stack and
    whose stacks have one key run on one stack, in the matrix's order among
    themselves; every other cell alone. A group comes where its first cell came.

    One stack for throughput, transactions and loaded_latency on an overlay saves
    every bring-up and teardown but one; a scenario that does not say it may
    (`Scenario.shares_stack`: failover, join, config, flood) never joins one."""
    groups: list[list[tuple[Cell, Topology]]] = []
    open_groups: dict[tuple[str, str], list[tuple[Cell, Topology]]] = {}
    for cell in cells:
        topology = topology_of(cell)
        key = sharing_key(cell, topology)
        if key is not None and key in open_groups:
            open_groups[key].append((cell, topology))
            continue
        groups.append([(cell, topology)])
        if key is not None:
            open_groups[key] = groups[-1]
    return [CellGroup(tuple(c for c, _ in group), tuple(t for _, t in group))
            for group in groups]


def sharing_key(cell: Cell, topology: Topology) -> tuple[str, str] | None:
    """The stack a cell may share (its overlay and stack key), or None: it runs alone."""
    scenario = cell.scenario
    if not scenario.shares_stack or scenario.fresh_stack_per_pass(topology):
        return None
    if scenario.injects_faults and topology.faults:  # it kills, restarts and re-shapes
        return None
    return cell.overlay.name, scenario.stack_topology(topology, cell.overlay).stack_key()


def run_group(group: CellGroup, runs_dir: Path, results: ResultSet, header: RunRecord,
              directory: Path) -> None:
    """The group's cells on its stack (one run directory under runs_dir), each cell's
    state as it goes: running, then completed, or stopped, every cell of the group,
    when the run fails (a --resume runs them again, on one stack)."""
    for key in group.keys:
        header.cells[key] = "running"
    header.save(directory)
    try:
        run_dir = run_tasks(group.tasks(), runs_dir, results, group.overlay)
    except BaseException as error:
        for key in group.keys:
            header.cells[key] = f"stopped: {error or type(error).__name__}"
        raise
    record_group(header, group, read_record(run_dir).timings, run_dir.name)


def record_group(header: RunRecord, group: CellGroup, stacks: list[dict[str, Any]],
                 run: str) -> None:
    """A group's cells completed in `run`: each cell's state (naming the cells it
    shared a stack with) and seconds (its own measurement; a cell alone: its stack's
    too), and each stack its cells shared, once (`shared_stacks`)."""
    shared = [stack for stack in stacks if len(stack.get("cells", {})) > 1]
    header.shared_stacks += [shared_stack(run, stack) for stack in shared]
    for key in group.keys:
        partners = [cell for stack in shared if key in stack["cells"]
                    for cell in stack["cells"] if cell != key]
        header.cells[key] = completed_state(run, partners)
        header.cell_timings[key] = (summed_timings(stacks) if len(group.cells) == 1
                                    else cell_seconds(key, stacks, run))


def completed_state(run: str, partners: list[str]) -> str:
    """'completed (RUN)', with the cells it shared a stack with when it did."""
    shared = f"; {SHARED_WITH}{', '.join(dict.fromkeys(partners))}" if partners else ""
    return f"completed ({run}{shared})"


def shared_stack(run: str, stack: dict[str, Any]) -> SharedStack:
    parts = {part: float(stack.get(part, 0.0)) for part in TIMING_PARTS}
    return SharedStack(run=run, cells=list(stack["cells"]), **parts)


def cell_seconds(key: str, stacks: list[dict[str, Any]], run: str) -> dict[str, Any]:
    """A cell's seconds in a group: a stack it had alone whole, of a stack it shared
    only its own measuring (`shared_stack` names the run)."""
    alone = summed_timings([s for s in stacks if list(s.get("cells", {})) == [key]])
    shared = [float(s["cells"][key]) for s in stacks
              if len(s.get("cells", {})) > 1 and key in s["cells"]]
    if not shared:
        return alone
    return {**alone, "measure_s": round(alone["measure_s"] + sum(shared), 1),
            "shared_stack": run}


def summed_timings(stacks: list[dict[str, Any]]) -> dict[str, float]:
    """One cell's seconds of bring-up, measurement and teardown over its stacks."""
    return {part: round(sum(stack.get(part, 0.0) for stack in stacks), 1)
            for part in TIMING_PARTS}
