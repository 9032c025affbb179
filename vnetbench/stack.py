"""The running stack: bring a rendered run up, find its containers, tear it down.

Everything a run creates carries the label vnetbench.run=<run id>; teardown
and `vnetbench clean` remove by that label, so they can neither miss a
container of the run nor touch anything that is not vnetbench's.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import FrameType

from python_on_whales import DockerClient, docker
from python_on_whales.exceptions import DockerException

from vnetbench import labels
from vnetbench.errors import Interrupted, UserError
from vnetbench.labels import run_filter
from vnetbench.measure.events import Source
from vnetbench.render import RenderedRun
from vnetbench.ui import note, waiting


@dataclass
class Removed:
    containers: int = 0
    networks: int = 0
    volumes: int = 0

    def __str__(self) -> str:
        return (
            f"{self.containers} container(s), {self.networks} network(s), "
            f"{self.volumes} volume(s)"
        )


def remove_run_objects(run_id: str | None) -> Removed:
    """Remove every container, network and volume labelled for the run (or all runs)."""
    removed = Removed()
    containers = docker.container.list(all=True, filters=run_filter(run_id))
    if containers:
        # Stop first: the fabric helper removes its iptables rule on SIGTERM.
        with suppress(DockerException):
            docker.container.stop(containers, time=5)
        for container in containers:
            with suppress(DockerException):  # gone already (--rm probes)
                docker.container.remove(container, force=True, volumes=True)
        removed.containers = len(containers)
    for network in docker.network.list(filters=run_filter(run_id)):
        removed.networks += remove_network(network.id)
    volumes = docker.volume.list(filters=run_filter(run_id))
    if volumes:
        docker.volume.remove([v.name for v in volumes])
        removed.volumes = len(volumes)
    return removed


def remove_network(network_id: str, attempts: int = 5) -> int:
    """Remove one network, waiting for endpoints of containers still being removed
    (seen once after a 100-container run); 1 if removed."""
    for attempt in range(attempts):
        try:
            docker.network.remove(network_id)
            return 1
        except DockerException as error:
            if "not found" in str(error).lower() or "no such network" in str(error).lower():
                return 0  # gone already
            if attempt == attempts - 1:
                note(f"[yellow]network {network_id[:12]} could not be removed ({error}); "
                     "'vnetbench clean' removes it later[/]")
            time.sleep(1)
    return 0


def run_ids_present() -> list[str]:
    """Runs that still have containers or networks on this engine."""
    ids: set[str] = set()  # skipping containers that vanish meanwhile
    for container in docker.container.list(all=True, filters=run_filter(None)):
        with suppress(DockerException):
            ids.add((container.config.labels or {}).get(labels.RUN, ""))
    ids |= {(n.labels or {}).get(labels.RUN, "")
            for n in docker.network.list(filters=run_filter(None))}
    return sorted(i for i in ids if i)


class Stack:
    """One rendered run on the Docker engine."""

    def __init__(self, rendered: RenderedRun) -> None:
        self.rendered = rendered
        self.saved_logs: list[Source] = []
        self.compose = DockerClient(
            compose_files=[rendered.compose_file],
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
            with waiting("some containers are not ready: waiting for the rest to settle"):
                failed = self.settle(deadline=time.time() + timeout_seconds)
            if failed is None:
                raise UserError(
                    f"The topology did not come up within {timeout_seconds} s: "
                    f"{(error.stderr or str(error)).strip()[-800:]} "
                    f"Container logs are kept in {self.rendered.directory / 'logs'}."
                ) from None
            reason = (error.stderr or str(error)).strip().splitlines()[-1:]
            note(f"[yellow]{len(failed)} agent container(s) did not become ready "
                 f"({', '.join(failed)}; compose said: {' '.join(reason)}); the run goes on "
                 "and the scenarios report what they cannot measure[/]")

    def settle(self, deadline: float) -> list[str] | None:
        """After a failed wait: the agents that are not ready, once every container has
        settled, or None if anything but an agent failed."""
        while True:
            states = {}
            for container in docker.container.list(all=True, filters=run_filter(self.run_id)):
                try:
                    role = (container.config.labels or {}).get(labels.ROLE)
                    state = container.state
                except DockerException:
                    continue
                health = state.health.status if state.health else None
                ready = bool(state.running) and health in (None, "healthy")
                # compose has tried to start them all: "created" means it failed
                starting = state.status == "restarting" or health == "starting"
                settled = ready or (not starting and (not state.running
                                                      or health == "unhealthy"))
                states[container.name] = (role, ready, settled)
            if all(settled for _, _, settled in states.values()) or time.time() > deadline:
                break
            time.sleep(1)
        failed = [name for name, (role, ready, _) in states.items() if not ready]
        if any(states[name][0] != "agent" for name in failed) or len(failed) == len(
                [s for s in states.values() if s[0] == "agent"]):
            return None
        return sorted(failed)

    def logs(self, role: str | None = None, since: datetime | None = None) -> list[Source]:
        """Every container's log (with Docker's timestamps), optionally of one role."""
        filters = run_filter(self.run_id)
        if role:
            filters.append(labels.role_filter(role))
        sources = []
        for container in docker.container.list(all=True, filters=filters):
            try:  # a probe started with --rm may be gone already
                found = container.config.labels or {}
                text = docker.container.logs(container, timestamps=True, since=since)
            except DockerException:
                continue
            sources.append(Source(container.name, found.get(labels.ROLE, ""),
                                  found.get(labels.NODE, container.name), str(text)))
        return sources

    def save_logs(self, directory: Path) -> None:
        """Keep every container's log in the run directory (and on the stack, for events)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.saved_logs = self.logs()
        for source in self.saved_logs:
            (directory / f"{source.container}.log").write_text(source.text)

    def down(self) -> Removed:
        try:
            self.compose.down(remove_orphans=True, volumes=True, timeout=5, quiet=True)
        except DockerException as error:
            note(f"[yellow]compose down failed ({error}); removing by label[/]")
        return remove_run_objects(self.run_id)


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(f"signal {signal.Signals(signum).name}")


@contextmanager
def teardown_guard() -> Iterator[None]:
    """Turn SIGTERM into the Ctrl-C path, so `finally` blocks always run."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def shielded() -> Iterator[None]:
    """Ignore further Ctrl-C and SIGTERM while tearing down."""
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    old_term = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)


@contextmanager
def running(rendered: RenderedRun, logs_dir: Path | None = None) -> Iterator[Stack]:
    """Bring the stack up; whatever happens, keep its logs and tear it all down."""
    stack = Stack(rendered)
    with teardown_guard():
        try:
            stack.up()
            yield stack
        finally:
            with shielded(), waiting(f"tearing down {rendered.project}"):
                stack.save_logs(logs_dir or rendered.directory / "logs")
                stack.down()
