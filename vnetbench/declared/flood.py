"""flood: what it declares (its settings, metrics, matrix variants, help line);
it measures in vnetbench/scenarios/flood.py."""

from __future__ import annotations

from pydantic import Field

from vnetbench.core.metrics import Better, Metric
from vnetbench.core.model import Measured, ScenarioSettings
from vnetbench.declared.declaration import DEFAULT, EVERY, Declaration

FLOOD = (
    Metric("pings_answered", "count", Better.HIGHER, "Pings answered under flood",
           lead=True),
    Metric("flood_packets_dropped", "count", Better.NEITHER,
           "Flood packets lost (receiver count)"),
    Metric("limiter_drops", "count", Better.NEITHER, "Packets dropped by the rate limit"),
    Metric("predicted_drops", "count", Better.NEITHER,
           "Token-bucket prediction of those drops"),
    Metric("pings_sent", "count"),
    Metric("ping_rtt_mean_ms", "ms", Better.LOWER),
    Metric("flood_packets_sent", "count"),
    Metric("flood_packets_received", "count"),
    Metric("flood_received_mbit", "Mbit/s"),
    Metric("prediction_difference", "%"),
    Metric("limit_allowed_pps", "packets/s"),
)

class FloodSettings(ScenarioSettings):
    prefix = "flood_"
    mbit: Measured[float] = Field(300.0, gt=0,
                                  description="Flood offered load (BENCH_FLOOD_MBIT).")


DECLARATION = Declaration(
    name="flood",
    description="UDP flood to a neighbour under per-agent limits; pings from another switch",
    metrics=FLOOD,
    runtime="vnetbench.scenarios.flood:Flood",
    settings=FloodSettings,
    variants={EVERY: DEFAULT},
)
