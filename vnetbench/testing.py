"""Running topologies for tests of an overlay: what the pytest plugin hands out.

`running_topology` renders a topology exactly as `vnetbench run` does and brings
it up with testcontainers' Compose support, which runs the rendered compose
file as it is (the same file a user runs by hand) and addresses nodes by their
service. Teardown does not rely on `compose down` or on Ryuk: it removes every
container, network and volume carrying the run's label (probes and shapers
started outside Compose included) and the fabric's DOCKER-USER rule, however
the test ends (failure, Ctrl-C, SIGTERM). Results are the typed ones the
scenarios use (PingResult, IperfResult).
"""

from __future__ import annotations

import math
import subprocess
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import ValidationError

from vnetbench import labels
from vnetbench.allocation import claimed_block
from vnetbench.engine import Listed, docker, engine_facts, list_containers, require_engine
from vnetbench.errors import UserError
from vnetbench.labels import current_owner, run_filter
from vnetbench.measure.events import events_frame
from vnetbench.measure.iperf import IperfResult, iperf_server
from vnetbench.measure.ping import PingResult, run_ping
from vnetbench.overlays import Overlay, overlay_for
from vnetbench.paths import TOPOLOGIES
from vnetbench.render import render_run
from vnetbench.rundir import new_run_id
from vnetbench.runs.session import forget_private_keys, prepared_for_stack
from vnetbench.shaping.apply import check_shaping, shape_run
from vnetbench.stack import HELPER_ROLES, Stack, running, start_period_over
from vnetbench.topology import LinkProfile, Topology, load_topology, parse_topology

if TYPE_CHECKING:
    from testcontainers.compose import DockerCompose


# As vnetbench run (Stack.up's wait): how long the containers may take to be ready.
# The longest health-check start period a template gives is 90 s (vNet's servers), so
# every container is healthy, unhealthy or past its start period within it, twice
# over; compose's --wait had no bound: a container still "starting" after its start
# period is next checked an hour later (interval 1h), and the wait waited that hour.
BRING_UP_SECONDS = 180
POLL_SECONDS = 1.0


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

    def __init__(self, topology: Topology, overlay: Overlay, stack: Stack,
                 compose: DockerCompose) -> None:
        self.topology = topology
        self.overlay = overlay
        self.rendered = stack.rendered
        self.compose = compose
        self.stack = stack
        self.directory = stack.rendered.directory
        self.unready: list[str] = []  # agent containers that never became ready
        self._probes = 0

    @property
    def run_id(self) -> str:
        return self.rendered.run_id

    @property
    def nodes(self) -> dict[str, Node]:
        """The system under test's containers by node name (helpers left out)."""
        prefix = f"{self.rendered.project}-"
        found = {}
        for container in list_containers(run_filter(self.run_id)):
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
        try:
            out, err, code = self.compose.exec_in_container(argv, self.node(node).service)
        except subprocess.CalledProcessError as failed:
            return ExecResult(failed.returncode, _text(failed.stdout), _text(failed.stderr))
        return ExecResult(code, out, err)

    def logs(self, node: str | None = None) -> str:
        """One node's log, or every node's, each line prefixed with its container."""
        if node is not None:
            return str(docker.container.logs(self.node(node).container))
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
        run = run_ping(self.run_id, self.node(source).container, self.address(target),
                       count, interval_s, size, self._raw("ping"),
                       timeout_seconds=count * interval_s + 15)
        if run.result is None:
            raise ProbeFailed(f"ping {source} -> {target} gave no result: {run.error}")
        return run.result

    def throughput(self, source: str, target: str, seconds: float = 3.0,
                   options: Sequence[str] = ()) -> IperfResult:
        """One iperf3 TCP test from `source` to `target` (extra iperf3 options allowed)."""
        name = f"{self.rendered.project}-test-iperf-{self._next()}"
        with iperf_server(self.run_id, self.node(target).container, self.address(target),
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
        return shape_run(self.run_id, self.topology)

    def kill(self, node: str) -> None:
        docker.container.kill(self.node(node).container)

    def restart(self, node: str) -> None:
        """Start a node again (killed or not); its links are shaped again."""
        docker.container.restart(self.node(node).container)
        shape_run(self.run_id, self.topology)

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


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def topology_from(source: str | Path | Mapping[str, Any] | Topology, overlay: str | None,
                  links: Mapping[str, Mapping[str, Any]] | None) -> Topology:
    """A topology from a file (as given, else among vnetbench's own topologies), a
    mapping (a topology file's content) or a Topology; overlay and links override."""
    from vnetbench.overlays import OVERLAY_NAMES, check_overlay_options

    if isinstance(source, Topology):
        topology = source
    elif isinstance(source, Mapping):
        topology = check_overlay_options(parse_topology(
            dict(source), "the test's topology", overlays=OVERLAY_NAMES), "the test's topology")
    else:
        path = Path(source)
        if not path.exists() and (TOPOLOGIES / path).is_file():
            path = TOPOLOGIES / path
        topology = check_overlay_options(load_topology(path, overlays=OVERLAY_NAMES), str(path))
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
    """Bring a topology up, shaped, in `directory`; whatever happens, keep its logs
    (directory/logs) and remove everything of it."""
    try:
        from testcontainers.compose import DockerCompose
    except ImportError:
        raise UserError("vnetbench's pytest fixtures need testcontainers, which is not "
                        "installed here: pip install 'vnetbench[pytest]'.") from None

    topology = topology_from(source, overlay, links)
    require_engine()
    adapter = overlay_for(topology)
    adapter.require_available()
    topology, images = prepared_for_stack(topology, adapter)
    with claimed_block() as claim:
        rendered = render_run(topology, adapter, new_run_id(topology.name), claim.block,
                              directory, images, current_owner(), engine_facts())
        compose = DockerCompose(rendered.directory, compose_file_name=rendered.compose_file.name,
                                wait=True, pull=False)  # started by start(), bounded
        unready: list[str] = []
        try:
            with running(rendered, bring_up=lambda stack: unready.extend(
                    start(compose, stack))) as stack:
                net = RunningTopology(topology, adapter, stack, compose)
                net.unready = unready
                shape_run(rendered.run_id, topology)
                yield net
        finally:
            forget_private_keys(adapter, rendered.directory)


def start(compose: DockerCompose, stack: Stack,
          timeout_s: float = BRING_UP_SECONDS) -> list[str]:
    """`docker compose up --wait` bounded: compose's own --wait-timeout, and the whole
    command within `timeout_s` (it also waits for depends_on health, which that option
    does not bound). As in `vnetbench run`, agents that never become ready (an overlay
    that loses joins) are returned and named in a warning; anything else not ready is
    an error, and so is a container still starting at the bound (named)."""
    command = [*compose.docker_compose_command(), "up", "--wait", "--wait-timeout",
               str(math.ceil(timeout_s))]
    deadline = time.monotonic() + timeout_s
    try:
        subprocess.run(command, cwd=compose.context, capture_output=True, check=True,
                       timeout=timeout_s)
    except subprocess.TimeoutExpired:
        said = f"compose did not end within {timeout_s:g} s"  # ended; states say why
    except subprocess.CalledProcessError as failed:
        said = (_text(failed.stderr) or _text(failed.stdout)).strip()[-800:]
    else:
        return []
    return judged(stack, wait_until_settled(stack, deadline), timeout_s, said)


def judged(stack: Stack, states: dict[str, tuple[str | None, str]], timeout_s: float,
           said: str) -> list[str]:
    """After compose's wait failed (`said`): the agents not ready, if the stack can
    run without them; else a UserError naming the containers still starting or
    not ready."""
    logs = stack.rendered.directory / "logs"
    if not states:
        raise UserError(f"The topology did not come up: {said} Its logs are kept in {logs}.")
    starting = sorted(name for name, (_, state) in states.items() if state == "starting")
    if starting:
        raise UserError(
            f"The topology did not come up within {timeout_s:g} s: {len(starting)} "
            f"container(s) still starting ({', '.join(starting[:10])}"
            f"{', ...' if len(starting) > 10 else ''}). A health check that never passes "
            f"keeps a container starting; their logs are kept in {logs}.")
    failed = sorted(name for name, (_, state) in states.items() if state == "failed")
    agents = [name for name, (role, _) in states.items() if role == "agent"]
    if any(states[name][0] != "agent" for name in failed) or (
            failed and len(failed) == len(agents)):
        raise UserError(f"The topology did not come up: {', '.join(failed)} did not become "
                        "ready (exited, unhealthy, or still unchecked past its health "
                        f"check's start period). Their logs are kept in {logs}.")
    if failed:
        warnings.warn(f"{len(failed)} agent container(s) did not become ready: "
                      f"{', '.join(failed)}", stacklevel=3)
    return failed


def wait_until_settled(stack: Stack, deadline: float) -> dict[str, tuple[str | None, str]]:
    """Container -> (role, 'ready', 'failed' or 'starting'), once none is starting or
    at the deadline (monotonic seconds)."""
    while True:
        states = {c.name: (c.labels.get(labels.ROLE), container_state(c))
                  for c in list_containers(run_filter(stack.run_id))}
        if all(state != "starting" for _, state in states.values()) or (
                time.monotonic() >= deadline):
            return states
        time.sleep(POLL_SECONDS)


def container_state(container: Listed) -> str:
    """'ready' (running, healthy or without a check), 'failed' (exited, unhealthy, or
    still unchecked after its start period: it is next checked an hour later), or
    'starting'."""
    running = container.state == "running"
    if running and container.health in (None, "healthy"):
        return "ready"
    if container.state in ("created", "restarting") or (
            running and container.health == "starting" and not start_period_over(container)):
        return "starting"
    return "failed"
