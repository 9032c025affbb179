"""`vnetbench sweep`: one scenario over a list of values of one link parameter,
for one or more overlays, into one results frame and one plot per metric
(metric against the parameter, one line per overlay, range over passes)."""

from __future__ import annotations

from pathlib import Path

from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import new_record, recorded
from vnetbench.core.schema import Variant
from vnetbench.model.topology import Topology
from vnetbench.report.plots import write_plots
from vnetbench.report.tables import summary_table
from vnetbench.runs.comparison import require_overlays
from vnetbench.runs.session import run_scenarios
from vnetbench.runtime.rundir import new_directory, stamp
from vnetbench.scenarios import Scenario
from vnetbench.shaping.apply import check_shaping
from vnetbench.shaping.assign import Assignment, with_link_setting
from vnetbench.terminal.ui import job_progress


def check_sweep(topology: Topology, scenario: Scenario, assignment: Assignment,
                overlays: list[str]) -> list[Topology]:
    """Every value's topology, each checked for the scenario on every overlay before
    the engine is asked (run_tasks checked it only once the engine had answered).
    The shaping's check asks the engine what its kernel can do: run_sweep's."""
    variants = [with_link_setting(topology, assignment, value) for value in assignment.values]
    for variant in variants:
        for overlay in overlays:
            scenario.check(variant.model_copy(update={"overlay": overlay}))
    return variants


def run_sweep(topology: Topology, scenario: Scenario, assignment: Assignment,
              overlays: list[str], out_dir: Path) -> Path:
    variants = check_sweep(topology, scenario, assignment, overlays)
    adapters = require_overlays(topology, overlays)
    for variant in variants:  # every value is checked before anything starts
        check_shaping(variant)
    directory = new_directory(out_dir, f"{topology.name}-{stamp()}-sweep-{assignment.key}")
    record = new_record("sweep", adapters.values(), scenario=scenario.name,
                        parameter=assignment.parameter, values=assignment.values)
    results = ResultSet(directory)
    try:
        with recorded(directory, record), job_progress(
                "sweep", steps=len(variants) * len(overlays) * topology.settings.passes):
            for value, variant in zip(assignment.values, variants, strict=True):
                for overlay in overlays:
                    run_scenarios(variant.model_copy(update={"overlay": overlay}), [scenario],
                                  directory / "runs", results=results,
                                  overlay=adapters[overlay], variant=Variant(
                                      f"{assignment.parameter}={value}",
                                      parameters={assignment.column:
                                                  assignment.value_in(variant)}))
    finally:
        results.write()
        write_plots(summary_table(results.frame()), directory)
    return directory

