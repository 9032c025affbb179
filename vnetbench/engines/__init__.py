"""The engines a run can use, chosen by name (a topology's `engine:`), and what
every command asks of all of them (which runs are there, whose, left behind).

A new engine is one module or folder here with an Engine subclass, plus its line
in ENGINES (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any

from vnetbench import labels
from vnetbench.engines.base import (
    Deployment,
    Engine,
    EngineError,
    HostRuntime,
    Listed,
    Mount,
    Removed,
    ToolOutput,
    ToolSpec,
)
from vnetbench.engines.compose import ComposeEngine
from vnetbench.engines.docker import ENGINE_HELP, compose_version, engine_version
from vnetbench.engines.facts import EngineFacts
from vnetbench.engines.swarm.engine import SwarmEngine, known_swarms, recorded_manager
from vnetbench.errors import UserError
from vnetbench.labels import run_filter
from vnetbench.topology import ENGINE_NAMES, Topology
from vnetbench.ui import note

__all__ = ["ENGINES", "Deployment", "Engine", "EngineError", "HostRuntime", "Listed", "Mount",
           "Removed", "ToolOutput", "ToolSpec", "engine_facts", "engine_for",
           "engine_services", "every_engine", "local", "recorded_engine", "require_engine"]

# every engine by the name a topology's `engine:` gives
ENGINES: dict[str, type[Engine]] = {engine.name: engine for engine in (ComposeEngine, SwarmEngine)}
assert set(ENGINES) == set(ENGINE_NAMES), "topology.ENGINE_NAMES lists every engine here"


def engine_for(topology: Topology) -> Engine:
    """The engine the topology names (a swarm: found and checked now)."""
    return ENGINES[topology.engine].for_topology(topology)


def engine_services(topology: Topology) -> dict[str, str]:
    """The services the topology's engine adds (name -> what), e.g. a swarm's helpers."""
    return ENGINES[topology.engine].helper_services(topology)


def engine_facts() -> EngineFacts:
    """What rendering needs to know of this machine's engine."""
    return EngineFacts(engine_version())


def local() -> HostRuntime:
    """This machine's engine (images, probes of its kernel, helpers of its own), as
    the interface gives it: callers pass it to whatever runs helpers here."""
    return ComposeEngine()


def every_engine(manager: str | None = None) -> Iterator[Engine]:
    """This machine's engine, then each known swarm's (for clean and down): the one
    `manager` (or $VNETBENCH_SWARM) names, else this machine's and the test swarm."""
    yield local()
    for swarm in known_swarms(manager):
        yield SwarmEngine(swarm)


def recorded_engine(record: Mapping[str, Any]) -> Engine:
    """The engine of a run `up` left running: its swarm's (run.json `hosts`), or this
    machine's."""
    from vnetbench.engines.swarm.cluster import discover

    manager = recorded_manager(record)
    return SwarmEngine(discover(manager)) if manager else local()


def run_owners(engine: Engine) -> dict[str, set[str | None]]:
    """Every run with containers or networks on this engine, and every owner label its
    objects carry (helpers started later by another process, e.g. `shape` on a
    topology `up` left running, name that process)."""
    found = [container.labels for container in engine.containers(run_filter(None))]
    found += engine.network_labels(run_filter(None))
    owners: dict[str, set[str | None]] = {}
    for object_labels in found:
        run_id = object_labels.get(labels.RUN)
        if run_id:
            owners.setdefault(run_id, set()).add(object_labels.get(labels.OWNER))
    return owners


def orphaned_runs(engine: Engine) -> list[str]:
    """Runs whose vnetbench processes are all gone (killed, their terminal closed): a
    run any of whose owners is alive, or that was left up on purpose, is kept."""
    return sorted(run for run, owners in run_owners(engine).items()
                  if labels.all_gone(owners))


def run_ids_present(engine: Engine) -> list[str]:
    """Runs that still have containers or networks on this engine."""
    return sorted(run_owners(engine))


_noticed_orphans = False


def require_engine() -> None:
    """The engine answers, with Compose v2; the first time, say which runs were left
    behind by a vnetbench process that is gone."""
    global _noticed_orphans
    if engine_version() is None:
        raise UserError(f"The Docker engine does not answer ('docker info' fails). {ENGINE_HELP}")
    if compose_version() is None:
        raise UserError(f"Docker answers but Compose v2 ('docker compose') does not. {ENGINE_HELP}")
    if not _noticed_orphans:
        _noticed_orphans = True
        notice_orphans()


def notice_orphans() -> None:
    with suppress(EngineError):
        orphans = orphaned_runs(local())
        if orphans:
            note(f"{len(orphans)} run(s) left behind by a vnetbench process that is "
                 f"gone still hold containers or networks: {', '.join(orphans)}. 'vnetbench "
                 "clean' removes them (and only them).", style="yellow")
