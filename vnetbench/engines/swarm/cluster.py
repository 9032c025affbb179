"""A swarm as vnetbench reaches it: its manager, its nodes and their engines.

Each node's Docker endpoint is the node label `vnetbench.endpoint` (set by
`vnetbench swarm up` for the test swarm; on real hosts `docker node update
--label-add vnetbench.endpoint=ssh://user@host NODE`); the manager answers at
the endpoint in use.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from python_on_whales.exceptions import DockerException

from vnetbench.engines.docker import QUICK_CALL_SECONDS, NodeEngine, bounded_client, docker, quick
from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.model.topology import Topology
from vnetbench.terminal.ui import waiting

ENDPOINT_LABEL = "vnetbench.endpoint"
MANAGER_VARIABLE = "VNETBENCH_SWARM"  # a manager's endpoint, when the topology names none
TEST_SWARM_LABEL = "vnetbench.engines.swarm"  # the test swarm's node containers (testbed.py)
TEST_SWARM = "test"  # engine: {manager: test} (or VNETBENCH_SWARM=test): the test swarm, only so
TEST_SOCKETS = Path("/run/vnetbench-swarm")  # its nodes' engines answer under here
TEST_SWARM_NOTE = "test swarm: Docker-in-Docker nodes sharing this one machine's kernel and cores"
TEST_SWARM_HOSTS = "test swarm, one machine"  # the 'ran on' column's words for it
IMAGE_LOAD_SECONDS = 900


@dataclass(frozen=True)
class SwarmNode:
    engine: NodeEngine
    manager: bool

    @property
    def name(self) -> str:
        return self.engine.name


@dataclass(frozen=True)
class Swarm:
    manager_endpoint: str
    nodes: tuple[SwarmNode, ...]  # the manager's own node first, then by name

    @property
    def is_test(self) -> bool:
        """vnetbench's test swarm (`vnetbench swarm up`): its figures are one machine's."""
        return is_test_endpoint(self.manager_endpoint)

    @property
    def names(self) -> list[str]:
        return [node.name for node in self.nodes]

    @property
    def engines(self) -> list[NodeEngine]:
        return [node.engine for node in self.nodes]


NO_SWARM = ("No Docker Swarm to run on: {why}. For a test swarm on this machine run "
            "'vnetbench swarm up' (Docker-in-Docker nodes) and name it: 'manager: test' in "
            f"the topology's engine section or {MANAGER_VARIABLE}=test; for real hosts, "
            "name a manager's endpoint in the topology's engine section ('manager: "
            "ssh://user@host') or in "
            f"{MANAGER_VARIABLE}, and give each node its endpoint as the node label "
            f"{ENDPOINT_LABEL}.")


def is_test_endpoint(endpoint: str) -> bool:
    return endpoint.startswith(f"unix://{TEST_SOCKETS}/")


def named_manager() -> str | None:
    """$VNETBENCH_SWARM, if set (a manager's endpoint, or 'test')."""
    return os.environ.get(MANAGER_VARIABLE) or None


def test_node_endpoint(node: str) -> str:
    """Where a test swarm node's engine answers on this machine."""
    return f"unix://{TEST_SOCKETS / node / 'docker.sock'}"


def test_swarm_manager() -> str | None:
    """The test swarm's manager endpoint, if its manager node runs here."""
    try:
        found = quick.container.list(filters=[("label", f"{TEST_SWARM_LABEL}=manager")])
    except DockerException:
        return None
    return test_node_endpoint(str(found[0].config.hostname)) if found else None


def resolve_manager(named: str, source: str) -> str:
    """A named manager's endpoint: 'test' is the test swarm's manager, if it is up."""
    if named != TEST_SWARM:
        return named
    found = test_swarm_manager()
    if found is None:
        raise EnvironmentProblem(NO_SWARM.format(
            why=f"{source} names the test swarm, which is not up on this machine"))
    return found


def manager_endpoint(topology: Topology) -> str:
    """The topology's manager, else $VNETBENCH_SWARM ('test': the test swarm's
    manager), else this machine's engine if it manages a swarm. The test swarm only
    when named: it measures one machine, not hosts."""
    if topology.engine.manager:
        return resolve_manager(topology.engine.manager, "the topology's 'engine: {manager: test}'")
    if named_manager():
        return resolve_manager(str(named_manager()), f"{MANAGER_VARIABLE}=test")
    endpoint = own_swarm_manager()
    if endpoint is None:
        raise EnvironmentProblem(NO_SWARM.format(
            why="no manager is named and this machine's engine is no swarm manager"))
    return endpoint


def own_swarm_manager() -> str | None:
    """This machine's engine, if it manages a swarm."""
    try:
        info = docker.system.info()
    except DockerException:
        raise EnvironmentProblem(NO_SWARM.format(why="the local engine does not answer")) from None
    if getattr(info.swarm, "control_available", False):
        return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    return None


def discover(endpoint: str) -> Swarm:
    """The swarm's ready, active nodes and their endpoints, asked of a manager."""
    client = bounded_client(QUICK_CALL_SECONDS, host=endpoint)
    try:
        listed = client.node.list()
        contacted = getattr(client.system.info().swarm, "node_id", None)
    except DockerException as error:
        raise EnvironmentProblem(NO_SWARM.format(
            why=f"the manager at {endpoint} refused ({(error.stderr or str(error)).strip()})")
        ) from None
    nodes, missing = [], []
    for node in listed:
        if node.status.state != "ready" or node.spec.availability != "active":
            continue
        hostname = str(node.description.hostname)
        manager = node.manager_status is not None and node.manager_status.leader is True
        node_endpoint = (node.spec.labels or {}).get(ENDPOINT_LABEL) or (
            endpoint if node.id == contacted else None)  # the manager asked
        if node_endpoint is None:
            missing.append(hostname)
            continue
        nodes.append(SwarmNode(NodeEngine(hostname, node_endpoint), manager))
    if missing:
        raise UserError(f"The swarm's nodes {', '.join(missing)} have no Docker endpoint "
                        f"vnetbench can reach: give each the node label {ENDPOINT_LABEL} "
                        f"(docker node update --label-add {ENDPOINT_LABEL}=ssh://user@host "
                        "NODE) and run again.")
    nodes.sort(key=lambda n: (not n.manager, n.name))
    return Swarm(endpoint, tuple(nodes))


def node_facts(node: NodeEngine) -> dict[str, Any]:
    """run.json's record of a node: engine version, kernel, cores."""
    try:
        info = node.quick.system.info()
    except DockerException as error:
        raise EnvironmentProblem(
            f"Swarm node {node.name} does not answer at {node.endpoint} "
            f"({(error.stderr or str(error)).strip()[-300:]}). Fix its endpoint "
            f"label {ENDPOINT_LABEL} or its engine, or drain it, and run again."
            ) from None
    return {"endpoint": node.endpoint, "engine": info.server_version,
            "kernel": info.kernel_version, "cores": info.n_cpu,
            "memory_gib": round((info.mem_total or 0) / 2**30, 1)}


def image_ids(node: NodeEngine, images: list[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for image in images:
        try:
            found[image] = str(node.quick.image.inspect(image).id)
        except DockerException:
            found[image] = None
    return found


def load_images(nodes: list[NodeEngine], images: list[str]) -> list[str]:
    """Each image onto every node that lacks it (or holds another build), by
    `docker save | docker load` over the node's endpoint: no registry needed."""
    local = {image: str(docker.image.inspect(image).id) for image in images}

    def load(node: NodeEngine) -> list[str]:
        there = image_ids(node, images)
        stale = [image for image in images if there[image] != local[image]]
        if stale:
            save = subprocess.Popen(["docker", "save", *stale], stdout=subprocess.PIPE)
            load = subprocess.Popen(["docker", "--host", node.endpoint, "load", "-q"],
                                    stdin=save.stdout, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            assert save.stdout is not None
            save.stdout.close()  # only `load` reads it: if load dies, save ends too
            try:
                _, errors = load.communicate(timeout=IMAGE_LOAD_SECONDS)
                save.wait(timeout=30)
            except subprocess.TimeoutExpired:
                load.kill()
                save.kill()
                errors = f"no end within {IMAGE_LOAD_SECONDS} s."
            if load.returncode != 0 or save.returncode != 0:
                raise EnvironmentProblem(f"Loading {', '.join(stale)} onto swarm node {node.name} "
                                         f"failed: {errors.strip()[-400:]} Check that the node's "
                                         "engine answers at its endpoint and has disk space.")
        return [f"{image} -> {node.name}" for image in stale]

    with waiting(f"images onto {len(nodes)} swarm node(s)"), ThreadPoolExecutor() as pool:
        return [line for lines in pool.map(load, nodes) for line in lines]
