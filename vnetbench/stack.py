"""The running stack: bring a rendered run up, find its containers, tear it down.

Everything a run creates carries the label vnetbench.run=<run id>; teardown
and `vnetbench clean` remove by that label, so they can neither miss a
container of the run nor touch anything that is not vnetbench's.
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

from vnetbench import gate, labels
from vnetbench.engine import (
    ENGINE_CALL_SECONDS,
    Listed,
    bounded_client,
    engines,
    list_containers,
    quick,
)
from vnetbench.errors import BlockTaken, Interrupted, UserError
from vnetbench.labels import run_filter
from vnetbench.measure.cpu import wait_until_quiet
from vnetbench.measure.events import Source
from vnetbench.render import RenderedRun
from vnetbench.ui import note, silence_consoles, waiting


@dataclass(frozen=True)
class Death:
    """A container of the system under test that stopped while the run measured."""

    service: str  # as in the compose file, e.g. router-switch2
    exit_code: int
    finished: datetime
    last_line: str

    def describe(self, during: str) -> str:
        said = f", its log ends: {self.last_line}" if self.last_line else ""
        return (f"{self.service} exited ({self.exit_code}) at "
                f"{self.finished:%H:%M:%S} UTC {during}{said}")


LOG_READERS = 8  # concurrent `docker logs` calls when saving a stack's logs
HELPER_ROLES = {"ca", "probe", "shaper", "fabric", "capability-probe", "fabric-sweep",
                "gatekeeper"}


@dataclass
class Removed:
    containers: int = 0
    networks: int = 0
    volumes: int = 0

    def add(self, other: Removed) -> None:
        self.containers += other.containers
        self.networks += other.networks
        self.volumes += other.volumes

    def __str__(self) -> str:
        return (
            f"{self.containers} container(s), {self.networks} network(s), "
            f"{self.volumes} volume(s)"
        )


GRACEFUL_ROLES = {"fabric"}  # removes its host iptables rule on SIGTERM
GRACE_SECONDS = 5


def remove_run_objects(run_id: str | None) -> Removed:
    """Remove every container, network and volume labelled for the run (or all runs).

    Fast and complete: the fabric helper is stopped (its rule goes with SIGTERM);
    everything else has nothing to flush and is killed and removed in one call;
    a network's stale endpoints are disconnected before it is removed."""
    removed = Removed()
    for where, client in engines.listing():  # a swarm run: every node, manager first
        try:
            remove_containers(run_id, client, removed)
        except DockerException as error:  # one node gone must not keep the others
            note(f"[yellow]{where or 'this engine'}: the run's containers could not be "
                 f"listed or removed ({error}); 'vnetbench clean' removes them later[/]")
    for where, client in reversed(engines.listing()):  # swarm networks: on the manager
        try:
            remove_networks_and_volumes(run_id, client, removed)
        except DockerException as error:
            note(f"[yellow]{where or 'this engine'}: the run's networks or volumes could "
                 f"not be removed ({error}); 'vnetbench clean' removes them later[/]")
    return removed


def remove_containers(run_id: str | None, client: DockerClient, removed: Removed) -> None:
    containers = list_containers(run_filter(run_id), client)
    graceful = [c.id for c in containers if c.labels.get(labels.ROLE) in GRACEFUL_ROLES]
    if graceful:
        with suppress(DockerException):
            client.container.stop(graceful, time=GRACE_SECONDS)
    if containers:
        with suppress(DockerException):  # some may be gone already (--rm probes)
            client.container.remove([c.id for c in containers], force=True, volumes=True)
        left = {c.id for c in list_containers(run_filter(run_id), client)}
        removed.containers += sum(c.id not in left for c in containers)
        if left:  # counted as what is gone, and said: the sweep after goes on
            note(f"[yellow]{len(left)} container(s) of {run_id or 'the runs'} could not be "
                 "removed; 'vnetbench clean' tries again[/]")


def remove_networks_and_volumes(run_id: str | None, client: DockerClient,
                                removed: Removed) -> None:
    for network in client.network.list(filters=run_filter(run_id)):
        removed.networks += remove_network(network.id, client=client)
    volumes = client.volume.list(filters=run_filter(run_id))
    if volumes:
        with suppress(DockerException):
            client.volume.remove([v.name for v in volumes])
        removed.volumes += len(volumes)


def remove_network(network_id: str, attempts: int = 3, client: DockerClient = quick) -> int:
    """Remove one network, disconnecting endpoints left by containers that are gone
    or still going (a network once stayed 'in use' after a 50-client run); 1 if removed."""
    for attempt in range(attempts):
        try:
            client.network.remove(network_id)
            return 1
        except DockerException as error:
            text = str(error).lower()
            if "not found" in text or "no such network" in text or "swarm manager" in text:
                return 0  # gone already (or a swarm network, removed on a manager)
            disconnect_all(network_id, client)
            if attempt == attempts - 1:
                note(f"[yellow]network {network_id[:12]} could not be removed ({error}); "
                     "'vnetbench clean' removes it later[/]")
            time.sleep(0.5)
    return 0


def disconnect_all(network_id: str, client: DockerClient = quick) -> None:
    """Force-disconnect every endpoint of a network, stale ones included."""
    with suppress(DockerException):
        for endpoint in (client.network.inspect(network_id).containers or {}).values():
            name = getattr(endpoint, "name", None) or str(endpoint)
            with suppress(DockerException):
                client.network.disconnect(network_id, name, force=True)


def start_period_over(container: Listed) -> bool:
    """Has the container's health-check start period passed since it started?"""
    try:
        inspected = engines.client_at(container.where, quick=True).container.inspect(
            container.id)
    except DockerException:
        return True  # gone: it will not become ready
    check = inspected.config.healthcheck
    period_ns = getattr(check, "start_period", None) or 0
    started = inspected.state.started_at
    if not started or not period_ns:
        return False
    return (datetime.now(UTC) - started).total_seconds() > period_ns / 1e9


def run_owners() -> dict[str, set[str | None]]:
    """Every run with containers or networks on this engine, and every owner label its
    objects carry (helpers started later by another process, e.g. `shape` on a
    topology `up` left running, name that process)."""
    found = [container.labels for container in list_containers(run_filter(None))]
    found += [network.labels or {} for _, client in engines.listing()
              for network in client.network.list(filters=run_filter(None))]
    owners: dict[str, set[str | None]] = {}
    for object_labels in found:
        run_id = object_labels.get(labels.RUN)
        if run_id:
            owners.setdefault(run_id, set()).add(object_labels.get(labels.OWNER))
    return owners


def orphaned_runs() -> list[str]:
    """Runs whose vnetbench processes are all gone (killed, their terminal closed): a
    run any of whose owners is alive, or that was left up on purpose, is kept."""
    return sorted(run for run, owners in run_owners().items() if labels.all_gone(owners))


def run_ids_present() -> list[str]:
    """Runs that still have containers or networks on this engine."""
    ids = {c.labels.get(labels.RUN, "") for c in list_containers(run_filter(None))}
    ids |= {(n.labels or {}).get(labels.RUN, "") for _, client in engines.listing()
            for n in client.network.list(filters=run_filter(None))}
    return sorted(i for i in ids if i)


class Stack:
    """One rendered run on the Docker engine."""

    def __init__(self, rendered: RenderedRun) -> None:
        self.rendered = rendered
        self.saved_logs: list[Source] = []
        self.gate_releases = 0  # starts of a gated stack's programs released so far
        self.release_overhead_s = 0.0  # join's testbed time: restarts, quiet-host waits
        self.release_skew_ms: float | None = None  # several hosts: last release's skew
        self.compose = bounded_client(
            ENGINE_CALL_SECONDS, compose_files=[rendered.compose_file],
            compose_project_name=rendered.project,
        ).compose

    @property
    def run_id(self) -> str:
        return self.rendered.run_id

    def container(self, service: str) -> str:
        return f"{self.rendered.project}-{service}"

    def up(self, timeout_seconds: int = 180) -> None:
        """Bring the stack up and wait for the health checks. Agents that never become
        ready (an overlay that loses joins) do not stop the run when everything else
        is up: they are named, and the scenarios report what they cannot measure."""
        try:
            with waiting(f"bringing up {self.rendered.project} (health checks)"):
                self.compose.up(detach=True, wait=True, wait_timeout=timeout_seconds, quiet=True)
        except DockerException as error:
            refused = (error.stderr or str(error)).strip()
            if "pool overlaps" in refused.lower():
                raise BlockTaken(self.rendered.plan.block, refused.splitlines()[-1]) from None
            self.accept_unready(refused, timeout_seconds)

    def accept_unready(self, refused: str, timeout_seconds: int) -> None:
        """After compose's wait failed (`refused`: what it said): go on without the
        agents that never became ready, naming them, or end the run if anything else
        failed."""
        with waiting("some containers are not ready: waiting for the rest to settle"):
            failed = self.settle(deadline=time.time() + timeout_seconds)
        if failed is None:
            raise UserError(
                f"The topology did not come up within {timeout_seconds} s: "
                f"{refused[-800:]} Container logs are kept in "
                f"{self.rendered.directory / 'logs'}.")
        reason = refused.splitlines()[-1:]
        note(f"[yellow]{len(failed)} agent container(s) did not become ready "
             f"({', '.join(failed)}; compose said: {' '.join(reason)}); the run goes on "
             "and the scenarios report what they cannot measure[/]")

    def settle(self, deadline: float) -> list[str] | None:
        """After a failed wait: the agents that are not ready, once every container has
        settled, or None if anything but an agent failed."""
        while True:
            states = {}
            for container in list_containers(run_filter(self.run_id)):
                health = container.health
                running = container.state == "running"
                ready = running and health in (None, "healthy")
                # compose has tried to start them all: "created" means it failed; with
                # start_interval, "starting" after the start period means never ready
                starting = container.state == "restarting" or (
                    health == "starting" and not start_period_over(container))
                settled = ready or (not starting and (not running or health == "unhealthy"))
                states[container.name] = (container.labels.get(labels.ROLE), ready, settled)
            if all(settled for _, _, settled in states.values()) or time.time() > deadline:
                break
            time.sleep(1)
        failed = [name for name, (role, ready, _) in states.items() if not ready]
        if any(states[name][0] != "agent" for name in failed) or len(failed) == len(
                [s for s in states.values() if s[0] == "agent"]):
            return None
        return sorted(failed)

    def deaths(self) -> list[Death]:
        """The system-under-test containers of this stack that have stopped, oldest first."""
        found = []
        stopped = [c for c in list_containers(run_filter(self.run_id))
                   if c.state in ("exited", "dead") and c.labels.get(labels.ROLE)
                   not in HELPER_ROLES]
        for listed in stopped:  # one listing per pass; only stopped ones inspected
            client = engines.client_at(listed.where, quick=True)
            with suppress(DockerException):
                container = client.container.inspect(listed.id)
                state = container.state
                tail = str(client.container.logs(container, tail=1)).strip()
                found.append(Death(self.service_of(container.name),
                                   int(state.exit_code or 0),
                                   state.finished_at or datetime.now(UTC), tail[-200:]))
        return sorted(found, key=lambda death: death.finished)

    def logs(self, role: str | None = None, since: datetime | None = None,
             quick: bool = False) -> list[Source]:
        """Every container's log (with Docker's timestamps), optionally of one role;
        `quick`: each read bounded like teardown's calls (QUICK_CALL_SECONDS)."""
        filters = run_filter(self.run_id)
        if role:
            filters.append(labels.role_filter(role))

        def read(container: Listed) -> Source | None:
            client = engines.client_at(container.where, quick=quick)
            after = self.on_node_clock(since, container.where) if since else None
            try:  # a probe started with --rm may be gone already
                text = client.container.logs(container.id, timestamps=True, since=after)
            except DockerException:
                return None
            return Source(container.name, container.labels.get(labels.ROLE, ""),
                          container.labels.get(labels.NODE, container.name),
                          self.on_manager_clock(str(text), container.where))

        with ThreadPoolExecutor(LOG_READERS) as readers:  # 200 containers: 200 CLI calls
            found = readers.map(read, list_containers(filters))
            sources = [source for source in found if source is not None]
        return sources

    @contextmanager
    def log_stream(self, role: str, since: datetime | None = None) -> Iterator[LogStream]:
        """The logs of one role's containers as they come (since a time), from one
        `docker compose logs --follow` (a wait that polls it makes no engine call per
        container)."""
        containers = list_containers([*run_filter(self.run_id), labels.role_filter(role)])
        stream = LogStream(self.rendered.project, containers, since, self.on_manager_clock,
                           self.on_node_clock)
        try:
            yield stream
        finally:
            stream.close()

    def on_manager_clock(self, text: str, where: str) -> str:
        """A log read from the engine at `where`, its times on this machine's clock
        (one engine: as it is; a swarm: corrected by the node's measured offset)."""
        return text

    def on_node_clock(self, moment: datetime, where: str) -> datetime:
        """A time of this machine's clock as the engine at `where` reads it (for its
        `--since`)."""
        return moment

    def placement_settings(self) -> dict[str, str]:
        """Result columns saying where the roles ran (none on one engine)."""
        return {}

    def file_changed(self, path: Path) -> None:
        """A file of the stack's directory was rewritten in place while it runs (the
        containers see it through their bind mounts; a swarm copies it to each node)."""

    def where_record(self) -> dict[str, object]:
        """run.json's record of the hosts that ran the stack (none on one engine)."""
        return {}

    # Restart order: agents stop first (back at the gate), then the conductor and only
    # then the switches, as at bring-up (switches depend on a healthy conductor).
    RESTART_ORDER = (("agent", "waiting"), ("conductor", "ready"), ("switch", "ready"))

    def restart_programs(self, timeout_s: float, settle_s: float = 0.0,
                         first_switch: str | None = None) -> Restarted:
        """The next start of a supervised (gated) stack's programs, in the same
        containers: the agents stop theirs and wait at the gate again, then the
        conductor and the switches start theirs again and pass their readiness test
        (`first_switch`, the node the others dial, before them), then `settle_s` more
        (the overlay's servers_settle_s). One signal per group; the marks are files
        (gate.wait_for_marks). A container whose program has ended is started again,
        and named."""
        begun = time.monotonic()
        start = self.gate_releases + 1
        self.write_start(start)
        stuck: list[str] = []
        revived: list[str] = []
        for role, kind in self.RESTART_ORDER:
            containers = list_containers([*run_filter(self.run_id), labels.role_filter(role)])
            for group in first_of(containers, first_switch if role == "switch" else None):
                revived += self.signal_restart(group)
                stuck += self.wait_for_marks([self.service_of(c.name) for c in group], kind,
                                             start, timeout_s)
        time.sleep(settle_s)
        seconds = time.monotonic() - begun
        self.release_overhead_s += seconds
        return Restarted(tuple(stuck), tuple(revived), seconds)

    def signal_restart(self, containers: list[Listed]) -> list[str]:
        """SIGUSR1 to the running ones (one call per engine); those whose program ended
        are started again instead: their names."""
        revived = self.start_again(c for c in containers if c.state != "running")
        for where, client in engines.listing():
            running = [c.id for c in containers if c.state == "running" and c.where == where]
            if running:
                with suppress(DockerException):  # one that just ended: no mark
                    client.container.kill(running, signal="USR1")
        return revived

    def start_again(self, stopped: Iterable[Listed]) -> list[str]:
        """Start containers whose program ended (their death was reported in its pass)."""
        started = []
        for container in stopped:
            with suppress(DockerException):
                engines.client_at(container.where).container.start(container.id)
                started.append(self.service_of(container.name))
        return started

    def service_of(self, container_name: str) -> str:
        """A container's service in the compose file (its name without the project)."""
        return container_name.removeprefix(f"{self.rendered.project}-")

    def release_gate(self) -> GateOpened:
        """Open the start gate once the host is quiet (bounded); the release time."""
        settle_s, quiet = wait_until_quiet()
        self.release_overhead_s += settle_s
        released = self.release()
        self.gate_releases += 1
        return GateOpened(released, settle_s, quiet)

    # The gate's three operations, on the run directory here (a swarm: on each node).
    @property
    def gate_dir(self) -> Path:
        return self.rendered.directory / gate.GATE_DIR

    def write_start(self, number: int) -> None:
        gate.write_start(self.gate_dir, number)

    def wait_for_marks(self, names: list[str], kind: str, start: int,
                       timeout_s: float) -> list[str]:
        return gate.wait_for_marks(self.gate_dir, names, kind, start, timeout_s)

    def release(self) -> float:
        return gate.release(self.gate_dir)

    def save_logs(self, directory: Path) -> None:
        """Keep every container's log in the run directory (and on the stack, for events)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.saved_logs = self.logs(quick=True)
        for source in self.saved_logs:
            (directory / f"{source.container}.log").write_text(source.text)

    def down(self) -> Removed:
        """Remove everything of the run by its label (faster than compose down, which
        stops each container with a grace period), then make sure the fabric's
        DOCKER-USER rule is gone."""
        from vnetbench.fabric import FabricUnknown, remove_fabric_rules

        removed = remove_run_objects(self.run_id)
        try:
            left = remove_fabric_rules(self.run_id)
        except FabricUnknown as error:
            note(f"[red]{error}[/]")
            return removed
        if left:
            note(f"[yellow]{left} DOCKER-USER rule(s) of {self.run_id} outlived the fabric "
                 "helper and were removed[/]")
        return removed


def first_of(containers: list[Listed], node: str | None) -> list[list[Listed]]:
    """The containers in the groups they restart in: the node's first, when given."""
    if node is None:
        return [containers]
    first = [c for c in containers if c.labels.get(labels.NODE) == node]
    rest = [c for c in containers if c not in first]
    return [group for group in (first, rest) if group]


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def compose_log_line(line: str) -> tuple[str, str]:
    """'<container padded> | <timestamp> <text>' -> (container, '<timestamp> <text>');
    ('', '') for a line of compose's own (terminal codes removed first)."""
    name, bar, text = ANSI.sub("", line).partition(" | ")
    return (name.strip(), text.rstrip("\n")) if bar else ("", "")


@dataclass(frozen=True)
class Restarted:
    """Programs started again in place (Stack.restart_programs)."""

    stuck: tuple[str, ...]  # services not back at the gate, or not ready again, in time
    revived: tuple[str, ...]  # containers whose program had ended, started again
    seconds: float


@dataclass(frozen=True)
class GateOpened:
    """A release of the start gate (Stack.release_gate)."""

    released: float  # epoch seconds, taken before the pipe opens
    settle_s: float  # waited for a quiet host first
    quiet: bool  # False: the host stayed busy and the gate opened at the bound


class LogStream:
    """Lines of some containers' logs, gathered by a thread from one compose process."""

    def __init__(self, project: str, containers: list[Listed],
                 since: datetime | None = None,
                 clock: Callable[[str, str], str] = lambda text, where: text,
                 node_clock: Callable[[datetime, str], datetime] = lambda at, where: at,
                 ) -> None:
        self.containers = containers
        self.clock = clock
        self.lines: dict[str, list[str]] = {c.name: [] for c in containers}
        prefix = f"{project}-"
        self.processes: list[subprocess.Popen[str]] = []
        self.readers: list[threading.Thread] = []
        for where in dict.fromkeys(c.where for c in containers):  # one per engine
            services = [c.name.removeprefix(prefix) for c in containers if c.where == where]
            host = ["--host", engines.nodes[where].endpoint] if where else []
            after = ["--since", node_clock(since, where).isoformat()] if since else []
            process = subprocess.Popen(
                ["docker", *host, "compose", "-p", project, "logs", "--follow",
                 "--timestamps", "--no-color", *after, *services], stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, errors="replace")
            reader = threading.Thread(target=self._read, args=(process,), daemon=True)
            reader.start()
            self.processes.append(process)
            self.readers.append(reader)

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            container, text = compose_log_line(line)
            if container in self.lines:
                self.lines[container].append(text)

    def sources(self) -> list[Source]:
        """What each container has logged so far, as Stack.logs gives it."""
        return [Source(c.name, c.labels.get(labels.ROLE, ""), c.labels.get(labels.NODE, c.name),
                       self.clock("\n".join(list(self.lines[c.name])), c.where))
                for c in self.containers]

    @property
    def alive(self) -> bool:
        return all(process.poll() is None for process in self.processes)

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process, reader in zip(self.processes, self.readers, strict=True):
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            reader.join(timeout=5)
            if process.stdout is not None:
                process.stdout.close()


# Signals that end a run through its teardown: Ctrl-C (handled even when a
# non-interactive shell started vnetbench in the background with SIGINT ignored),
# a kill, a dropped SSH session (SIGHUP: the terminal is gone, so output goes
# nowhere from then on), Ctrl-\.
TEARDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGHUP:
        silence_consoles()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(f"signal {signal.Signals(signum).name}")


@contextmanager
def handling(numbers: tuple[signal.Signals, ...],
             handler: Callable[[int, FrameType | None], object] | int) -> Iterator[None]:
    """The signals go to handler for the `with` block, then back to what they were."""
    previous = {number: signal.signal(number, handler) for number in numbers}
    try:
        yield
    finally:
        for number, before in previous.items():
            signal.signal(number, before)


def teardown_guard() -> AbstractContextManager[None]:
    """Ctrl-C, SIGTERM, SIGHUP and SIGQUIT take the Ctrl-C path: `finally` blocks run."""
    return handling(TEARDOWN_SIGNALS, _raise_interrupted)


def shielded() -> AbstractContextManager[None]:
    """Ignore further Ctrl-C and teardown signals while tearing down."""
    return handling(TEARDOWN_SIGNALS, signal.SIG_IGN)


@contextmanager
def running(rendered: RenderedRun, logs_dir: Path | None = None,
            bring_up: Callable[[Stack], object] | None = None,
            stack: Stack | None = None) -> Iterator[Stack]:
    """Bring the stack up (Stack.up, or another way: the pytest plugin's); whatever
    happens, keep its logs and tear it all down. `stack`: one made for another engine
    (a swarm's), else one on this machine's."""
    stack = stack or Stack(rendered)
    with teardown_guard():
        try:
            if bring_up is None:
                stack.up()
            else:
                bring_up(stack)
            yield stack
        finally:
            with shielded(), waiting(f"tearing down {rendered.project}"):
                try:
                    stack.save_logs(logs_dir or rendered.directory / "logs")
                except (OSError, DockerException) as error:  # full disk, engine gone...
                    note(f"[yellow]the logs of {rendered.project} could not be saved "
                         f"({error}); tearing down anyway[/]")
                finally:
                    stack.down()
