"""`vnetbench sweep`: a scenario over a list of values of one link parameter, plotted."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import (
    DEFAULT_TOPOLOGY,
    OUT_HELP,
    conclude,
    file_inputs,
    guarded,
    out_directory,
    read_topology,
)
from vnetbench.commands.options import AllowFailedOption, TopologyOption
from vnetbench.terminal.ui import note


@guarded
def sweep(
    scenario: Annotated[str, typer.Argument(help="The scenario, e.g. throughput.")],
    setting: Annotated[str, typer.Option("--set", help="SEGMENT.KEY=V1,V2,... e.g. "
                                         "backbone.loss=0,0.5,1,2,5%")],
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    overlay: Annotated[str | None, typer.Option(help="Overlays, separated by commas.")] = None,
    passes: Annotated[int | None, typer.Option(help="Passes per value.")] = None,
    seconds: Annotated[float | None, typer.Option(help="TCP stream length.")] = None,
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    allow_failed: AllowFailedOption = False,
) -> None:
    """Run a scenario over a list of values of one link parameter; plot it. Exit 1 when
    a pass failed or its path was dead (--allow-failed for a sweep up to 100 % loss)."""
    from vnetbench.engines import require_engine
    from vnetbench.runs.comparison import parse_overlays
    from vnetbench.runs.sweep import check_sweep, run_sweep
    from vnetbench.scenarios import get_scenario
    from vnetbench.shaping.assign import parse_assignment

    overrides = {k: v for k, v in {"seconds": seconds, "passes": passes}.items()
                 if v is not None}
    chosen = get_scenario(scenario)
    topology = read_topology(topology_file, overrides)
    assignment = parse_assignment(setting)
    overlays = parse_overlays(overlay, topology.overlay)
    check_sweep(topology, chosen, assignment, overlays)
    results = out_directory(out, command="sweep", inputs=file_inputs(topology=topology_file))
    require_engine()
    directory = run_sweep(topology, chosen, assignment, overlays, results)
    for plot in sorted(directory.glob("sweep-*.png")):
        note(f"plot: {plot}")
    note(f"results: {directory}")
    conclude(directory, allow_failed)
