"""join: what it declares (its settings, metrics, matrix variants, help line);
it measures in vnetbench/scenarios/join.py."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from vnetbench.core.metrics import Better, Metric
from vnetbench.core.model import Measured, ScenarioSettings
from vnetbench.core.schema import MACHINES
from vnetbench.declared.declaration import EVERY, JOIN_ROLE, AgainstSetting, Declaration, sizes

JOIN_SECONDS = Metric("join_seconds", "s", Better.LOWER, "Machines joining at once",
                      lead=True)
JOIN = (
    JOIN_SECONDS,
    Metric("joined", "count", Better.HIGHER, "Machines joined"),
    Metric("gate_spread_ms", "ms", Better.LOWER, "Start gate spread", noisy=True),
    Metric("gate_node_skew_ms", "ms", Better.LOWER,
           label="Start gate: the hosts' gates opened, first to last", noisy=True),
    Metric("machines", "count"),
    Metric("not_joined", "count", Better.LOWER),
    Metric("gate_never_released", "count", Better.LOWER),
    Metric("joined_on", "count", display="joined_on_{switch}"),
    Metric("restart_seconds", "s", Better.LOWER,
           label="Programs stopped and started again before the pass", noisy=True),
    Metric("settle_seconds", "s", label="Quiet host awaited before the release"),
    Metric("not_restarted", "count", Better.LOWER),
)

class JoinSettings(ScenarioSettings):
    prefix = "join_"
    pool: int | None = Field(None, ge=1, le=100,
                             description="Agents per container in join (none: auto).")
    wait_s: Measured[float] = Field(30.0, gt=0, le=3600,
                                    description="Join's bounded wait (seconds).")
    fresh: Literal["processes", "containers"] = Field(
        "processes", description="What every join pass starts afresh: the programs, in "
        "containers kept between passes, or the containers themselves (a stack per pass).")


DECLARATION = Declaration(
    name="join",
    description="time for N agents released at once by a start gate to join",
    metrics=JOIN,
    runtime="vnetbench.scenarios.join:Join",
    settings=JoinSettings,
    # one container per client at 20 and 50 clients (100 containers take ~45 s to come
    # up here, three passes per overlay); vNet pools its agents and runs the seed's sizes
    variants={EVERY: sizes(20, 50), "vnet": sizes(100, 200, 400, 800)},
    figures=(AgainstSetting("join-against-n", JOIN_SECONDS, MACHINES, "machines joining at once",
                            "join time against the machines joining at once"),),
    roles=(JOIN_ROLE,),
)
