"""Engines reached through the Docker CLI (python-on-whales): the client, bounded
calls, listings, and DockerEngine, what the Compose and swarm engines share; the
calls made per container (a log, an exec, a listing) go through the engine's API
instead (docker_api.py).

Every engine call is bounded on the client side (`timeout` around the docker
CLI), so a hung engine turns into an error instead of a run that never ends:
ENGINE_CALL_SECONDS for ordinary calls (long enough for an image build or a
compose bring-up, which have their own tighter waits), and QUICK_CALL_SECONDS
for the listing and removing that teardown does.
"""

from __future__ import annotations

import json
import math
import os
import queue
import re
import signal
import subprocess
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from functools import wraps
from ipaddress import IPv4Network
from types import SimpleNamespace
from typing import Any, ParamSpec, TypeVar

import python_on_whales.utils
from docker import APIClient
from python_on_whales import DockerClient
from python_on_whales.components.network.cli_wrapper import ValidNetwork
from python_on_whales.exceptions import DockerException

from vnetbench.engines.base import (
    NETWORK_NAME,
    ContainerRecord,
    Deployment,
    Engine,
    EngineError,
    EngineEvent,
    EventStream,
    HostRuntime,
    Listed,
    Removed,
    Source,
    Stopped,
    ToolOutput,
    ToolSpec,
)
from vnetbench.engines.docker_api import (
    api_client,
    api_execute,
    api_listed,
    api_logs,
    api_usage,
    health_of,
)
from vnetbench.engines.usage import MemoryReading, memory_reading
from vnetbench.engines.usage import cpu_seconds as cgroup_cpu_seconds
from vnetbench.runtime import labels
from vnetbench.runtime.labels import require_owned as labels_required
from vnetbench.runtime.labels import run_filter
from vnetbench.terminal.ui import note

ENGINE_CALL_SECONDS = 1800
QUICK_CALL_SECONDS = 60
ENGINE_HELP = (
    "Run 'make setup' (it installs and starts Debian's engine when run as root on "
    "Debian/Ubuntu), or install Docker Engine with the Compose v2 plugin and start it, "
    "then run the command again."
)


def bounded_client(seconds: int, **options: object) -> DockerClient:
    """A client whose every CLI call is killed after `seconds` (then 5 s more for KILL)."""
    return DockerClient(client_call=["timeout", "-k", "5", str(seconds), "docker"],
                        **options)  # type: ignore[arg-type]


docker = bounded_client(ENGINE_CALL_SECONDS)
quick = quick_client = bounded_client(QUICK_CALL_SECONDS)
STOP_SECONDS = 5  # an interrupted call's grace between TERM and KILL


def interruptible_run(args: Sequence[str], *, input: bytes | None = None,
                      **options: Any) -> subprocess.CompletedProcess[Any]:
    """subprocess.run for engine calls that stops the call it is interrupted in.

    `timeout` moves itself and docker into a process group of their own, so Ctrl-C
    at the terminal reaches neither, and subprocess.run answers an interrupt by
    killing `timeout` alone: the docker call it bounded went on (a `compose up`
    kept creating containers while the teardown listed and removed them). Here an
    interrupt sends TERM to the call's whole group (timeout passes it on to
    docker), KILL after STOP_SECONDS, before the interrupt goes on."""
    stdin = subprocess.PIPE if input is not None else options.pop("stdin", None)
    with subprocess.Popen(args, stdin=stdin, **options) as process:
        try:
            stdout, stderr = process.communicate(input)
        except BaseException:
            stop_call(process)
            raise
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def stop_call(process: subprocess.Popen[Any]) -> None:
    """TERM to the call's process group (its own, or just the process), then KILL."""
    own_group = os.getpgid(process.pid) == process.pid if process.poll() is None else False

    def send(number: signal.Signals) -> None:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, number) if own_group else process.send_signal(number)

    send(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        process.wait()


# python-on-whales runs every CLI call through its utils.run, which looks up
# `subprocess.run` at call time: give it the interruptible one.
python_on_whales.utils.subprocess = SimpleNamespace(  # type: ignore[assignment,attr-defined]
    **{**vars(subprocess), "run": interruptible_run})


Params = ParamSpec("Params")
Result = TypeVar("Result")
Class = TypeVar("Class", bound=type)


def engine_error(error: DockerException) -> EngineError:
    """The client's exception as the engine's own (its text, exit code and output)."""
    return EngineError(str(error), error.return_code, error.stdout or "", error.stderr or "")


@contextmanager
def engine_calls() -> Iterator[None]:
    """Client calls made for a caller above engines/: DockerException leaves as EngineError."""
    try:
        yield
    except DockerException as error:
        raise engine_error(error) from error


def translated(function: Callable[Params, Result]) -> Callable[Params, Result]:
    """`function`, raising EngineError where the client raised DockerException."""
    @wraps(function)
    def call(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        with engine_calls():
            return function(*args, **kwargs)
    return call


INTERFACES = (Engine, HostRuntime, Deployment)


def interface_methods() -> set[str]:
    """The public methods the engine interface declares (engines/base.py)."""
    return {name for interface in INTERFACES for name, member in vars(interface).items()
            if not name.startswith("_") and (callable(member) or isinstance(member, classmethod))}


def at_the_boundary(cls: Class) -> Class:
    """Every method of the engine interface that `cls` defines raises EngineError, never
    the client's DockerException (the boundary of engines/ for a Docker-based class)."""
    for name in interface_methods() & set(vars(cls)):
        member = vars(cls)[name]
        if isinstance(member, classmethod):
            setattr(cls, name, classmethod(translated(member.__func__)))
        elif callable(member):
            setattr(cls, name, translated(member))
    return cls


def engine_version() -> str | None:
    try:
        return str(quick.version().server.version)  # type: ignore[union-attr]
    except (DockerException, AttributeError):
        return None


def compose_version() -> str | None:
    try:
        text = str(quick.compose.version())
    except DockerException:
        return None
    return text.split()[-1] if "v2" in text or " 2." in text else None


@dataclass(frozen=True)
class NodeEngine:
    """The Docker engine of one host, as vnetbench reaches it (its endpoint)."""

    name: str  # the swarm node's hostname
    endpoint: str  # unix://..., ssh://..., tcp://...

    @property
    def client(self) -> DockerClient:
        return bounded_client(ENGINE_CALL_SECONDS, host=self.endpoint)

    @property
    def quick(self) -> DockerClient:
        return bounded_client(QUICK_CALL_SECONDS, host=self.endpoint)


def run_options(spec: ToolSpec) -> dict[str, Any]:
    """The client's `run` arguments a tool specification sets (beyond image, argv,
    labels and where it runs); those it leaves at their default are not passed."""
    options: dict[str, Any] = {"remove": not spec.keep}
    given = {"name": spec.name, "entrypoint": spec.entrypoint,
             "networks": [spec.network] if spec.network else None,
             "cap_add": list(spec.capabilities), "security_options": list(spec.security_options),
             "envs": dict(spec.environment), "init": spec.init,
             "pid": "host" if spec.host_pids else None, "cpu_shares": spec.cpu_shares,
             "volumes": [(m.source, m.target, "ro" if m.read_only else "rw")
                         for m in spec.mounts]}
    options |= {key: value for key, value in given.items()
                if value is not None and value != [] and value != {} and value is not False}
    return options


LISTED_KEYS = (labels.RUN, labels.ROLE, labels.NODE, labels.OWNER, labels.OVERLAY, labels.TOOL)
GRACEFUL_ROLES = {"fabric"}  # removes its host iptables rule on SIGTERM
GRACE_SECONDS = 5
REMOVERS = 4  # concurrent `docker rm -f` calls when a run's containers go
# At most this many names a `docker rm -f`: each call is bounded (QUICK_CALL_SECONDS), and
# a 1000-machine room's 2,026 containers in four calls of 506 ran past it under the
# teardown's load, leaving 1,781 behind (2026-12-07). 50 names take 2.5 s at the pace
# measured here, 60 s only at under one a second.
REMOVAL_CHUNK = 50
REMOVAL_ROUNDS = 5  # what is left is removed again while each round removes some


@at_the_boundary
class DockerEngine(Engine):
    """An engine of Docker hosts: one (Compose) or a swarm's nodes. A container's
    calls go to the host that has it; listings and removals cover every host."""

    @abstractmethod
    def hosts(self) -> list[tuple[str, DockerClient]]:
        """(host name, quick client) of every host; '' is this machine's engine."""

    @abstractmethod
    def client_at(self, where: str, quick: bool = False) -> DockerClient:
        """The engine at a host ('' local); `quick`: bounded like teardown's calls."""

    def host_of(self, container: str) -> str:
        """The host that has this container ('' on one engine)."""
        return ""

    def client_for(self, container: str, quick: bool = False) -> DockerClient:
        return self.client_at(self.host_of(container), quick)

    # -- what is there ----------------------------------------------------------
    def api_at(self, where: str, quick: bool = False) -> APIClient:
        """The engine's API at a host ('' this machine's), for the calls made per
        container (docker_api.py)."""
        return api_client(self.endpoint(where) if where else None,
                          QUICK_CALL_SECONDS if quick else ENGINE_CALL_SECONDS)

    def containers(self, filters: Sequence[tuple[str, str]]) -> list[Listed]:
        """One API call per host (a teardown lists through the CLI: remove_containers).
        python-on-whales inspects a container again on every attribute read once its
        last inspection is 0.2 s old: reading the labels of 200 containers cost 200
        `docker inspect` calls (3.4 s), three times per teardown."""
        return [c for where, _ in self.hosts()
                for c in api_listed(self.api_at(where, quick=True), filters, where,
                                    LISTED_KEYS)]

    def network_labels(self, filters: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
        return [{**(n.labels or {}), NETWORK_NAME: n.name} for _, client in self.hosts()
                for n in client.network.list(filters=list(filters))]  # type: ignore[arg-type]

    def subnets(self) -> list[IPv4Network]:
        found = []
        for _, client in self.hosts():
            for network in client.network.list():
                for config in network.ipam.config or []:
                    subnet = config.get("Subnet") or config.get("subnet")
                    if subnet and ":" not in subnet:
                        found.append(IPv4Network(subnet))
        return found

    def inspect(self, containers: Sequence[Listed]) -> list[ContainerRecord]:
        found: list[ContainerRecord] = []
        for where in dict.fromkeys(c.where for c in containers):  # one call per host
            client = self.client_at(where, quick=True)
            found += inspected_on(client, [c.id for c in containers if c.where == where])
        return found

    def stopped(self, container: Listed) -> Stopped | None:
        client = self.client_at(container.where, quick=True)
        try:
            inspected = client.container.inspect(container.id)
            tail = str(client.container.logs(inspected, tail=1)).strip()
        except DockerException:
            return None
        state = inspected.state
        return Stopped(inspected.name, int(state.exit_code or 0), state.finished_at,
                       tail[-200:])

    # -- tools in a target's namespace --------------------------------------------
    def run_tool(self, target: str, tool: ToolSpec) -> ToolOutput:
        try:
            stdout = self.client_for(target).run(
                tool.image, list(tool.argv), networks=[f"container:{target}"],
                labels=labels_required(tool.labels, f"a tool in {target}'s namespace"),
                pull="never", **run_options(tool))
            return ToolOutput(0, str(stdout), "")
        except DockerException as error:
            return ToolOutput(error.return_code, error.stdout or "", error.stderr or "")

    def start_tool(self, target: str, tool: ToolSpec) -> str:
        name = tool.name or ""
        container = self.client_for(target).run(
            tool.image, list(tool.argv), networks=[f"container:{target}"],
            labels=labels_required(tool.labels, f"the tool {name}"),
            detach=True, pull="never", **run_options(tool))
        self.placed_beside(name, target)
        return name or str(container.name)  # a read of .name is one more inspect

    def cpu_seconds(self, container: Listed) -> float | None:
        """From the container's cgroup on this machine; on another host, from its
        engine's stats (whose cgroup files this machine cannot read)."""
        if not container.where:
            return cgroup_cpu_seconds(container.id)
        return api_usage(self.api_at(container.where, quick=True), container.id).cpu_seconds

    def memory(self, container: Listed) -> MemoryReading | None:
        """As cpu_seconds: the cgroup here, the host's engine elsewhere."""
        if not container.where:
            return memory_reading(container.id)
        return api_usage(self.api_at(container.where, quick=True), container.id).memory

    def placed_beside(self, name: str, target: str) -> None:
        """A helper started in target's namespace lives on target's host."""

    # -- calls on containers ---------------------------------------------------------
    def remove(self, name: str) -> None:
        with suppress(DockerException):  # gone already: a one-off server that exited
            self.client_for(name).container.remove(name, force=True)

    def remove_all(self, names: Sequence[str]) -> None:
        """A pass's probes together: REMOVERS `docker rm -f` calls at once per host,
        each of a share of the names (a call each was a CLI process each: 50 of them,
        four at a time, for a room of 50 machines)."""
        by_host: dict[str, list[str]] = {}
        for name in names:
            by_host.setdefault(self.host_of(name), []).append(name)

        def remove(where: str, chunk: list[str]) -> None:
            with suppress(DockerException):  # one gone already: the CLI removes the rest
                self.client_at(where).container.remove(chunk, force=True)

        with ThreadPoolExecutor(REMOVERS) as removers:
            list(removers.map(lambda call: remove(*call), removal_calls(by_host)))

    def logs(self, container: str, since: datetime | None = None,
             timestamps: bool = False, quick: bool = False) -> str:
        return api_logs(self.api_at(self.host_of(container), quick), container, since,
                        timestamps)

    def follow_logs(self, project: str, containers: list[Listed], since: datetime | None,
                    deployment: Deployment) -> LogStream:
        endpoints = {where: self.endpoint(where) for where in {c.where for c in containers}}
        return LogStream(project, containers, endpoints, since, deployment.on_manager_clock,
                         deployment.on_node_clock)

    def endpoint(self, where: str) -> str | None:
        """The engine address of a host for a CLI call of our own (None: the default)."""
        return None

    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        return api_execute(self.api_at(self.host_of(container)), container, argv)

    def signal(self, containers: Sequence[str], signal: str) -> None:
        by_host: dict[str, list[str]] = {}
        for name in containers:
            by_host.setdefault(self.host_of(name), []).append(name)
        for where, names in by_host.items():
            with suppress(DockerException):  # one that just ended: no mark
                self.client_at(where).container.kill(names, signal=signal)

    def start(self, container: Listed) -> bool:
        try:
            self.client_at(container.where).container.start(container.id)
        except DockerException:
            return False
        return True

    def restart(self, container: str) -> None:
        self.client_for(container).container.restart(container)

    def kill(self, container: str) -> None:
        self.client_for(container).container.kill(container)

    def watch_starts(self, run_id: str) -> EventStream:
        """Every host's engine: a container restarted on another node is reported (and
        so shaped again) as one on this machine."""
        filters = ["--filter", f"label={labels.RUN}={run_id}", "--filter", "event=start"]
        streams = [DockerEvents(self.endpoint(where) if where else None, filters)
                   for where, _ in self.hosts()]
        return streams[0] if len(streams) == 1 else MergedEvents(streams)

    def watch_events(self) -> EventStream:
        """Container and network events of this machine's engine (one CLI call; a
        project's are told apart by name when read: measure/engine_events.py)."""
        return DockerEvents(self.endpoint(""), ["--filter", "type=container",
                                                "--filter", "type=network"])

    # -- removal ------------------------------------------------------------------------
    def remove_run(self, run_id: str | None) -> Removed:
        """Every container, network and volume labelled for the run (or all runs) on
        every host, then the fabric's DOCKER-USER rules: fast and complete (the fabric
        helper is stopped, so its rule goes with SIGTERM; the rest is killed and
        removed in one call; a network's stale endpoints are disconnected first)."""
        from vnetbench.engines.fabric import FabricUnknown, remove_fabric_rules

        removed = Removed()
        for where, client in self.hosts():  # a swarm run: every node, manager first
            try:
                remove_containers(run_id, client, removed, where)
            except DockerException as error:  # one node gone must not keep the others
                note(f"{where or 'this engine'}: the run's containers could not be "
                     f"listed or removed ({error}); 'vnetbench clean' removes them later",
                     style="yellow")
        # The sweep of the fabric's rules (a helper container per host, the fabric
        # helpers stopped by now) needs nothing of the networks: it runs beside their
        # removal instead of after it (a teardown of one host: 0.8 s in CI's log).
        with ThreadPoolExecutor(1) as sweeper:
            sweep = sweeper.submit(remove_fabric_rules, self.hosts(), run_id)
            for where, client in reversed(self.hosts()):  # swarm networks: on the manager
                try:
                    remove_networks_and_volumes(run_id, client, removed)
                except DockerException as error:
                    note(f"{where or 'this engine'}: the run's networks or volumes could "
                         f"not be removed ({error}); 'vnetbench clean' removes them later",
                         style="yellow")
        try:
            removed.rules = sweep.result()
        except FabricUnknown as error:
            note(str(error), style="red")
            removed.unknown.append(str(error))
            return removed
        if removed.rules and run_id:
            note(f"{removed.rules} DOCKER-USER rule(s) of {run_id} outlived the "
                 "fabric helper and were removed", style="yellow")
        return removed


def removal_calls(by_host: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """(host, names) of each `docker rm -f`: the names of a host dealt out to REMOVERS
    calls, more when each would pass REMOVAL_CHUNK names (one `docker rm -f` of many
    removes them one after another: about 20 a second here; the engine does more side
    by side)."""
    calls = []
    for where, names in by_host.items():
        count = max(REMOVERS, math.ceil(len(names) / REMOVAL_CHUNK))
        calls += [(where, names[i::count]) for i in range(count) if names[i::count]]
    return calls


def inspected_on(client: DockerClient, ids: list[str]) -> list[ContainerRecord]:
    """Every container of `ids` in one `docker container inspect`, as records read
    once: python-on-whales' inspect makes one call per container, and one more on
    each attribute read once the last is 0.2 s old (a room of 200 machines, shaped:
    about 3400 calls a run, 130 s of engine calls). One removed meanwhile is left out
    (the CLI prints the others and exits 1)."""
    if not ids:
        return []
    done = interruptible_run([*client.client_config.docker_cmd, "container", "inspect", *ids],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        records = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        raise EngineError.of_command(["container", "inspect", *ids[:1]], ToolOutput(
            done.returncode, done.stdout, done.stderr)) from None
    return [container_record(record) for record in records]


def container_record(raw: Mapping[str, Any]) -> ContainerRecord:
    """One record of `docker container inspect`'s JSON in the interface's terms."""
    state = raw.get("State") or {}
    networks = (raw.get("NetworkSettings") or {}).get("Networks") or {}
    config = raw.get("Config") or {}
    check = config.get("Healthcheck") or {}
    return ContainerRecord(
        id=str(raw.get("Id", "")),
        name=str(raw.get("Name", "")).lstrip("/"),  # the engine's has a leading '/'
        labels=dict(config.get("Labels") or {}),
        addresses={name: str(settings["IPAddress"]) for name, settings in networks.items()
                   if (settings or {}).get("IPAddress")},
        running=bool(state.get("Running")), paused=bool(state.get("Paused")),
        exit_code=int(state.get("ExitCode") or 0),
        started=engine_time(state.get("StartedAt")),
        finished=engine_time(state.get("FinishedAt")),
        start_period_s=int(check.get("StartPeriod") or 0) / 1e9,
        pid=int(state.get("Pid") or 0) or None)


def engine_time(text: object) -> datetime | None:
    """A time of the engine's JSON ('2026-12-01T12:11:59.123456789Z'); None for none or
    its zero time ('0001-01-01T00:00:00Z': never started, not ended)."""
    if not text:
        return None
    moment = datetime.fromisoformat(str(text))
    return None if moment.year <= 1 else moment


def docker_event(line: str) -> EngineEvent | None:
    """One line of `docker events --format '{{json .}}'` as an event of a container or
    a network (None: another kind, or not an event)."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("Type") not in ("container", "network"):
        return None
    attributes = (record.get("Actor") or {}).get("Attributes") or {}
    action, _, detail = str(record.get("Action", "")).partition(":")
    nano = record.get("timeNano") or int(record.get("time", 0)) * 10**9
    return EngineEvent(int(nano) / 1e9, str(record["Type"]), action.strip(), detail.strip(),
                       str(attributes.get("name", "")),
                       {str(key): str(value) for key, value in attributes.items()})


class DockerEvents:
    """`docker events` of one engine as EngineEvents, read by one reader until closed."""

    def __init__(self, endpoint: str | None, filters: list[str]) -> None:
        self.process = subprocess.Popen(
            ["docker", *(["--host", endpoint] if endpoint else []), "events", "--format",
             "{{json .}}", *filters], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)

    def __iter__(self) -> Iterator[EngineEvent]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            event = docker_event(line)
            if event is not None:
                yield event

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class MergedEvents:
    """Several engines' event streams as one, in the order they arrive (a reader
    thread per stream); ends once closed."""

    def __init__(self, streams: Sequence[EventStream]) -> None:
        self.streams = list(streams)
        self.arrived: queue.Queue[EngineEvent | None] = queue.Queue()
        self.readers = [threading.Thread(target=self._read, args=(s,), daemon=True)
                        for s in self.streams]
        for reader in self.readers:
            reader.start()

    def _read(self, stream: EventStream) -> None:
        try:
            for event in stream:
                self.arrived.put(event)
        finally:  # ended, or its reader failed: either way no more from it
            self.arrived.put(None)

    def __iter__(self) -> Iterator[EngineEvent]:
        ended = 0
        while ended < len(self.streams):
            event = self.arrived.get()
            if event is None:
                ended += 1
            else:
                yield event

    def close(self) -> None:
        for stream in self.streams:
            stream.close()


def listed_on(client: DockerClient, filters: Sequence[tuple[str, str]],
              where: str) -> list[Listed]:
    from python_on_whales.utils import run

    fields = ["{{.ID}}", "{{.Names}}", "{{.State}}", "{{.Status}}",
              *(f'{{{{.Label "{key}"}}}}' for key in LISTED_KEYS)]
    command = [*client.client_config.docker_cmd, "container", "ls", "--all", "--no-trunc",
               "--format", "\t".join(fields)]
    for name, value in filters:
        command += ["--filter", f"{name}={value}"]
    found = []
    for line in str(run(command)).splitlines():
        cid, name, state, status, *values = line.split("\t")
        found.append(Listed(cid, name, state, health_of(status),
                            {k: v for k, v in zip(LISTED_KEYS, values, strict=False) if v},
                            where))
    return found


def remove_containers(run_id: str | None, client: DockerClient, removed: Removed,
                      where: str = "") -> None:
    containers = listed_on(client, run_filter(run_id), where)
    detach_veths(client, containers)
    graceful = [c.id for c in containers if c.labels.get(labels.ROLE) in GRACEFUL_ROLES]
    if containers:
        others = [c.id for c in containers if c.id not in graceful]

        def remove(chunk: list[str]) -> None:
            with suppress(DockerException):  # some may be gone already (--rm probes)
                client.container.remove(chunk, force=True, volumes=True)

        def stop_then_remove(chunk: list[str]) -> None:
            with suppress(DockerException):
                client.container.stop(chunk, time=GRACE_SECONDS)
            remove(chunk)

        # The graceful ones (the fabric: its rule goes with SIGTERM, a few iptables
        # calls) are stopped, then removed, beside the others' removal, not before it
        # all: nothing of the others waits for their rule.
        with ThreadPoolExecutor(REMOVERS + 1) as removers:
            stopping = removers.submit(stop_then_remove, graceful) if graceful else None
            list(removers.map(remove, [chunk for _, chunk in removal_calls({where: others})]))
            if stopping is not None:
                stopping.result()
        left = {c.id for c in listed_on(client, run_filter(run_id), where)}
        for _ in range(REMOVAL_ROUNDS):  # a call that ran past its bound left some
            if not left:
                break
            with ThreadPoolExecutor(REMOVERS) as removers:
                list(removers.map(remove, [chunk for _, chunk in
                                           removal_calls({where: sorted(left)})]))
            still = {c.id for c in listed_on(client, run_filter(run_id), where)}
            if len(still) >= len(left):
                break
            left = still
        removed.containers += sum(c.id not in left for c in containers)
        if left:  # counted as what is gone, and said: the sweep after goes on
            note(f"{len(left)} container(s) of {run_id or 'the runs'} could not be "
                 "removed; 'vnetbench clean' tries again", style="yellow")


def detach_veths(client: DockerClient, containers: list[Listed]) -> None:
    """Have each running fabric helper delete its run's veths in one kernel batch before
    the containers go (images/tools/vnetbench-fabric: the engine deletes them one by one,
    each waiting out an RCU grace period). Only a speed-up: what it leaves, the engine's
    removal removes."""
    for fabric in (c for c in containers
                   if c.labels.get(labels.ROLE) == "fabric" and c.state == "running"):
        with suppress(DockerException):
            client.container.execute(fabric.id, ["vnetbench-fabric", "detach"])


def remove_networks_and_volumes(run_id: str | None, client: DockerClient,
                                removed: Removed) -> None:
    ids = [network.id for network in client.network.list(filters=run_filter(run_id))]
    removed.networks += remove_networks(ids, run_id, client)
    volumes = client.volume.list(filters=run_filter(run_id))
    if volumes:
        with suppress(DockerException):
            client.volume.remove([v.name for v in volumes])
        removed.volumes += len(volumes)


def remove_networks(ids: list[str], run_id: str | None, client: DockerClient) -> int:
    """The run's networks in one `docker network rm` (a call each was a CLI process
    each, serial); how many went. When that call fails (one still in use, one of a
    swarm removed on its manager), the CLI has removed the others: each one still
    listed goes on its own, its endpoints disconnected (remove_network), as before."""
    if not ids:
        return 0
    try:
        every: list[ValidNetwork] = list(ids)
        client.network.remove(every)
        return len(ids)
    except DockerException:
        pass
    left = {network.id for network in client.network.list(filters=run_filter(run_id))}
    return (sum(network not in left for network in ids)
            + sum(remove_network(network, client=client) for network in ids if network in left))


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
                note(f"network {network_id[:12]} could not be removed ({error}); "
                     "'vnetbench clean' removes it later", style="yellow")
            time.sleep(0.5)
    return 0


def disconnect_all(network_id: str, client: DockerClient = quick) -> None:
    """Force-disconnect every endpoint of a network, stale ones included."""
    with suppress(DockerException):
        for endpoint in (client.network.inspect(network_id).containers or {}).values():
            name = getattr(endpoint, "name", None) or str(endpoint)
            with suppress(DockerException):
                client.network.disconnect(network_id, name, force=True)


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def compose_log_line(line: str) -> tuple[str, str]:
    """'<container padded> | <timestamp> <text>' -> (container, '<timestamp> <text>');
    ('', '') for a line of compose's own (terminal codes removed first)."""
    name, bar, text = ANSI.sub("", line).partition(" | ")
    return (name.strip(), text.rstrip("\n")) if bar else ("", "")


def project_log_texts(output: str, wanted: set[str]) -> dict[str, str]:
    """`docker compose logs --timestamps --no-color` split into each wanted container's
    text, as `docker logs --timestamps` gives it (lines in order, each with its
    newline); a container with no line is left out (read alone)."""
    lines: dict[str, list[str]] = {}
    for line in output.splitlines():
        container, text = compose_log_line(line)
        if container in wanted:
            lines.setdefault(container, []).append(text + "\n")
    return {name: "".join(found) for name, found in lines.items()}


class LogStream:
    """Lines of some containers' logs, gathered by a thread from one `docker compose
    logs --follow` per host (a wait that polls it makes no engine call per container)."""

    def __init__(self, project: str, containers: list[Listed],
                 endpoints: dict[str, str | None] | None = None,
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
            endpoint = (endpoints or {}).get(where)
            host = ["--host", endpoint] if endpoint else []
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
