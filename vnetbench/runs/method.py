"""A reference method on several overlays: its steps, one overlay after another,
into one results directory (a `method` column names it), and its table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import new_record, recorded
from vnetbench.core.schema import NATIVE, Variant  # NATIVE: every method's reference column
from vnetbench.methods import Method
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.runs.comparison import require_overlays
from vnetbench.runs.plan import Task
from vnetbench.runs.session import run_tasks
from vnetbench.runtime.rundir import new_directory, stamp
from vnetbench.scenarios import get_scenario
from vnetbench.terminal.ui import job_progress


def method_overlays(names: list[str], with_baseline: bool) -> list[str]:
    """The overlays in order, the native path first (as the references measure it)."""
    if with_baseline and NATIVE not in names:
        return [NATIVE, *names]
    return names


def method_tasks(topology: Topology, method: Method, overlay: str, short: bool,
                 given: dict[str, Any] | None = None) -> list[Task]:
    """The method's steps on one overlay (`given`: settings from the command line);
    steps that differ only in what they measure share a stack."""
    scenario = get_scenario(method.scenario)
    base = topology.model_copy(update={"overlay": overlay})
    return [Task(scenario, method.step_topology(base, step, short, given), variant=step.label,
                 group=method.name) for step in method.steps_for(short)]


def run_method_into(topology: Topology, method: Method, overlays: dict[str, Overlay],
                    results: ResultSet, runs_dir: Path, short: bool,
                    given: dict[str, Any] | None = None) -> dict[str, Path]:
    """Every overlay's steps into a shared result set; each overlay's run directory."""
    return {name: run_tasks(method_tasks(topology, method, name, short, given), runs_dir,
                            results, adapter, Variant(method=method.name))
            for name, adapter in overlays.items()}


def run_method(topology: Topology, method: Method, overlay_names: list[str], out_dir: Path,
               short: bool = False, with_baseline: bool = True,
               given: dict[str, Any] | None = None) -> Path:
    """`vnetbench run --method NAME`: one directory holding every overlay's runs;
    `given`: settings from the command line, above the method's own."""
    names = method_overlays(overlay_names, with_baseline)
    # counting the passes builds every step: each is valid before anything starts
    steps = len(names) * method.passes(topology, short, given)
    adapters = require_overlays(topology, names)
    directory = new_directory(out_dir, f"{topology.name}-{stamp()}-{method.name}")
    record = new_record("method", adapters.values(), method=method.name,
                        reference=method.reference, short=short,
                        steps=[s.label for s in method.steps_for(short)])
    results = ResultSet(directory)
    with recorded(directory, record), job_progress(f"method {method.name}", steps):
        run_method_into(topology, method, adapters, results, directory / "runs", short,
                        given)
    return directory
