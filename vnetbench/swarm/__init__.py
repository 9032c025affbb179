"""The same topologies on a Docker Swarm of several hosts (`--engine swarm`).

What the swarm gives a run: membership (its nodes, their names and labels)
and multi-host overlay networks (VXLAN), one per segment, attachable and
internal. What it cannot give: a swarm service has no fixed address
(`ipv4_address` is ignored by `docker stack deploy`), no `devices:` and no
`network_mode: container:`. Every overlay here routes between fixed
addresses and measures from inside the agents' namespaces, so the run's
containers are not swarm services: the rendered compose file is split per
node (placement.py), and each node's share is brought up with Docker Compose
through that node's engine, attached to the swarm's overlay networks with
their planned addresses. Probes and shapers are plain containers started on
the node that hosts their target; the start gate has a keeper per node
(gatekeepers.py), released at once, and each node's clock offset to this
machine is measured and taken out of its log times.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import suppress
from typing import Any

from vnetbench.engine import engines
from vnetbench.errors import UserError
from vnetbench.overlays.base import FABRIC_SERVICE
from vnetbench.render import RenderedRun
from vnetbench.stack import Removed, Stack
from vnetbench.swarm.cluster import Swarm
from vnetbench.topology import Topology

StackMaker = Callable[[RenderedRun, Topology], Stack]
SEGMENT_MTU = 1450  # an overlay network's default: 1500 less VXLAN's 50 bytes


def on_engine(topology: Topology) -> Topology:
    """The topology as its engine runs it: on a swarm, a segment without a declared MTU
    has the overlay network's (the overlays fit their tunnels to it; a swarm on jumbo
    frames declares `mtu: 1500` in its links)."""
    if topology.engine != "swarm":
        return topology
    links = {name: (profile if profile.mtu else profile.model_copy(update={"mtu": SEGMENT_MTU}))
             for name, profile in (("site", topology.links.site),
                                   ("backbone", topology.links.backbone))}
    return topology.model_copy(update={"links": topology.links.model_copy(update=links)})


def one_engine(rendered: RenderedRun, topology: Topology) -> Stack:
    return Stack(rendered)


def known_swarms(manager: str | None = None) -> list[Swarm]:
    """Swarms that may hold runs, for clean and down: the one this manager (or
    $VNETBENCH_SWARM) names; else this machine's own swarm, then the test swarm
    (vnetbench's own containers: runs left there are its own), each if it answers."""
    from vnetbench.swarm.cluster import (
        TEST_SWARM,
        discover,
        named_manager,
        own_swarm_manager,
    )
    from vnetbench.swarm.testbed import test_swarm_manager

    named = manager or named_manager()
    endpoints: list[str | None] = []
    if named:
        endpoints.append(test_swarm_manager() if named == TEST_SWARM else named)
    else:
        with suppress(UserError):  # the local engine does not answer: no own swarm
            endpoints.append(own_swarm_manager())
        endpoints.append(test_swarm_manager())
    found = []
    for endpoint in dict.fromkeys(e for e in endpoints if e):
        with suppress(UserError):
            found.append(discover(endpoint))
    return found


def each_engine(manager: str | None = None) -> Iterator[Swarm | None]:
    """This machine's engine (None), then each known swarm's nodes (every listing and
    removal covers them while the caller's loop body runs): for clean and down."""
    yield None
    for swarm in known_swarms(manager):
        with engines.using(swarm.engines):
            yield swarm


def recorded_manager(record: Mapping[str, Any]) -> str | None:
    """The swarm manager a run directory's run.json names (a topology left `up`)."""
    return (record.get("hosts") or {}).get("manager")


def sweep_run(run_id: str, swarm: Swarm | None) -> Removed:
    """Everything of a run on the engines in use; on a swarm also each node's copy of
    the run's files (they may hold its keys)."""
    from vnetbench.stack import remove_run_objects
    from vnetbench.swarm.stack import remove_node_copies

    removed = remove_run_objects(run_id)
    for node in swarm.engines if swarm else []:
        remove_node_copies(node, run_id)
    return removed


def check_node_helpers(topology: Topology, nodes: list[str]) -> None:
    """No agent or switch takes the name of a node's fabric helper (fabric-NODE,
    placement.node_service_name) on a node the topology's hosts did not name."""
    helpers = {f"{FABRIC_SERVICE}-{node}" for node in nodes}
    taken = sorted(helpers & ({c.name for c in topology.agent_containers()}
                              | set(topology.switches)))
    if taken:
        raise UserError(f"Topology '{topology.name}' cannot run on this swarm: "
                        f"{', '.join(taken)} is also the name of a swarm node's fabric "
                        "helper (fabric-NODE). Rename it and run again.")


def stack_maker(topology: Topology) -> StackMaker:
    """How this run's stacks are made: on this machine's engine, or on the swarm the
    topology names (found and checked now, before anything starts)."""
    if topology.engine != "swarm":
        return one_engine
    from vnetbench.swarm.cluster import discover, manager_endpoint
    from vnetbench.swarm.placement import site_nodes
    from vnetbench.swarm.stack import SwarmStack

    swarm = discover(manager_endpoint(topology))
    site_nodes(topology, swarm.names)  # a site on a node the swarm lacks: said now
    check_node_helpers(topology, swarm.names)
    return lambda rendered, stack_topology: SwarmStack(rendered, stack_topology, swarm)
