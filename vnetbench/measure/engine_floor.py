"""The engine's own floor: N containers that only sleep, on one network, brought up
and removed by the same engine and the same calls vnetbench uses (`compose up -d`
until every container runs, removal by label), so vnetbench's bring-up and teardown can be read as
ratios to what the engine cannot do faster here.

The containers run the tools image with `init: true` (as vnetbench's do), so a
kill is answered at once; no health check, no entry wrapper, no shaping, no
log saving: what vnetbench adds on top of these is its own share.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from vnetbench.engines.allocation import claimed_block
from vnetbench.engines.base import Engine, RenderedRun
from vnetbench.files import write_text_atomic
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import Topology
from vnetbench.runtime.interrupts import shielded, teardown_guard
from vnetbench.runtime.labels import project_name, run_filter, run_labels

FLOOR_ROLE = "engine-floor"
UP_TIMEOUT_S = 300


@dataclass(frozen=True)
class FloorTiming:
    """One N's floor: seconds to bring the sleeping containers up, and to remove them."""

    containers: int
    up_s: float
    down_s: float


def floor_compose(run_id: str, containers: int, image: str, subnet: str) -> str:
    """The compose file of `containers` sleeping services on one labelled network."""
    services = {
        f"c{index}": {
            "image": image,
            "command": ["sleep", "infinity"],
            "init": True,
            "networks": ["floor"],
            "labels": run_labels(run_id, FLOOR_ROLE, f"c{index}"),
        } for index in range(1, containers + 1)}
    network = {"driver": "bridge", "ipam": {"config": [{"subnet": subnet}]},
               "labels": run_labels(run_id, FLOOR_ROLE, "floor")}
    return yaml.safe_dump({"services": services, "networks": {"floor": network}},
                          sort_keys=False)


def engine_floor(engine: Engine, directory: Path, run_id: str, containers: int, image: str,
                 topology: Topology) -> FloorTiming:
    """Bring `containers` sleeping containers up (as run `run_id`) and remove them,
    timed; whatever happens, everything labelled for that run is removed."""
    floor_dir = directory / run_id
    floor_dir.mkdir(parents=True)
    with claimed_block() as claim, teardown_guard():
        plan = plan_addresses(topology, run_id, claim.block)
        subnet = str(next(claim.block.subnets(new_prefix=20)))
        compose_file = floor_dir / "compose.yml"
        write_text_atomic(compose_file, floor_compose(run_id, containers, image, subnet))
        rendered = RenderedRun(run_id, project_name(run_id), floor_dir, compose_file, plan)
        deployment = engine.deployment(rendered, topology)
        try:
            began = time.monotonic()
            unready = deployment.up(UP_TIMEOUT_S,
                                    lambda said: not_running(engine, run_id, containers, said))
            up_s = time.monotonic() - began
            if unready:
                raise EngineFloorError(f"the engine's floor of {containers} containers did "
                                       f"not come up: {unready[0]}")
        finally:
            with shielded():
                began = time.monotonic()
                deployment.down()
                down_s = time.monotonic() - began
    return FloorTiming(containers, up_s, down_s)


def not_running(engine: Engine, run_id: str, containers: int, said: str) -> list[str]:
    """What keeps the floor from being measured: what the engine said, or the
    containers of the run not running (none: all `containers` run)."""
    if said:
        return [said]
    listed = engine.containers(run_filter(run_id))
    stopped = [c.name for c in listed if c.state != "running"]
    if stopped or len(listed) != containers:
        return [f"{len(listed) - len(stopped)} of {containers} running"
                + (f"; not running: {', '.join(stopped[:5])}" if stopped else "")]
    return []


def compose_services(compose_file: Path) -> int:
    """How many containers a compose file asks for (a service each)."""
    spec = yaml.safe_load(compose_file.read_text()) or {}
    return len(spec.get("services") or {})


class EngineFloorError(RuntimeError):
    """The sleeping containers did not come up: there is no floor to compare with."""
