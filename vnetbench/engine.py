"""The Docker engine: the one client every module uses, and whether it answers.

Every engine call is bounded on the client side (`timeout` around the docker
CLI), so a hung engine turns into an error instead of a run that never ends:
ENGINE_CALL_SECONDS for ordinary calls (long enough for an image build or a
compose bring-up, which have their own tighter waits), and QUICK_CALL_SECONDS
for the listing and removing that teardown does.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import python_on_whales.utils
from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

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


@dataclass(frozen=True)
class NodeEngine:
    """The engine of one host of a swarm, as vnetbench reaches it (its endpoint)."""

    name: str  # the swarm node's hostname
    endpoint: str  # unix://..., ssh://..., tcp://...

    @property
    def client(self) -> DockerClient:
        return bounded_client(ENGINE_CALL_SECONDS, host=self.endpoint)

    @property
    def quick(self) -> DockerClient:
        return bounded_client(QUICK_CALL_SECONDS, host=self.endpoint)


class Engines:
    """Where a run's containers live: the local engine, or, while a swarm run is up,
    the engines of the swarm's nodes (every listing covers them all, and a
    container's own calls go to the node that hosts it)."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeEngine] = {}
        self.placed: dict[str, str] = {}  # container name -> node name

    def use(self, nodes: Sequence[NodeEngine], placed: dict[str, str]) -> None:
        self.nodes = {node.name: node for node in nodes}
        self.placed = dict(placed)

    def forget(self) -> None:
        self.nodes, self.placed = {}, {}

    @contextmanager
    def using(self, nodes: Sequence[NodeEngine]) -> Iterator[None]:
        """These nodes' engines for the `with` block (a command reaching a swarm)."""
        self.use(nodes, {})
        try:
            yield
        finally:
            self.forget()

    def listing(self) -> list[tuple[str, DockerClient]]:
        """(node name, quick client) of every engine a run spans; '' is the local one."""
        if not self.nodes:
            return [("", quick)]
        return [(name, node.quick) for name, node in self.nodes.items()]

    def client_at(self, where: str, quick: bool = False) -> DockerClient:
        """The engine at a node ('' local); `quick`: bounded like teardown's calls."""
        node = self.nodes.get(where)
        if node is None:
            return quick_client if quick else docker
        return node.quick if quick else node.client

    def client_for(self, container: str) -> DockerClient:
        """The client of the engine that hosts this container (by name); one not placed
        by its stack (a helper, a run brought up by another process) is looked for on
        every node once."""
        if self.nodes and container not in self.placed:
            for where, client in self.listing():
                if list_containers([("name", f"^{container}$")], client):
                    self.placed[container] = where
                    break
        return self.client_at(self.placed.get(container, ""))


engines = Engines()


START_INTERVAL_SINCE = 25  # Docker Engine that knows healthcheck.start_interval


@dataclass(frozen=True)
class EngineFacts:
    """What rendering needs to know of the engine, learned before rendering."""

    version: str | None = None  # None: not asked (a file to run by hand) or no engine

    @property
    def start_interval(self) -> bool:
        """Health checks only while starting; assumed when unknown (current engines)."""
        major = (self.version or "").split(".")[0]
        return not major.isdigit() or int(major) >= START_INTERVAL_SINCE


def engine_facts() -> EngineFacts:
    return EngineFacts(engine_version())


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


_noticed_orphans = False


def require_engine() -> None:
    """The engine answers, with Compose v2; the first time, say which runs were left
    behind by a vnetbench process that is gone."""
    global _noticed_orphans
    from vnetbench.errors import UserError

    if engine_version() is None:
        raise UserError(f"The Docker engine does not answer ('docker info' fails). {ENGINE_HELP}")
    if compose_version() is None:
        raise UserError(f"Docker answers but Compose v2 ('docker compose') does not. {ENGINE_HELP}")
    if not _noticed_orphans:
        _noticed_orphans = True
        notice_orphans()


def notice_orphans() -> None:
    from vnetbench.stack import orphaned_runs
    from vnetbench.ui import note

    orphans = orphaned_runs()
    if orphans:
        note(f"[yellow]{len(orphans)} run(s) left behind by a vnetbench process that is gone "
             f"still hold containers or networks: {', '.join(orphans)}. 'vnetbench clean' "
             "removes them (and only them).[/]")


@dataclass(frozen=True)
class Listed:
    """A container as one `docker container ls` line shows it."""

    id: str
    name: str
    state: str  # created, running, restarting, exited, dead...
    health: str | None  # starting, healthy, unhealthy; None without a health check
    labels: dict[str, str]
    where: str = ""  # the swarm node that hosts it; '' for the local engine


def list_containers(filters: Sequence[tuple[str, str]], client: DockerClient | None = None
                    ) -> list[Listed]:
    """Containers with their state and vnetbench's labels, one CLI call per engine
    (the local one, or every node of a swarm run that is up).

    python-on-whales inspects a container again on every attribute read once its
    last inspection is 0.2 s old: reading the labels of 200 containers cost 200
    `docker inspect` calls (3.4 s), three times per teardown."""
    if client is not None:
        return _list_on(client, filters, "")
    return [c for where, each in engines.listing() for c in _list_on(each, filters, where)]


def _list_on(client: DockerClient, filters: Sequence[tuple[str, str]],
             where: str) -> list[Listed]:
    from python_on_whales.utils import run

    from vnetbench import labels

    keys = (labels.RUN, labels.ROLE, labels.NODE, labels.OWNER, labels.OVERLAY, labels.TOOL)
    fields = ["{{.ID}}", "{{.Names}}", "{{.State}}", "{{.Status}}",
              *(f'{{{{.Label "{key}"}}}}' for key in keys)]
    command = [*client.client_config.docker_cmd, "container", "ls", "--all", "--no-trunc",
               "--format", "\t".join(fields)]
    for name, value in filters:
        command += ["--filter", f"{name}={value}"]
    found = []
    for line in str(run(command)).splitlines():
        cid, name, state, status, *values = line.split("\t")
        found.append(Listed(cid, name, state, health_of(status),
                            {k: v for k, v in zip(keys, values, strict=False) if v}, where))
    return found


def health_of(status: str) -> str | None:
    """'Up 3 seconds (health: starting)' -> starting; '(healthy)' -> healthy."""
    for word in ("health: starting", "unhealthy", "healthy"):
        if f"({word})" in status:
            return word.removeprefix("health: ")
    return None
