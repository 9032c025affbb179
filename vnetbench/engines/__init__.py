"""The engines a run can use, chosen by name (a topology's `engine:`), and what
every command asks of all of them (which runs are there, whose, left behind).

A new engine is one module or folder here with an Engine subclass, plus its line
in ENGINES (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any

from vnetbench.engines.base import (
    ContainerRecord,
    Deployment,
    Engine,
    EngineError,
    EngineEvent,
    EventStream,
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
from vnetbench.engines.swarm.engine import SwarmEngine
from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.model.topology import Topology
from vnetbench.runtime import labels
from vnetbench.runtime.labels import run_filter
from vnetbench.terminal.ui import note

__all__ = ["ENGINES", "ENGINE_NAMES", "ContainerRecord", "Deployment", "Engine", "EngineError",
           "EngineEvent", "EventStream", "HostRuntime",
           "Listed", "Mount",
           "Removed", "ToolOutput", "ToolSpec", "engine_facts", "engine_for",
           "engine_services", "every_engine", "local", "recorded_engine", "require_engine"]

# every engine by the name a topology's `engine:` gives
ENGINES: dict[str, type[Engine]] = {engine.name: engine for engine in (ComposeEngine, SwarmEngine)}
ENGINE_NAMES = tuple(ENGINES)  # what a topology's `engine:` may say (topology.parse_topology)


def engine_type(topology: Topology) -> type[Engine]:
    """The engine class the topology names; a name no engine has (a topology validated
    without the registry's names) is refused before anything starts."""
    found = ENGINES.get(topology.engine.name)
    if found is None:
        raise UserError(f"The topology {topology.name} names the engine "
                        f"'{topology.engine.name}', which vnetbench does not have: give engine: "
                        f"{' or '.join(ENGINES)}.")
    return found


def engine_for(topology: Topology) -> Engine:
    """The engine the topology names (a swarm: found and checked now)."""
    return engine_type(topology).for_topology(topology)


def engine_services(topology: Topology) -> dict[str, str]:
    """The services the topology's engine adds (name -> what), e.g. a swarm's helpers."""
    return engine_type(topology).helper_services(topology)


_ANSWERED: list[EngineFacts] = []  # this machine's engine, once it answered


def engine_facts() -> EngineFacts:
    """What rendering needs to know of this machine's engine, asked once a process: a
    `docker version` (a CLI call and a round trip to the engine) per stack rendered was
    one per scenario of a run, per cell of a matrix. An engine that did not answer is
    asked again next time."""
    if not _ANSWERED:
        facts = EngineFacts(engine_version())
        if facts.version is None:
            return facts
        _ANSWERED.append(facts)
    return _ANSWERED[0]


def local() -> HostRuntime:
    """This machine's engine (images, probes of its kernel, helpers of its own), as
    the interface gives it: callers pass it to whatever runs helpers here."""
    return ComposeEngine()


def every_engine(record: Mapping[str, Any] | None = None) -> Iterator[Engine]:
    """Every engine that may hold runs (for clean and down), kind by kind in ENGINES'
    order: this machine's, then each known swarm's; `record`, a run's run.json, names
    the one a run is on (its swarm's manager)."""
    for engine_type in ENGINES.values():
        yield from engine_type.known(record or {})


def recorded_engine(record: Mapping[str, Any]) -> Engine:
    """The engine of a run `up` left running: the one its run.json names (its swarm's),
    or this machine's."""
    for engine_type in ENGINES.values():
        found = engine_type.recorded(record)
        if found is not None:
            return found
    return local()


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
        raise EnvironmentProblem(
            f"The Docker engine does not answer ('docker info' fails). {ENGINE_HELP}")
    if compose_version() is None:
        raise EnvironmentProblem(
            f"Docker answers but Compose v2 ('docker compose') does not. {ENGINE_HELP}")
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
