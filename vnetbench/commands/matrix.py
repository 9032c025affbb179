"""`vnetbench matrix`: every available scenario on every available overlay."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import (
    DEFAULT_TOPOLOGY,
    conclude,
    file_inputs,
    guarded,
    out_directory,
    read_topology,
    with_engine,
)
from vnetbench.commands.options import (
    AllowFailedOption,
    EngineOption,
    SloOption,
    TopologyOption,
)
from vnetbench.terminal.machine_output import (
    JsonFile,
    JsonToStdout,
    JsonWanted,
    people_on_stderr,
)
from vnetbench.terminal.ui import out_console


@guarded
def matrix(
    quick: Annotated[bool, typer.Option(
        help="Two short passes a cell at most (2 s streams, 50 pings), a sweep of "
             "sizes (join's machines) at its smallest: 14 minutes with every overlay on "
             "2 cores (measured 2026-12-06); --overlay for fewer.")] = False,
    resume: Annotated[bool, typer.Option(
        help="Continue the newest matrix under --out (any date): its completed cells are "
             "kept, a cell cut short runs again whole.")]
    = False,
    overlay: Annotated[list[str] | None, typer.Option(
        help="Only these overlays: separated by commas, as run and sweep take them, or "
             "the option repeated.")] = None,
    scenario: Annotated[list[str] | None, typer.Option(
        help="Only these scenarios' cells (flood, throughput, ...): separated by commas, "
             "or the option repeated; every one the matrix has without it.")] = None,
    method: Annotated[list[str] | None, typer.Option(
        help="Also this reference method (repeatable; 'all' for every one); "
             "its short form with --quick.")] = None,
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    out: Annotated[Path, typer.Option(
        help="Where results/<date>-<cores>cpu goes (a new directory of its own, or the "
             "newest with --resume; never over a file; refused when it is a file or the "
             "topology).")] = Path("results"),
    engine: EngineOption = None,
    allow_failed: AllowFailedOption = False,
    slo: SloOption = None,
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
) -> None:
    """Every available scenario on every available overlay, three passes each. Exit 1
    when a pass failed, its path was dead or a --slo target was missed.
    --json/--json-file: as run's (docs/machine-output.md)."""
    from vnetbench.analysis.slo import check_scenarios, parse_targets
    from vnetbench.methods import METHODS, get_method
    from vnetbench.runs.comparison import parse_overlays
    from vnetbench.runs.matrix import CELLS, parse_matrix_scenarios, run_matrix

    overlay = parse_overlays(",".join(overlay), "") if overlay else None  # run's form too
    scenarios = parse_matrix_scenarios(",".join(scenario)) if scenario else None
    targets = parse_targets(slo) if slo is not None else []
    check_scenarios(targets, scenarios or list(CELLS), "--slo", "the matrix")
    names = list(METHODS) if "all" in (method or []) else method or []
    methods = [get_method(name) for name in names]
    wanted = JsonWanted("matrix", as_json, json_file)
    inputs = file_inputs(topology=topology_file)
    wanted.check(inputs)
    with people_on_stderr(as_json):
        directory = run_matrix(with_engine(read_topology(topology_file), engine),
                               out_directory(out, command="matrix", inputs=inputs),
                               quick=quick, resume=resume,
                               overlay_names=overlay, methods=methods,
                               scenario_names=scenarios)
        out_console.print(str(directory))
        conclude(directory, allow_failed, targets, wanted)
