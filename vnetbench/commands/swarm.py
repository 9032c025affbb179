"""`vnetbench swarm up|down`: a test Docker Swarm on this machine (Docker-in-Docker nodes)."""

from __future__ import annotations

from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.terminal.ui import out_console


@guarded
def up(
    nodes: Annotated[int, typer.Option(help="Nodes of the test swarm (2 to 5).")] = 2,
) -> None:
    """Start a test swarm of Docker-in-Docker nodes here (kept when it is up already)."""
    from vnetbench.engines import require_engine
    from vnetbench.engines.swarm.testbed import check_node_count
    from vnetbench.engines.swarm.testbed import swarm_up as start

    check_node_count(nodes)
    require_engine()
    out_console.print(start(nodes))


@guarded
def down() -> None:
    """Remove the test swarm's nodes, their engines' data and its network."""
    from vnetbench.engines import require_engine
    from vnetbench.engines.swarm.testbed import swarm_down as remove

    require_engine()
    out_console.print(f"removed {remove()} test swarm node(s)")
