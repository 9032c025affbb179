"""The registered scenarios' declarations, in registration order (the order of the
catalogue and of headline tables), and the metric catalogue assembled from them.

A scenario is registered here by its declaration alone; the registry
(vnetbench/scenarios/registry.py) loads the code that measures from it."""

from __future__ import annotations

from collections.abc import Iterable

from vnetbench.core.metrics import Catalogue
from vnetbench.declared import (
    config,
    failover,
    flood,
    join,
    loaded_latency,
    room,
    throughput,
    transactions,
    transfer,
)
from vnetbench.declared.declaration import Declaration, Role

DECLARATIONS: tuple[Declaration, ...] = (
    throughput.DECLARATION, join.DECLARATION, config.DECLARATION, flood.DECLARATION,
    transfer.DECLARATION, failover.DECLARATION, room.DECLARATION,
    transactions.DECLARATION, loaded_latency.DECLARATION,
)
DECLARED: dict[str, Declaration] = {d.name: d for d in DECLARATIONS}


def playing(role: Role, declarations: Iterable[Declaration] = DECLARATIONS) -> Declaration:
    """The one registered scenario that plays a role (calibrate's path, capacity's
    load): commands find it by what it measures, never by its name."""
    found = [d for d in declarations if role in d.roles]
    if len(found) != 1:
        raise LookupError(f"role {role.name} is played by "
                          f"{', '.join(d.name for d in found) or 'no scenario'}: one must")
    return found[0]


def catalogue_of(declarations: Iterable[Declaration]) -> Catalogue:
    """The catalogue of these scenarios' metrics (every pass's own rows first)."""
    return Catalogue(m for d in declarations for m in d.metrics)


CATALOGUE = catalogue_of(DECLARATIONS)


def catalogue() -> Catalogue:
    """Every declared metric (no scenario's measuring code need be loaded)."""
    return CATALOGUE
