"""This machine's Docker engine with Docker Compose: the default engine.

A rendered run is its compose file, brought up with `docker compose up -d` (the
same file a user runs by hand), waited for by the stack itself, and removed by its
label (faster than `compose down`, which stops each container with a grace period).
"""

from __future__ import annotations

import math
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

import vnetbench.engines.build as build
from vnetbench.engines.base import (
    Deployment,
    Engine,
    EngineVersions,
    HostRuntime,
    Listed,
    Removed,
    RenderedRun,
    ToolSpec,
)
from vnetbench.engines.docker import (
    QUICK_CALL_SECONDS,
    DockerEngine,
    at_the_boundary,
    bounded_client,
    compose_version,
    docker,
    engine_version,
    interruptible_run,
    project_log_texts,
    quick_client,
    run_options,
)
from vnetbench.errors import BlockTaken
from vnetbench.runtime import gate
from vnetbench.runtime.images import ImageSet
from vnetbench.runtime.labels import require_owned

if TYPE_CHECKING:
    from vnetbench.model.topology import Topology

COMPOSE_MARGIN_SECONDS = 30  # the whole `compose up`: depends_on's health waits and this more,
# and a second per service for creating and starting them (the engine starts about 8
# containers a second on 2 cores: 203 in 23 s, measured), so a large room is not cut
START_SECONDS_PER_SERVICE = 1.0


def up_bound(timeout_seconds: int, services: int) -> int:
    """Seconds the whole `compose up` may take: the health checks' wait, the margin, and
    the time to create and start every service."""
    return math.ceil(timeout_seconds + COMPOSE_MARGIN_SECONDS
                     + services * START_SECONDS_PER_SERVICE)


@at_the_boundary
class ComposeEngine(DockerEngine, HostRuntime):
    """Every container on this machine's engine."""

    name = "compose"
    summary = "this machine's engine"

    @classmethod
    def for_topology(cls, topology: Topology) -> ComposeEngine:
        return cls()

    @classmethod
    def known(cls, record: Mapping[str, Any]) -> list[Engine]:
        return [cls()]

    def hosts(self) -> list[tuple[str, DockerClient]]:
        return [("", quick_client)]

    def client_at(self, where: str, quick: bool = False) -> DockerClient:
        return quick_client if quick else docker

    def deployment(self, rendered: RenderedRun, topology: Topology) -> ComposeDeployment:
        return ComposeDeployment(rendered, self)

    # -- helpers of this machine (probes of its kernel, builds, vNet's artifacts) -----
    def run_helper(self, helper: ToolSpec) -> str:
        owned = require_owned(helper.labels, f"a helper container of {helper.image}")
        return str(docker.run(helper.image, list(helper.argv), pull="never", labels=owned,
                              **run_options(helper)))

    def start_helper(self, helper: ToolSpec) -> str:
        owned = require_owned(helper.labels, f"a helper container of {helper.image}")
        container = docker.run(helper.image, list(helper.argv), detach=True, pull="never",
                               labels=owned, **run_options(helper))
        return str(getattr(container, "id", container))

    def versions(self) -> EngineVersions:
        return EngineVersions(engine_version(), compose_version())

    def system_facts(self) -> dict[str, object]:
        info = docker.system.info()
        return {
            "server_version": info.server_version,
            "storage_driver": getattr(info, "driver", None),
            "cgroup_driver": getattr(info, "cgroup_driver", None),
            "kernel": getattr(info, "kernel_version", None),
            "compose_version": compose_version(),
        }

    # -- images of this machine (engines/build.py) -------------------------------------
    def image_id(self, name: str) -> str | None:
        return build.image_id(name)

    def project_images(self, force: bool = False) -> ImageSet:
        return build.build_project_images(force)

    def base_image(self) -> str:
        return build.ensure_base_image()

    def build_image(self, context: Path, tag: str, base: str, label: str) -> None:
        build.build_image_from(context, tag, base, label)

    def remove_image(self, name: str) -> None:
        build.remove_image(name)

    def project_logs(self, project: str, containers: Sequence[Listed]) -> dict[str, str]:
        """One `docker compose logs` for the whole project instead of a `docker logs`
        per container (200 CLI processes for 200 containers, on 2 cores most of the
        logs' time): its lines split by their container prefix."""
        def compose(*argv: str) -> str | None:
            done = interruptible_run(
                ["timeout", "-k", "5", str(QUICK_CALL_SECONDS), "docker", "compose", "-p",
                 project, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                errors="replace")
            return done.stdout if done.returncode == 0 else None

        # the project's own containers (a helper started beside it is not): one with
        # no line in the logs has an empty log
        members = compose("ps", "--all", "--format", "{{.Name}}")
        output = compose("logs", "--timestamps", "--no-color") if members else None
        if members is None or output is None:
            return {}
        wanted = {c.name for c in containers} & set(members.split())
        return {name: "" for name in wanted} | project_log_texts(output, wanted)


@at_the_boundary
class ComposeDeployment(Deployment):
    """A rendered run up through `docker compose`, its start gate in the run directory."""

    def __init__(self, rendered: RenderedRun, engine: ComposeEngine) -> None:
        self.rendered, self.engine = rendered, engine

    def up(self, timeout_seconds: int, unready: Callable[[str], list[str]]) -> list[str]:
        """`compose up -d`, then vnetbench's own wait (`unready`), not compose's --wait:
        compose waits out its whole timeout for a container still "starting" past its
        start period (with start_interval its next check is an hour away: a vNet agent
        whose TUN never came up held a bring-up 186 s), where the stack knows at once
        that it failed. (depends_on's health conditions are still compose's.)"""
        compose = self.compose_client(timeout_seconds).compose
        try:
            compose.up(detach=True, quiet=True)
        except DockerException as error:
            refused = (error.stderr or str(error)).strip()
            if "pool overlaps" in refused.lower():
                raise BlockTaken(self.rendered.plan.block, refused.splitlines()[-1]) from None
            return unready(refused or f"compose did not end within {timeout_seconds} s")
        return unready("")

    def compose_client(self, timeout_seconds: int) -> DockerClient:
        """compose's --wait-timeout does not bound its waits for depends_on health: the
        whole call is bounded too, so a container still starting cannot hold the run."""
        return bounded_client(up_bound(timeout_seconds, self.services()),
                              compose_files=[self.rendered.compose_file],
                              compose_project_name=self.rendered.project)

    def services(self) -> int:
        """How many services the rendered compose file holds."""
        spec = yaml.safe_load(self.rendered.compose_file.read_text()) or {}
        return len(spec.get("services") or {})

    def down(self) -> Removed:
        return self.engine.remove_run(self.rendered.run_id)

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
