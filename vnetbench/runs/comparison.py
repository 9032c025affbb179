"""Several overlays, one after another, on the same topology: one results frame
and one comparison table (ranges over passes, overlay/baseline ratios)."""

from __future__ import annotations

from pathlib import Path

from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import new_record, recorded
from vnetbench.core.schema import NATIVE
from vnetbench.engines import require_engine
from vnetbench.errors import UserError
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay, check_overlay_name, overlay_for
from vnetbench.runs.session import run_scenarios
from vnetbench.runtime.rundir import new_directory, stamp
from vnetbench.scenarios import Scenario

SEED_BASELINE_SECONDS = 3.0  # the seed measures the path without the overlay for 3 s


def parse_overlays(text: str | None, default: str) -> list[str]:
    names = [n.strip() for n in (text or default).split(",") if n.strip()]
    for name in names:
        check_overlay_name(name)
    if len(set(names)) != len(names):
        raise UserError(f"--overlay {text} names an overlay twice; list each once.")
    return names


def require_overlays(topology: Topology, names: list[str]) -> dict[str, Overlay]:
    """The configured adapter of every overlay asked for, each checked to run here
    before anything starts (the engine is asked once per overlay)."""
    require_engine()
    overlays = {name: overlay_for(topology, name) for name in names}
    for overlay in overlays.values():
        overlay.require_available()
    return overlays


def plan_runs(overlays: list[str], scenarios: list[Scenario],
              with_baseline: bool) -> list[tuple[str, list[Scenario], dict[str, float]]]:
    """(overlay, scenarios, setting overrides) in order; as the seed, the baseline
    path of throughput first (3 s of TCP) when an overlay is measured without it."""
    runs: list[tuple[str, list[Scenario], dict[str, float]]] = []
    wants_throughput = [s for s in scenarios if s.name == "throughput"]
    if with_baseline and wants_throughput and NATIVE not in overlays:
        runs.append((NATIVE, wants_throughput, {"seconds": SEED_BASELINE_SECONDS}))
    runs += [(name, scenarios, {}) for name in overlays]
    return runs


def run_overlays(topology: Topology, overlays: list[str], scenarios: list[Scenario],
                 out_dir: Path, with_baseline: bool = True) -> Path:
    """Run the scenarios once per overlay; a single overlay gets a plain run directory."""
    runs = plan_runs(overlays, scenarios, with_baseline)
    adapters = require_overlays(topology, [name for name, _, _ in runs])
    if len(runs) == 1:
        return run_scenarios(topology.model_copy(update={"overlay": runs[0][0]}),
                             scenarios, out_dir, overlay=adapters[runs[0][0]])
    directory = new_directory(out_dir, f"{topology.name}-{stamp()}-compare")
    # the topology every overlay ran (the venue's verdict reads its workload's phases)
    record = new_record("compare", adapters.values(), scenarios=[s.name for s in scenarios],
                        topology=topology.model_dump(mode="json"))
    results = ResultSet(directory)
    with recorded(directory, record):
        for overlay, chosen, overrides in runs:
            settings = topology.settings.updated(overrides)
            run_topology = topology.model_copy(update={"overlay": overlay,
                                                       "settings": settings})
            run_scenarios(run_topology, chosen, directory / "runs", results=results,
                          overlay=adapters[overlay])
    return directory
