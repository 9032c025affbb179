"""The one interface every engine implements, and what its calls hand back.

An engine is where a run's containers live: this machine's Docker engine
(engines/compose.py), the nodes of a Docker Swarm (engines/swarm/), or, one day,
a Kubernetes cluster. Everything above this package reaches containers only
through an Engine: bringing a rendered run up and down (a Deployment), running a
tool in a target's network namespace, signals, logs, listings, and where things
ran. The models: Kathara's IManager with its ManagerFactory, containerlab's
runtime interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from ipaddress import IPv4Network
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from vnetbench.model.addressing import AddressPlan
from vnetbench.runtime.images import TOOLS_IMAGE, ImageSet

if TYPE_CHECKING:
    from vnetbench.engines.usage import MemoryReading
    from vnetbench.model.topology import Topology

NETWORK_NAME = "vnetbench.network-name"  # Engine.network_labels: the network's own name


class EngineError(Exception):
    """An engine call that failed (the engine's own tool said no). Every engine raises
    this, never its client's exception, so nothing above engines/ knows the client."""

    def __init__(self, said: str, exit_code: int | None = None, stdout: str = "",
                 stderr: str = "") -> None:
        super().__init__(said)
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr

    @classmethod
    def of_command(cls, argv: Sequence[str], done: ToolOutput) -> EngineError:
        """A command the engine ran that ended with a non-zero exit code."""
        said = (done.stderr or done.stdout).strip()
        return cls(f"`{' '.join(argv)}` exited with code {done.exit_code}: {said}",
                   done.exit_code, done.stdout, done.stderr)


@dataclass(frozen=True)
class RenderedRun:
    """A run rendered into its directory (render.render_run): what an engine brings up."""

    run_id: str
    project: str
    directory: Path
    compose_file: Path
    plan: AddressPlan


@dataclass(frozen=True)
class Listed:
    """A container as one listing shows it."""

    id: str
    name: str
    state: str  # created, running, restarting, exited, dead...
    health: str | None  # starting, healthy, unhealthy; None without a health check
    labels: dict[str, str]
    where: str = ""  # the node that hosts it; '' for the local engine


@dataclass(frozen=True)
class Mount:
    """A directory of this machine inside a helper container."""

    source: Path
    target: str
    read_only: bool = True


# The engine's largest CPU weight (Docker's --cpu-shares): a container that must run at
# its instants on shared cores (the room's load, a swarm's gatekeepers) outweighs the rest.
LARGEST_CPU_SHARES = 262144


@dataclass(frozen=True)
class ToolSpec:
    """A helper container: a tool in a target's network namespace (Engine.run_tool,
    start_tool), or a helper of this machine (HostRuntime.run_helper, start_helper).
    `labels` must name its run and owner (labels.run_labels, helper_labels)."""

    argv: tuple[str, ...]
    labels: Mapping[str, str]
    image: str = TOOLS_IMAGE
    name: str | None = None  # None: the engine names it
    entrypoint: str | None = None  # None: the image's; '' none at all
    network: str | None = None  # a helper of this machine only ('none'); a tool: its target's
    capabilities: tuple[str, ...] = ()  # added to the defaults, e.g. NET_ADMIN
    host_pids: bool = False  # in its host's PID namespace (another container's /proc/PID/ns)
    security_options: tuple[str, ...] = ()  # e.g. apparmor=unconfined
    environment: Mapping[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    init: bool = False  # a minimal init as PID 1 (signals, zombies)
    keep: bool = False  # kept after it ends (its log read later), until removed
    # its CPU weight against the host's other containers (1024 each), 2 to
    # LARGEST_CPU_SHARES; None: theirs
    cpu_shares: int | None = None


@dataclass(frozen=True)
class EngineVersions:
    """What this machine's engine says it is (None: it does not answer)."""

    engine: str | None
    compose: str | None


@dataclass(frozen=True)
class ToolOutput:
    """A tool run to completion: its exit code and output."""

    exit_code: int
    stdout: str
    stderr: str


@dataclass
class Removed:
    """What a teardown removed; `rules`: host rules its helpers had left (the fabric's),
    `unknown`: hosts whose rules could not be read (said, never taken as none)."""

    containers: int = 0
    networks: int = 0
    volumes: int = 0
    rules: int = 0
    unknown: list[str] = field(default_factory=list)

    def add(self, other: Removed) -> None:
        self.containers += other.containers
        self.networks += other.networks
        self.volumes += other.volumes
        self.rules += other.rules
        self.unknown += other.unknown

    def __str__(self) -> str:
        return (
            f"{self.containers} container(s), {self.networks} network(s), "
            f"{self.volumes} volume(s)"
        )


@dataclass(frozen=True)
class Source:
    """One container's log and what it is (Stack.logs, LogStream.sources; measure/events.py
    reads its lines)."""

    container: str
    role: str
    node: str  # the node name (agent, switch...) for lines without a pool prefix
    text: str


@dataclass(frozen=True)
class Stopped:
    """How a container that stopped ended (Engine.stopped)."""

    name: str
    exit_code: int
    finished: datetime | None
    last_line: str


@dataclass(frozen=True)
class ContainerRecord:
    """A container as the engine's full record of it gives it (Engine.inspect): what
    shaping, readiness and faults read, in the interface's own terms (no client's
    object, no engine's JSON above engines/)."""

    id: str
    name: str
    labels: Mapping[str, str]
    addresses: Mapping[str, str]  # network name -> the container's IPv4 address on it
    running: bool
    paused: bool
    exit_code: int
    started: datetime | None  # None: never started
    finished: datetime | None  # None: has not ended
    start_period_s: float = 0.0  # its health check's start period (0: none or no check)
    pid: int | None = None  # its first process on its host (None: not running)


@dataclass(frozen=True)
class EngineEvent:
    """One event of the engine (Engine.watch_events, watch_starts): `action` without
    its detail ('health_status', 'exec_create'), `detail` what followed it ('healthy',
    the command)."""

    time: float  # epoch seconds
    kind: str  # container or network
    action: str
    detail: str
    name: str  # the container's or the network's name
    labels: Mapping[str, str] = field(default_factory=dict)  # a container's, and the engine's own


class EventStream(Protocol):
    """The engine's events as they come (Engine.watch_events, watch_starts): iterated
    by one reader until closed."""

    def __iter__(self) -> Iterator[EngineEvent]:
        """Each event as it comes; ends once closed."""

    def close(self) -> None:
        """Stop watching."""


class LogStream(Protocol):
    """Lines of some containers' logs as they come (Engine.follow_logs)."""

    def sources(self) -> list[Source]:
        """What each container has logged so far, as Stack.logs gives it."""

    @property
    def alive(self) -> bool:
        """Is every reader still reading?"""

    def close(self) -> None:
        """Stop reading."""


class RunOnEngine(Protocol):
    """A run on its engine (a Stack, or a RunRef): what a probe or a shaper needs to
    reach the run's containers and label its own."""

    @property
    def engine(self) -> Engine: ...

    @property
    def run_id(self) -> str: ...


@dataclass(frozen=True)
class RunRef:
    """A run on its engine, without a Stack (a topology `up` left running)."""

    engine: Engine
    run_id: str


class Deployment(ABC):
    """One rendered run on an engine: brought up, its start gate, its clocks, torn down."""

    release_skew_ms: float | None = None  # several hosts: the last release's skew

    @abstractmethod
    def up(self, timeout_seconds: int, unready: Callable[[str], list[str]]) -> list[str]:
        """Start every service and wait for its readiness (servers' health checks,
        agents' marks), itself or through
        `unready`: given what the engine said of services that did not start or
        become ready (empty: nothing), it waits until each container is ready or
        failed and names the agents the run goes on without, or raises. BlockTaken
        when the engine refuses the run's address block."""

    @abstractmethod
    def down(self) -> Removed:
        """Remove everything of the run (by its label), wherever it is."""

    @abstractmethod
    def write_start(self, number: int) -> None:
        """The gate's next start number, where every gated program reads it."""

    @abstractmethod
    def wait_for_marks(self, names: list[str], kind: str, start: int,
                       timeout_s: float) -> list[str]:
        """The services whose mark of `kind` for `start` did not appear in time."""

    @abstractmethod
    def release(self) -> float:
        """Open the start gate; the release time (epoch seconds)."""

    def on_manager_clock(self, text: str, where: str) -> str:
        """A log read from the engine at `where`, its times on this machine's clock."""
        return text

    def on_node_clock(self, moment: datetime, where: str) -> datetime:
        """A time of this machine's clock as the engine at `where` reads it."""
        return moment

    def placement_settings(self) -> dict[str, str]:
        """Result columns saying where the roles ran (none on one host)."""
        return {}

    def where_record(self) -> dict[str, object]:
        """run.json's record of the hosts that ran the stack (none on one host)."""
        return {}

    def file_changed(self, path: Path) -> None:  # noqa: B027 (nothing to do on one host)
        """A file of the stack's directory was rewritten in place while it runs (one
        host: the containers see it through their bind mounts)."""


class Engine(ABC):
    """Where a run's containers live, and every call vnetbench makes to them."""

    name: ClassVar[str]  # what a topology's `engine:` and `--engine` say
    summary: ClassVar[str]  # what it is, in a few words (for messages)

    @classmethod
    @abstractmethod
    def for_topology(cls, topology: Topology) -> Engine:
        """The engine a topology names, found and checked (before anything starts)."""

    @classmethod
    def helper_services(cls, topology: Topology) -> dict[str, str]:
        """Services this engine adds to a rendered run (name -> what it is), so a
        topology's names can be checked against them before anything starts."""
        return {}

    def adjust(self, topology: Topology) -> Topology:
        """The topology as this engine runs it (e.g. a swarm's segment MTU)."""
        return topology

    @classmethod
    def known(cls, record: Mapping[str, Any]) -> list[Engine]:
        """The engines of this kind that may hold runs (for clean and down); `record`: a
        run's run.json when one run is meant ({}: none)."""
        return []

    @classmethod
    def recorded(cls, record: Mapping[str, Any]) -> Engine | None:
        """The engine of this kind a run's run.json names (a topology left `up`), or
        None when the run is not on one."""
        return None

    # -- a rendered run ----------------------------------------------------------
    @abstractmethod
    def deployment(self, rendered: RenderedRun, topology: Topology) -> Deployment:
        """How this engine brings this rendered run up (nothing starts yet)."""

    @abstractmethod
    def remove_run(self, run_id: str | None) -> Removed:
        """Every object of a run (or of every run) on this engine, and the host state
        its helpers left (the fabric's rules; a swarm node's copy of the run's files)."""

    # -- what is there -------------------------------------------------------------
    @abstractmethod
    def containers(self, filters: Sequence[tuple[str, str]]) -> list[Listed]:
        """Containers matching the filters, with state, health and labels."""

    @abstractmethod
    def network_labels(self, filters: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
        """The labels of each network matching the filters."""

    @abstractmethod
    def subnets(self) -> list[IPv4Network]:
        """The IPv4 subnets of every network on this engine (taken blocks)."""

    @abstractmethod
    def inspect(self, containers: Sequence[Listed]) -> list[ContainerRecord]:
        """The engine's full record of each container still there (gone ones left out)."""

    @abstractmethod
    def stopped(self, container: Listed) -> Stopped | None:
        """How a stopped container ended, and its last log line (None: gone)."""

    # -- tools in a target's network namespace ----------------------------------------
    @abstractmethod
    def run_tool(self, target: str, tool: ToolSpec) -> ToolOutput:
        """Run the tool inside target's network namespace, to its end."""

    @abstractmethod
    def start_tool(self, target: str, tool: ToolSpec) -> str:
        """Start the tool (a server, a shaper; `tool.name` given) in target's namespace;
        its name."""

    # -- calls on containers, on the host that has them ------------------------------
    @abstractmethod
    def remove(self, name: str) -> None:
        """Remove a container (running or not); gone already is fine."""

    def remove_all(self, names: Sequence[str]) -> None:
        """Remove these containers (running or not); gone already is fine. Here one
        after another; an engine that can removes them together."""
        for name in names:
            self.remove(name)

    @abstractmethod
    def logs(self, container: str, since: datetime | None = None,
             timestamps: bool = False, quick: bool = False) -> str:
        """A container's log."""

    def project_logs(self, project: str, containers: Sequence[Listed]) -> dict[str, str]:
        """The whole log (with the engine's timestamps) of each of these containers that
        belongs to the compose project, read at once; those left out are read one by one
        (Engine.logs). None read at once here: every container one by one."""
        return {}

    @abstractmethod
    def follow_logs(self, project: str, containers: list[Listed], since: datetime | None,
                    deployment: Deployment) -> LogStream:
        """The logs of these containers as they come."""

    @abstractmethod
    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        """Run argv inside a running container."""

    @abstractmethod
    def signal(self, containers: Sequence[str], signal: str) -> None:
        """Send a signal (e.g. 'USR1') to each of these running containers (by name)."""

    @abstractmethod
    def start(self, container: Listed) -> bool:
        """Start a stopped container again; whether it started."""

    @abstractmethod
    def restart(self, container: str) -> None:
        """Stop and start a container (killed or not)."""

    @abstractmethod
    def watch_starts(self, run_id: str) -> EventStream:
        """Each start of a container of the run from now on (its name and labels)."""

    def watch_events(self) -> EventStream:
        """Every event of containers and networks on this engine from now on, with its
        time; the caller keeps those it wants (a project's, by name) and closes it."""
        raise NotImplementedError(f"{self.name} engine: no event stream")

    @abstractmethod
    def cpu_seconds(self, container: Listed) -> float | None:
        """CPU seconds a running container has used so far (None: not readable)."""

    @abstractmethod
    def memory(self, container: Listed) -> MemoryReading | None:
        """A running container's memory now and its peak (None: not readable)."""

    def health_started(self, container: Listed) -> tuple[datetime | None, float]:
        """When the container started and its health check's start period (s)."""
        records = self.inspect([container])
        if not records:
            return None, 0.0
        return records[0].started, records[0].start_period_s


class HostRuntime(Engine):
    """This machine's engine, for what runs here and nowhere else: helpers that probe
    its kernel, measure its limits, check or wrap images, and what the engine says of
    itself. Whatever runs helpers receives one (engines.local()), never a concrete
    engine."""

    @abstractmethod
    def run_helper(self, helper: ToolSpec) -> str:
        """A helper container run to its end; its output (EngineError if it fails)."""

    @abstractmethod
    def start_helper(self, helper: ToolSpec) -> str:
        """A helper container started in the background; its id."""

    @abstractmethod
    def versions(self) -> EngineVersions:
        """The engine's version and its orchestrator's (never raises: None)."""

    @abstractmethod
    def system_facts(self) -> dict[str, object]:
        """run.json's record of the engine: version, storage and cgroup drivers, kernel,
        the orchestrator's version."""

    # -- images of this machine ------------------------------------------------------
    @abstractmethod
    def image_id(self, name: str) -> str | None:
        """The id of the image of that name here (None: there is none)."""

    @abstractmethod
    def project_images(self, force: bool = False) -> ImageSet:
        """The project's own images (tools, overlays), built where missing or older than
        their context (`force`: built anew)."""

    @abstractmethod
    def base_image(self) -> str:
        """The base image to build on: here, pulled, or bootstrapped offline."""

    @abstractmethod
    def build_image(self, context: Path, tag: str, base: str, label: str) -> None:
        """An image built from a context directory on the base image."""

    @abstractmethod
    def remove_image(self, name: str) -> None:
        """The image removed (forced)."""
