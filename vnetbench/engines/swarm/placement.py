"""Which node runs what, and each node's share of a rendered compose file.

Pure functions of the compose file, the topology and the nodes: a site (a
switch and its agents) stays on one node; the conductor and any other
single service run on the first node; the fabric helper runs on every node.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.model.topology import Topology
from vnetbench.runtime import labels

EVERY_NODE_ROLES = {"fabric"}  # host-network helpers: one per node


def site_nodes(topology: Topology, nodes: Sequence[str]) -> dict[str, str]:
    """Switch -> node: the topology's `hosts`, else the switches spread over the nodes
    in turn (switch k on node k mod n, nodes in name order)."""
    if not nodes:
        raise EnvironmentProblem("The swarm has no node that can run containers (every node is "
                                 "drained or down). Make a node available ('docker node update "
                                 "--availability active NODE') and run again.")
    unknown = sorted({node for node in topology.engine.hosts.values() if node not in nodes})
    if unknown:
        raise UserError(f"The topology places sites on {', '.join(unknown)}, which the swarm "
                        f"does not have (its nodes: {', '.join(nodes)}). Name nodes of the "
                        "swarm in the engine section's 'hosts', or leave them out to spread the "
                        "sites.")
    return {switch: topology.engine.hosts.get(switch, nodes[index % len(nodes)])
            for index, switch in enumerate(topology.switches)}


def node_of_service(service: Mapping[str, Any], topology: Topology,
                    sites: Mapping[str, str], first: str) -> str | None:
    """The node of one service (None: every node)."""
    service_labels = service.get("labels", {})
    role, named = service_labels.get(labels.ROLE), service_labels.get(labels.NODE, "")
    if role in EVERY_NODE_ROLES:
        return None
    if named in sites:
        return sites[named]
    for container in topology.agent_containers():
        if container.name == named:
            return sites[container.switch]
    return str(topology.engine.hosts.get(str(role), first))


def placed_services(compose: Mapping[str, Any], topology: Topology,
                    sites: Mapping[str, str], nodes: Sequence[str]) -> dict[str, list[str]]:
    """Node -> its services (a helper of every node appears under each)."""
    placed: dict[str, list[str]] = {node: [] for node in nodes}
    for name, service in compose["services"].items():
        node = node_of_service(service, topology, sites, nodes[0])
        for each in ([node] if node else nodes):
            placed[each].append(name)
    return {node: services for node, services in placed.items() if services}


def node_service_name(name: str, service: Mapping[str, Any], node: str) -> str:
    """A service's name in a node's share: a helper of every node gets the node's."""
    every = service.get("labels", {}).get(labels.ROLE) in EVERY_NODE_ROLES
    return f"{name}-{node}" if every else name


def node_share(compose: Mapping[str, Any], services: Sequence[str], node: str,
               project: str, run_root: str, node_root: str) -> dict[str, Any]:
    """A node's compose file: its services, the run's networks as the swarm's external
    overlays, bind mounts from the node's copy of the run directory, and only the
    dependencies that run on the same node (the others are up already: waves)."""
    share: dict[str, Any] = {"name": project, "services": {}, "networks": {}}
    used: set[str] = set()
    for name in services:
        service = copy.deepcopy(compose["services"][name])
        own = node_service_name(name, service, node)
        if "container_name" in service:
            service["container_name"] = f"{project}-{own}"
        depends = service.get("depends_on")
        if isinstance(depends, dict):
            kept = {dep: how for dep, how in depends.items() if dep in services}
            service["depends_on"] = kept
            if not kept:
                del service["depends_on"]
        elif isinstance(depends, list):
            service["depends_on"] = [dep for dep in depends if dep in services]
        if "volumes" in service:
            service["volumes"] = [node_volume(v, run_root, node_root)
                                  for v in service["volumes"]]
        networks = service.get("networks", {})
        used |= set(networks if isinstance(networks, (dict, list)) else [])
        share["services"][own] = service
    for key in sorted(used):
        share["networks"][key] = {"external": True, "name": overlay_name(project, key)}
    if not share["networks"]:
        del share["networks"]
    return share


def node_volume(volume: Any, run_root: str, node_root: str) -> Any:
    """A bind mount of the run directory, from the node's copy of it."""
    def moved(source: str) -> str:
        if source.startswith("./"):
            return str(PurePosixPath(node_root) / source[2:])
        if source == run_root or source.startswith(run_root + "/"):
            return node_root + source[len(run_root):]
        return source
    if isinstance(volume, str):
        source, colon, rest = volume.partition(":")
        return f"{moved(source)}{colon}{rest}" if colon else volume
    if isinstance(volume, dict) and volume.get("type") == "bind":
        return {**volume, "source": moved(str(volume["source"]))}
    return volume


def overlay_name(project: str, key: str) -> str:
    return f"{project}_{key}"


def waves(compose: Mapping[str, Any]) -> list[list[str]]:
    """Services in start order: each wave depends only on earlier ones (a node's
    Compose cannot wait for a service on another node)."""
    services = compose["services"]
    depth: dict[str, int] = {}

    def level(name: str, seen: tuple[str, ...] = ()) -> int:
        if name not in depth:
            if name in seen:
                raise UserError(f"The compose file's services depend on each other in a "
                                f"circle ({' -> '.join((*seen, name))}).")
            depends = services[name].get("depends_on") or {}
            depth[name] = 1 + max((level(d, (*seen, name)) for d in depends
                                   if d in services), default=-1)
        return depth[name]

    for name in services:
        level(name)
    return [[n for n in services if depth[n] == w] for w in range(max(depth.values()) + 1)]
