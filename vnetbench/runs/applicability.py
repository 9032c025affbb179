"""Can the overlay run a task? A scenario the overlay cannot run (or settings it
cannot honour) gives one row per pass saying why, and nothing is started."""

from __future__ import annotations

from vnetbench.analysis.results import ResultSet, result_line
from vnetbench.core.metrics import SKIPPED
from vnetbench.core.outcome import Applicable, Kind, NotRunnable
from vnetbench.core.schema import CellKey
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.runs.passes import emit, link_settings
from vnetbench.runs.plan import Task
from vnetbench.scenarios import Scenario
from vnetbench.terminal.ui import step_done


def runnable(task: Task, overlay: Overlay, results: ResultSet, run_id: str) -> bool:
    """Can the overlay run this task? If not, its rows say why."""
    applicability = task.scenario.applicability(overlay, task.topology)
    if isinstance(applicability, Applicable):
        applicability = overlay.settings_applicability(task.topology)
    if isinstance(applicability, Applicable):
        return True
    record_not_run(task.scenario, task.topology, applicability, results, task.cell(run_id))
    return False


def record_not_run(scenario: Scenario, topology: Topology, why: NotRunnable,
                   results: ResultSet, cell: CellKey) -> None:
    """One row per pass saying why the scenario cannot run on this overlay."""
    settings = scenario.settings(topology) | link_settings(topology)
    for pass_no in range(1, topology.settings.passes + 1):
        results.add(cell, pass_no, {SKIPPED.name: (None, "")},
                    settings, status=why.status, state=why.state, kinds=(Kind.NOT_RUN,))
        emit(results, result_line(scenario.name, topology.overlay, pass_no,
                                  {"status": why.status}))
        step_done(f"{scenario.name} on {topology.overlay}: pass {pass_no} not run")
