"""config: what it declares (its metrics, matrix variants, help line); it measures in
vnetbench/scenarios/config.py."""

from __future__ import annotations

from vnetbench.core.metrics import Better, Metric
from vnetbench.declared.declaration import DEFAULT, EVERY, Declaration, sizes

CONFIG = (
    Metric("config_seconds", "s", Better.LOWER, "Config change", lead=True),
    Metric("config_lines", "count"),
    Metric("config_bytes", "bytes"),
    Metric("switches_confirmed", "count", Better.HIGHER),
)

DECLARATION = Declaration(
    name="config",
    description="time from a one-line config change until every switch confirms it",
    metrics=CONFIG,
    runtime="vnetbench.scenarios.config:ConfigChange",
    variants={EVERY: DEFAULT, "vnet": sizes(300, 5000)},
)
