"""`vnetbench validate`: check topology files, every problem with its location."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded, read_topology
from vnetbench.errors import UserError
from vnetbench.terminal.ui import out_console


@guarded
def validate(files: Annotated[list[Path], typer.Argument(help="Topology files.")]) -> None:
    """Check topology files and report every problem with its location."""
    from vnetbench.overlays import overlay_for

    failed = []
    for path in files:
        try:
            topology = read_topology(path)
            # its overlay_options are valid, and its nodes fit the overlay's addresses
            overlay_for(topology).overlay_addresses(topology)
        except UserError as error:
            failed.append(str(error))
            continue
        out_console.print(
            f"{path}: ok ({topology.overlay}, {len(topology.switches)} switch(es), "
            f"{len(topology.agents)} agent(s))"
        )
    if failed:
        raise UserError("\n\n".join(failed))
