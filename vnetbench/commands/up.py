"""`vnetbench up`: bring a topology up, shaped, and leave it running."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import (
    DEFAULT_TOPOLOGY,
    file_inputs,
    guarded,
    out_directory,
    read_topology,
    with_engine,
)
from vnetbench.commands.options import EngineOption, TopologyOption
from vnetbench.terminal.ui import out_console


@guarded
def up(
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    out: Annotated[Path | None, typer.Option(
        help="Where the run directory goes (BENCH_OUT, else ./out; a new directory of its "
             "own, never over a file; refused when it is a file or the topology).")] = None,
    engine: EngineOption = None,
) -> None:
    """Bring a topology up, shaped, and leave it running (`vnetbench down RUN` stops it)."""
    from vnetbench.engines.allocation import claimed_block
    from vnetbench.runs.comparison import require_overlays
    from vnetbench.runs.session import bring_up_detached

    topology = with_engine(read_topology(topology_file), engine)
    results = out_directory(out, command="up", inputs=file_inputs(topology=topology_file))
    overlay = require_overlays(topology, [topology.overlay])[topology.overlay]
    with claimed_block() as claim:  # until its networks exist
        rendered = bring_up_detached(topology, overlay, results, claim)
    out_console.print(rendered.run_id)

