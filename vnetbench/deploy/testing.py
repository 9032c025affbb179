"""Running topologies for tests of an overlay: what the pytest plugin hands out.

`running_topology` renders a topology exactly as `vnetbench run` does and brings
it up through the same lifecycle (vnetbench.deploy.lifecycle), on the engine the
topology names: the rendered compose file as it is (the same file a user runs
by hand), or a swarm's nodes. Teardown does not rely on `compose down` or on
Ryuk: it removes every container, network and volume carrying the run's label
(probes and shapers started outside Compose included) and the fabric's
DOCKER-USER rule, however the test ends (failure, Ctrl-C, SIGTERM). Results are
the typed ones the scenarios use (PingResult, IperfResult).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from vnetbench.deploy.lifecycle import StackSpec, prepare, running
from vnetbench.engines import ENGINE_NAMES, local, require_engine
from vnetbench.engines.allocation import claimed_block
from vnetbench.engines.stack import HELPER_ROLES, Stack
from vnetbench.errors import UserError
from vnetbench.measure.events import events_frame
from vnetbench.measure.iperf import IperfResult, iperf_server
from vnetbench.measure.ping import PingResult, run_ping
from vnetbench.model.topology import LinkProfile, Topology, load_topology, parse_topology
from vnetbench.overlays import Overlay, overlay_for
from vnetbench.runtime import labels
from vnetbench.runtime.labels import current_owner
from vnetbench.runtime.paths import TOPOLOGIES
from vnetbench.runtime.rundir import new_run_id
from vnetbench.shaping.apply import check_shaping, shape_run


class ProbeFailed(AssertionError):
    """A measurement gave no result at all (not even a dead path's)."""


@dataclass(frozen=True)
class Node:
    """One container of the system under test, by the topology's name for it."""

    name: str  # agent1, switch2, conductor, pool-switch1-1...
    role: str  # agent, switch, conductor...
    container: str  # the Docker container's name
    service: str  # the compose service


@dataclass(frozen=True)
class ExecResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class RunningTopology:
    """A topology that is up: its nodes, commands in them, measurements, faults."""

    def __init__(self, topology: Topology, overlay: Overlay, stack: Stack) -> None:
        self.topology = topology
        self.overlay = overlay
        self.rendered = stack.rendered
        self.stack = stack
        self.engine = stack.engine
        self.directory = stack.rendered.directory
        self.unready = stack.unready  # agent containers that never became ready
        self._probes = 0

    @property
    def run_id(self) -> str:
        return self.rendered.run_id

    @property
    def nodes(self) -> dict[str, Node]:
        """The system under test's containers by node name (helpers left out)."""
        prefix = f"{self.rendered.project}-"
        found = {}
        for container in self.stack.containers():
            role = container.labels.get(labels.ROLE, "")
            if role in HELPER_ROLES or not container.name.startswith(prefix):
                continue
            service = container.name.removeprefix(prefix)
            name = container.labels.get(labels.NODE, service)
            found[name] = Node(name, role, container.name, service)
        return found

    def node(self, name: str) -> Node:
        """A node by its name; an agent's name also finds the container it runs in."""
        nodes = self.nodes
        if name in nodes:
            return nodes[name]
        if any(agent.name == name for agent in self.topology.agents):
            container = self.topology.container_of(name)
            if container in nodes:
                return nodes[container]
        raise KeyError(f"no node '{name}' in topology '{self.topology.name}' "
                       f"(nodes: {', '.join(sorted(nodes))})")

    def role(self, role: str) -> list[Node]:
        return [node for node in self.nodes.values() if node.role == role]

    def exec(self, node: str, command: str | Sequence[str]) -> ExecResult:
        """Run a command in a node (a string goes to `sh -c`); never raises on its exit."""
        argv = ["sh", "-c", command] if isinstance(command, str) else list(command)
        done = self.engine.execute(self.node(node).container, argv)
        return ExecResult(done.exit_code, done.stdout, done.stderr)

    def logs(self, node: str | None = None) -> str:
        """One node's log, or every node's, each line prefixed with its container."""
        if node is not None:
            return self.engine.logs(self.node(node).container)
        return "\n".join(line for source in self.stack.logs()
                         for line in (f"{source.container}| {text}"
                                      for text in source.text.splitlines()))

    def events(self, event: str | None = None) -> pd.DataFrame:
        """The overlay's events (joins, routes...) parsed from every node's log."""
        frame = events_frame(self.stack.logs(), self.overlay.event_patterns())
        return frame if event is None else frame[frame["event"] == event]

    def address(self, agent: str) -> str:
        """Where other agents reach `agent` through the overlay."""
        return self.overlay.target_address(self.topology, self.rendered.plan, agent)

    def ping(self, source: str, target: str, count: int = 10, interval_s: float = 0.05,
             size: int | None = None) -> PingResult:
        """`count` pings from agent `source` to agent `target` through the overlay."""
        run = run_ping(self.stack, self.node(source).container, self.address(target),
                       count, interval_s, size, self._raw("ping"),
                       timeout_seconds=count * interval_s + 15)
        if run.result is None:
            raise ProbeFailed(f"ping {source} -> {target} gave no result: {run.error}")
        return run.result

    def throughput(self, source: str, target: str, seconds: float = 3.0,
                   options: Sequence[str] = ()) -> IperfResult:
        """One iperf3 TCP test from `source` to `target` (extra iperf3 options allowed)."""
        name = f"{self.rendered.project}-test-iperf-{self._next()}"
        with iperf_server(self.stack, self.node(target).container, self.address(target),
                          name) as server:
            run = server.run(self.node(source).container, seconds, list(options),
                             self._raw("iperf3"))
        if run.result is None:
            raise ProbeFailed(f"iperf3 {source} -> {target} gave no result: {run.error}")
        return run.result

    def shape(self, segment: str, **profile: Any) -> dict[str, Any]:
        """Change a segment's links ("site" or "backbone") while the topology runs;
        returns what the kernel reports as applied."""
        if segment not in ("site", "backbone"):
            raise UserError(f"shape({segment!r}, ...): the segment is 'site' or 'backbone'.")
        links = self.topology.links.model_copy(
            update={segment: link_profile(profile, f"shape({segment!r}, ...)")})
        shaped = self.topology.model_copy(update={"links": links})
        check_shaping(shaped)  # refused before it replaces what runs
        self.topology = shaped
        return shape_run(self.stack, self.topology)

    def kill(self, node: str) -> None:
        self.engine.signal([self.node(node).container], "KILL")

    def restart(self, node: str) -> None:
        """Start a node again (killed or not); its links are shaped again."""
        self.engine.restart(self.node(node).container)
        shape_run(self.stack, self.topology)

    def _next(self) -> int:
        self._probes += 1
        return self._probes

    def _raw(self, tool: str) -> Path:
        return self.directory / "raw" / f"{tool}-{self._next()}.txt"


def link_profile(profile: Mapping[str, Any], source: str) -> LinkProfile:
    """A link profile given in a test, its problems in one paragraph."""
    try:
        return LinkProfile(**profile)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: "
                             f"{str(e['msg']).removeprefix('Value error, ')}"
                             for e in error.errors())
        raise UserError(f"{source} is not a valid link profile: {problems}. Give e.g. "
                        "rate='100mbit', delay='10ms', jitter='2ms', loss='1%'.") from None


def topology_from(source: str | Path | Mapping[str, Any] | Topology, overlay: str | None,
                  links: Mapping[str, Mapping[str, Any]] | None) -> Topology:
    """A topology from a file (as given, else among vnetbench's own topologies), a
    mapping (a topology file's content) or a Topology; overlay and links override."""
    from vnetbench.overlays import OVERLAY_NAMES, check_overlay_options

    if isinstance(source, Topology):
        topology = source
    elif isinstance(source, Mapping):
        topology = check_overlay_options(parse_topology(
            dict(source), "the test's topology", overlays=OVERLAY_NAMES, engines=ENGINE_NAMES),
            "the test's topology")
    else:
        path = Path(source)
        if not path.exists() and (TOPOLOGIES / path).is_file():
            path = TOPOLOGIES / path
        topology = check_overlay_options(
            load_topology(path, overlays=OVERLAY_NAMES, engines=ENGINE_NAMES), str(path))
    update: dict[str, Any] = {}
    if overlay:
        update["overlay"] = overlay
    if links:
        update["links"] = topology.links.model_copy(update={
            segment: link_profile(profile, f"links={{{segment!r}: ...}}")
            for segment, profile in links.items()})
    return topology.model_copy(update=update) if update else topology


@contextmanager
def running_topology(source: str | Path | Mapping[str, Any] | Topology, directory: Path,
                     overlay: str | None = None,
                     links: Mapping[str, Mapping[str, Any]] | None = None,
                     ) -> Iterator[RunningTopology]:
    """Bring a topology up, shaped, in `directory`, as `vnetbench run` does (the same
    lifecycle: its engine, checks, block retries); whatever happens, keep its logs
    (directory/logs) and remove everything of it."""
    topology = topology_from(source, overlay, links)
    require_engine()
    adapter = overlay_for(topology)
    adapter.require_available()
    prepared = prepare(topology, adapter, images=local().project_images())
    with claimed_block() as claim:
        spec = StackSpec(prepared, new_run_id(topology.name), directory, current_owner())
        with running(spec, claim) as stack:
            warn_unready(stack.unready)
            yield RunningTopology(prepared.topology, adapter, stack)


def warn_unready(agents: list[str]) -> None:
    """A test's topology came up without these agents (named, as `run` names them)."""
    if agents:
        warnings.warn(f"{len(agents)} agent container(s) did not become ready: "
                      f"{', '.join(agents)}", stacklevel=4)
