"""A rendered run on a swarm: each node's share up through its own engine."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from ipaddress import IPv4Network
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from python_on_whales.exceptions import DockerException

from vnetbench.core.schema import HOSTS
from vnetbench.engines.base import Deployment, Removed, RenderedRun
from vnetbench.engines.docker import (
    ENGINE_CALL_SECONDS,
    DockerEngine,
    NodeEngine,
    at_the_boundary,
    bounded_client,
)
from vnetbench.engines.swarm.cluster import (
    TEST_SWARM_HOSTS,
    TEST_SWARM_NOTE,
    Swarm,
    load_images,
    node_facts,
)
from vnetbench.engines.swarm.gatekeepers import (
    ClockOffset,
    Gatekeeper,
    release_all,
    wait_for_marks,
)
from vnetbench.engines.swarm.placement import (
    node_service_name,
    node_share,
    overlay_name,
    placed_services,
    site_nodes,
    waves,
)
from vnetbench.errors import BlockTaken, EnvironmentProblem, UserError
from vnetbench.runtime import gate, labels
from vnetbench.runtime.images import TOOLS_IMAGE
from vnetbench.runtime.labels import project_name, run_labels
from vnetbench.terminal.ui import note, waiting

if TYPE_CHECKING:
    from vnetbench.model.topology import Topology

NODE_FILES_SECONDS = 300
FILE_MAKER_ROLES = {"ca"}  # services that write files others of the stack read (Nebula's CA)
VXLAN_BYTES = 50  # outer Ethernet, IP, UDP and VXLAN headers
NODE_RUNS = "/var/lib/vnetbench/runs"  # each node's copies of the run's stack directories
COPIED_DIRS = ("logs", "raw")  # not needed on the nodes
DOCKER_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)", re.MULTILINE)


@at_the_boundary
class SwarmDeployment(Deployment):
    """One rendered run spread over a swarm's nodes (see engines/swarm/engine.py)."""

    def __init__(self, rendered: RenderedRun, topology: Topology, engine: DockerEngine,
                 swarm: Swarm, placed: dict[str, str]) -> None:
        self.rendered, self.engine = rendered, engine
        self.swarm, self.topology = swarm, topology
        self.engine_placed = placed  # the engine's container -> node, filled here
        self.spec = yaml.safe_load(rendered.compose_file.read_text())
        self.sites = site_nodes(topology, swarm.names)
        self.placed = placed_services(self.spec, topology, self.sites, swarm.names)
        self.node_root = f"{NODE_RUNS}/{rendered.project}/{rendered.directory.name}"
        self.keepers: list[Gatekeeper] = []
        self.offsets: dict[str, ClockOffset] = {}
        self.facts: dict[str, dict[str, Any]] = {}

    # -- where things are -------------------------------------------------------
    def node(self, name: str) -> NodeEngine:
        return next(n.engine for n in self.swarm.nodes if n.name == name)

    def containers_by_node(self) -> dict[str, str]:
        """Container name -> node, for every service of the run."""
        return {self.container(name): node for node in self.placed
                for name in self.services_on(node)}

    def services_on(self, node: str, wave: list[str] | None = None) -> list[str]:
        """The services of a node's share (of one wave), by their names there."""
        return [node_service_name(name, self.spec["services"][name], node)
                for name in self.placed[node] if wave is None or name in wave]

    def placement_settings(self) -> dict[str, str]:
        """'hosts' column: per node, the sites and other roles it ran."""
        parts = []
        for node, services in self.placed.items():
            roles = []
            for switch in (s for s, n in self.sites.items() if n == node):
                agents = len(self.topology.agents_on(switch))
                roles.append(f"{switch}+{agents} agent{'s' if agents != 1 else ''}")
            roles += sorted({str(self.spec["services"][s]["labels"].get(labels.ROLE))
                             for s in services} - {"switch", "agent", "fabric", "router",
                                                   "hub"})
            parts.append(f"{node}: {', '.join(roles) or 'helpers'}")
        where = "; ".join(parts)
        # the test swarm's figures are one machine's (run.json's record says more)
        return {HOSTS: f"{TEST_SWARM_HOSTS}: {where}" if self.swarm.is_test else where}

    def where_record(self) -> dict[str, Any]:
        """run.json: the swarm's nodes (engine, kernel, cores, clock offset), and where
        each site and service ran."""
        return {
            "manager": self.swarm.manager_endpoint,
            # figures of the test swarm are one machine's, not separate hosts'
            "test_swarm": self.swarm.is_test,
            **({"note": TEST_SWARM_NOTE} if self.swarm.is_test else {}),
            "nodes": {name: {**self.facts.get(name, {}),
                             **({"clock_offset_ms": round(o.offset_s * 1000, 3),
                                 "clock_uncertainty_ms": round(o.uncertainty_s * 1000, 3),
                                 "clock_corrected": o.correction_s != 0}
                                if (o := self.offsets.get(name)) else {})}
                      for name in self.swarm.names},
            "sites": self.sites,
            "services": self.placed,
        }

    # -- bring-up -----------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return self.rendered.run_id

    def container(self, service: str) -> str:
        return f"{self.rendered.project}-{service}"

    def up(self, timeout_seconds: int, unready: Callable[[str], list[str]]) -> list[str]:
        self.engine_placed.update(self.containers_by_node())
        not_ready: list[str] = []
        nodes = [self.node(name) for name in self.placed]
        with ThreadPoolExecutor() as pool:
            self.facts = dict(zip(self.swarm.names, pool.map(
                node_facts, self.swarm.engines), strict=True))
        load_images(nodes, self.images())
        with waiting(f"{len(nodes)} swarm node(s): overlay networks, the run's files, "
                     "gatekeepers and clock offsets"):
            self.create_networks()
            self.copy_run_directory(nodes)
            self.start_keepers(nodes)
        shares = self.write_shares()
        ordered = waves(self.spec)
        waited = False
        for number, wave in enumerate(ordered, 1):
            with waiting(f"bringing up {self.rendered.project} on {len(shares)} swarm "
                         f"node(s), wave {number} of {len(ordered)} (servers' health checks)"), \
                    ThreadPoolExecutor() as pool:
                jobs = [pool.submit(self.up_on, node, path, wave, timeout_seconds)
                        for node, path in shares.items()]
                errors = [error for job in jobs if (error := job.result())]
            if errors:
                not_ready += unready(" | ".join(errors))
                waited = True
            self.share_made_files(wave)
        # compose's --wait knows only health checks: agents without one are ready by
        # their marks, which the stack reads through the gatekeepers (once: a wave that
        # failed was waited for, and named, already)
        return not_ready if waited else unready("")

    def share_made_files(self, wave: list[str]) -> None:
        """Files a service of this wave wrote into its node's copy of the run (Nebula's
        CA: certificates the later waves read) go to every other node's copy."""
        for maker, services in self.placed.items():
            written = [path for name in services if name in wave
                       and self.spec["services"][name].get("labels", {}).get(labels.ROLE)
                       in FILE_MAKER_ROLES for path in writable_mounts(self.spec["services"][name])]
            if not written:
                continue
            archive = self.on_node(self.node(maker), ["tar", "-c", "-C", self.node_root,
                                                      *written])
            for node in self.placed:
                if node != maker:
                    self.on_node(self.node(node), ["tar", "-x", "-C", self.node_root], archive)

    def images(self) -> list[str]:
        used = {str(s["image"]) for s in self.spec["services"].values() if "image" in s}
        return sorted(used | {TOOLS_IMAGE})

    def create_networks(self) -> None:
        """The run's networks as attachable internal overlays, made on the manager."""
        for key, network in self.spec["networks"].items():
            mtu = (network.get("driver_opts") or {}).get("com.docker.network.driver.mtu")
            # the overlay driver's MTU option is the underlay's: its interfaces get 50 less
            options = [f"--opt=com.docker.network.driver.mtu={int(mtu) + VXLAN_BYTES}"
                       ] if mtu else []
            tags = [f"--label={k}={v}" for k, v in (network.get("labels") or {}).items()]
            subnet = IPv4Network(network["ipam"]["config"][0]["subnet"])
            try:
                made = subprocess.run(
                    ["docker", "--host", self.swarm.manager_endpoint, "network", "create",
                     "--driver=overlay", "--attachable", "--internal", f"--subnet={subnet}",
                     f"--ip-range={dynamic_range(subnet)}", *options, *tags,
                     overlay_name(self.rendered.project, key)],
                    capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                raise EnvironmentProblem(
                    f"The swarm manager at {self.swarm.manager_endpoint} did not "
                    "create the run's overlay network within 120 s.") from None
            if made.returncode != 0:
                refused = made.stderr.strip()
                if "overlap" in refused.lower():
                    raise BlockTaken(self.rendered.plan.block, refused.splitlines()[-1])
                raise EnvironmentProblem(f"The swarm refused the overlay network {key}: {refused}")

    def copy_run_directory(self, nodes: list[NodeEngine]) -> None:
        """The stack directory (configs, keys, the gate) onto each node, by a tar stream
        into a helper container: the node's engine is all it takes."""
        archive = io.BytesIO()
        # dereference: the overlay's folders link to the run's scratch directory
        with tarfile.open(fileobj=archive, mode="w", dereference=True) as tar:
            for path in sorted(self.rendered.directory.iterdir()):
                if path.name not in COPIED_DIRS:
                    tar.add(path, arcname=path.name)
        for node in nodes:
            self.on_node(node, ["sh", "-c", f"mkdir -p {self.node_root} && "
                                f"tar -x -C {self.node_root}"], archive.getvalue())

    def on_node(self, node: NodeEngine, argv: list[str], data: bytes = b"") -> bytes:
        return on_node(node, self.run_id, argv, data)

    def start_keepers(self, nodes: list[NodeEngine]) -> None:
        """A keeper on every node, started on all nodes at once (each start is engine
        calls on its own node: 2-3 s each one after another, on two nodes); then each
        node's clock read in turn (its offset is the sample with the shortest round
        trip, which a read beside another's would lengthen)."""
        networks = [overlay_name(self.rendered.project, key) for key in self.spec["networks"]]
        keepers = [Gatekeeper(node, self.run_id, self.container(f"gatekeeper-{node.name}"),
                              f"{self.node_root}/{gate.GATE_DIR}") for node in nodes]
        for keeper in keepers:  # registered first: a start that fails is still removed
            self.keepers.append(keeper)
            self.engine_placed[keeper.name] = keeper.node.name
        with ThreadPoolExecutor() as pool:
            list(pool.map(lambda keeper: keeper.start(networks, self.node_root), keepers))
        for keeper in keepers:
            self.offsets[keeper.node.name] = keeper.clock()

    def write_shares(self) -> dict[str, Path]:
        shares = {}
        for node, services in self.placed.items():
            share = node_share(self.spec, services, node, self.rendered.project,
                               str(self.rendered.directory), self.node_root)
            path = self.rendered.directory / f"compose.{node}.yml"
            path.write_text(yaml.safe_dump(share, sort_keys=False, width=100))
            shares[node] = path
        return shares

    def up_on(self, node: str, path: Path, wave: list[str], timeout_s: int) -> str | None:
        """One wave of one node's services up and healthy; the error, if any."""
        services = self.services_on(node, wave)
        if not services:
            return None
        compose = bounded_client(ENGINE_CALL_SECONDS, host=self.node(node).endpoint,
                                 compose_files=[path],
                                 compose_project_name=self.rendered.project).compose
        try:
            compose.up(services, detach=True, wait=True, wait_timeout=timeout_s, quiet=True)
        except DockerException as error:
            return f"{node}: {(error.stderr or str(error)).strip()[-400:]}"
        return None

    def file_changed(self, path: Path) -> None:
        """Each node's copy rewritten in place (`cat >`: same inode, which a bind
        mount of the file itself follows)."""
        target = f"{self.node_root}/{path.relative_to(self.rendered.directory)}"
        for node in self.placed:
            self.on_node(self.node(node), ["sh", "-c", 'cat > "$0"', target], path.read_bytes())

    # -- the gate, on every node --------------------------------------------------
    def write_start(self, number: int) -> None:
        for keeper in self.keepers:
            keeper.write_start(number)

    def wait_for_marks(self, names: list[str], kind: str, start: int,
                       timeout_s: float) -> list[str]:
        return wait_for_marks(self.keepers, names, kind, start, timeout_s)

    def release(self) -> float:
        released, opened = release_all(self.keepers, self.offsets)
        self.release_skew_ms = (max(opened.values()) - min(opened.values())) * 1000
        return released

    # -- logs on this machine's clock --------------------------------------------
    def on_manager_clock(self, text: str, where: str) -> str:
        offset = self.offsets.get(where)
        if offset is None or not offset.correction_s:
            return text
        return corrected_times(text, offset.correction_s)

    def on_node_clock(self, moment: datetime, where: str) -> datetime:
        offset = self.offsets.get(where)
        return moment + timedelta(seconds=offset.correction_s) if offset else moment

    # -- teardown -------------------------------------------------------------------
    def down(self) -> Removed:
        """Every node: the run's containers, networks and volumes by label, and the
        node's copy of the run's files."""
        for keeper in self.keepers:
            keeper.close()
        return self.engine.remove_run(self.run_id)


def on_node(node: NodeEngine, run_id: str, argv: list[str], data: bytes = b"") -> bytes:
    """A helper of the tools image with the node's copies of runs mounted."""
    label = [f"--label={k}={v}" for k, v in run_labels(run_id, "node-files", node.name).items()]
    try:
        done = subprocess.run(
            ["docker", "--host", node.endpoint, "run", "--rm", "-i", "--pull=never", *label,
             "-v", f"{NODE_RUNS}:{NODE_RUNS}", TOOLS_IMAGE, *argv],
            input=data, capture_output=True, timeout=NODE_FILES_SECONDS)
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(
            f"The run's files on swarm node {node.name} were not written or "
            f"read within {NODE_FILES_SECONDS} s: check that its engine answers "
            f"at {node.endpoint}.") from None
    if done.returncode != 0:
        raise EnvironmentProblem(
            f"The run's files on swarm node {node.name} could not be written or "
            f"read: {done.stderr.decode(errors='replace').strip()[-400:]}")
    return done.stdout


def remove_node_copies(node: NodeEngine, run_id: str) -> None:
    """The node's copy of a run's files (configs, keys) goes with the run; if it
    cannot, the user is told where it stays."""
    try:
        on_node(node, run_id, ["rm", "-rf", f"{NODE_RUNS}/{project_name(run_id)}"])
    except UserError as error:
        note(f"{error} Remove {NODE_RUNS}/{project_name(run_id)} on that node by "
             "hand: it may hold the run's private keys.", style="yellow")


def writable_mounts(service: dict[str, Any]) -> list[str]:
    """The run-directory paths (relative) a service mounts writable."""
    found = []
    for volume in service.get("volumes", []):
        if isinstance(volume, str) and volume.startswith("./") and not volume.endswith(":ro"):
            found.append(volume.split(":")[0].removeprefix("./"))
    return found


def dynamic_range(subnet: IPv4Network) -> IPv4Network:
    """Where the swarm may pick addresses itself (each node's load-balancer endpoint,
    the gatekeepers): the top /25 of the subnet, which the address plan leaves free
    (agents count up from .10, at most 1000 per site of 4096 addresses)."""
    return list(subnet.subnets(new_prefix=25))[-1]


def corrected_times(text: str, correction_s: float) -> str:
    """Docker's line timestamps and the gate's release stamps minus a node's offset."""
    def docker_time(found: re.Match[str]) -> str:
        moment = datetime.fromisoformat(found[1].replace("Z", "+00:00"))
        shifted = (moment - timedelta(seconds=correction_s)).astimezone(UTC)
        return shifted.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def stamp(found: re.Match[str]) -> str:
        seconds = float(found["seconds"].replace(",", ".")) - correction_s
        return found[0].replace(found["seconds"], f"{seconds:.6f}")

    return gate.STAMP.sub(stamp, DOCKER_TIME.sub(docker_time, text))
