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

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from python_on_whales import DockerClient

from vnetbench.engines.base import Engine, Removed, RenderedRun
from vnetbench.engines.compose import ComposeEngine
from vnetbench.engines.docker import DockerEngine, NodeEngine, at_the_boundary
from vnetbench.engines.swarm.cluster import Swarm
from vnetbench.engines.swarm.deployment import SwarmDeployment, remove_node_copies
from vnetbench.errors import UserError
from vnetbench.runtime.labels import FABRIC_SERVICE

if TYPE_CHECKING:
    from vnetbench.model.topology import Topology

SEGMENT_MTU = 1450  # an overlay network's default: 1500 less VXLAN's 50 bytes


@at_the_boundary
class SwarmEngine(DockerEngine):
    """The nodes of a Docker Swarm: a container's calls go to the node that hosts it."""

    name = "swarm"
    summary = "a Docker Swarm's nodes"

    def __init__(self, swarm: Swarm) -> None:
        self.swarm = swarm
        self.nodes = {node.name: node for node in swarm.engines}
        self.placed: dict[str, str] = {}  # container name -> node name

    @classmethod
    def helper_services(cls, topology: Topology) -> dict[str, str]:
        """A fabric helper per node (placement.node_service_name), on the nodes the
        topology names."""
        return {f"{FABRIC_SERVICE}-{node}": f"the fabric helper of swarm node '{node}'"
                for node in sorted(set(topology.engine.hosts.values()))}

    @classmethod
    def for_topology(cls, topology: Topology) -> SwarmEngine:
        """The swarm the topology names, found and checked now (before anything starts)."""
        from vnetbench.engines.swarm.cluster import discover, manager_endpoint
        from vnetbench.engines.swarm.placement import site_nodes

        swarm = discover(manager_endpoint(topology))
        site_nodes(topology, swarm.names)  # a site on a node the swarm lacks: said now
        check_node_helpers(topology, swarm.names)
        return cls(swarm)

    @classmethod
    def known(cls, record: Mapping[str, Any]) -> list[Engine]:
        """The swarm the run's record names (else $VNETBENCH_SWARM's, this machine's own,
        the test swarm), each if it answers."""
        return [cls(swarm) for swarm in known_swarms(recorded_manager(record))]

    @classmethod
    def recorded(cls, record: Mapping[str, Any]) -> Engine | None:
        from vnetbench.engines.swarm.cluster import discover

        manager = recorded_manager(record)
        return cls(discover(manager)) if manager else None

    def hosts(self) -> list[tuple[str, DockerClient]]:
        return [(name, node.quick) for name, node in self.nodes.items()]

    def client_at(self, where: str, quick: bool = False) -> DockerClient:
        node = self.nodes.get(where)
        if node is None:
            return ComposeEngine().client_at("", quick)
        return node.quick if quick else node.client

    def host_of(self, container: str) -> str:
        """A container not placed by its deployment (a helper, a run brought up by
        another process) is looked for on every node once."""
        if container not in self.placed:
            for where, client in self.hosts():
                if client.container.exists(container):
                    self.placed[container] = where
                    break
        return self.placed.get(container, "")

    def adjust(self, topology: Topology) -> Topology:
        return segment_mtus(topology)

    def placed_beside(self, name: str, target: str) -> None:
        self.placed[name] = self.host_of(target)

    def endpoint(self, where: str) -> str | None:
        node = self.nodes.get(where) or self.nodes.get(self.swarm.names[0])
        return node.endpoint if node else None

    def deployment(self, rendered: RenderedRun, topology: Topology) -> SwarmDeployment:
        return SwarmDeployment(rendered, topology, self, self.swarm, self.placed)

    def remove_run(self, run_id: str | None) -> Removed:
        """Everything of a run on every node, and each node's copy of the run's files
        (they may hold its keys)."""
        removed = super().remove_run(run_id)
        if run_id is not None:  # every node at once: one container run on each
            with ThreadPoolExecutor() as pool:
                list(pool.map(lambda node: remove_node_copies(node, run_id),
                              self.swarm.engines))
        return removed

    @property
    def engines(self) -> list[NodeEngine]:
        return self.swarm.engines


def segment_mtus(topology: Topology) -> Topology:
    """The topology as its engine runs it: on a swarm, a segment without a declared MTU
    has the overlay network's (the overlays fit their tunnels to it; a swarm on jumbo
    frames declares `mtu: 1500` in its links)."""
    links = {name: (profile if profile.mtu else profile.model_copy(update={"mtu": SEGMENT_MTU}))
             for name, profile in (("site", topology.links.site),
                                   ("backbone", topology.links.backbone))}
    return topology.model_copy(update={"links": topology.links.model_copy(update=links)})


def known_swarms(manager: str | None = None) -> list[Swarm]:
    """Swarms that may hold runs, for clean and down: the one this manager (or
    $VNETBENCH_SWARM) names; else this machine's own swarm, then the test swarm
    (vnetbench's own containers: runs left there are its own), each if it answers."""
    from vnetbench.engines.swarm.cluster import (
        TEST_SWARM,
        discover,
        named_manager,
        own_swarm_manager,
        test_swarm_manager,
    )
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


def recorded_manager(record: Mapping[str, Any]) -> str | None:
    """The swarm manager a run directory's run.json names (a topology left `up`)."""
    return (record.get("hosts") or {}).get("manager")


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


