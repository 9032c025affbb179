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
from vnetbench.terminal.machine_output import (
    JsonFile,
    JsonToStdout,
    JsonWanted,
    people_on_stderr,
)
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
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
) -> None:
    """Run a scenario over a list of values of one link parameter; plot it. Exit 1 when
    a pass failed or its path was dead (--allow-failed for a sweep up to 100 % loss).
    --json/--json-file: as run's (docs/machine-output.md)."""
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
    inputs = file_inputs(topology=topology_file)
    wanted = JsonWanted("sweep", as_json, json_file)
    wanted.check(inputs)
    results = out_directory(out, command="sweep", inputs=inputs)
    require_engine()
    with people_on_stderr(as_json):
        directory = run_sweep(topology, chosen, assignment, overlays, results)
        for plot in sorted(directory.glob("sweep-*.png")):
            note(f"plot: {plot}")
        note(f"results: {directory}")
        conclude(directory, allow_failed, wanted=wanted)
