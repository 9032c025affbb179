"""loaded_latency: what it declares (its metrics, matrix variants, help line); it measures in
vnetbench/scenarios/loaded_latency.py."""

from __future__ import annotations

from vnetbench.core.metrics import Better, Metric
from vnetbench.declared.declaration import EVERY, Declaration

# loaded_latency: pings every 10 ms idle, under TCP one way, then both ways (RRUL)
LOAD_PHASES = {"idle": "idle", "one_way": "under load one way",
               "both_ways": "under load both ways"}
LOADED = ("one_way", "both_ways")
LOADED_LATENCY = (
    *(Metric(f"{phase}_added_p{q}_ms", "ms", Better.LOWER,
             f"Latency added {LOAD_PHASES[phase]}, p{q} (ms)",
             noisy=q == 99, lead=q == 50, difference=True)
      for phase in LOADED for q in (50, 99)),
    *(metric for phase, words in LOAD_PHASES.items() for metric in (
        Metric(f"{phase}_rtt_p50_ms", "ms", Better.LOWER,
               f"Ping round trip, {words}, p50" if phase == "idle" else None,
               label=f"Ping round trip, {words}, p50"),
        Metric(f"{phase}_rtt_p99_ms", "ms", Better.LOWER,
               label=f"Ping round trip, {words}, p99", noisy=True),
        Metric(f"{phase}_rtt_max_ms", "ms", Better.LOWER,
               label=f"Ping round trip, {words}, max", noisy=True),
        Metric(f"{phase}_ping_loss", "%", Better.LOWER, label=f"Ping loss, {words}"),
        Metric(f"{phase}_pings_sent", "count", label=f"Pings sent, {words}"))),
    *(Metric(f"{phase}_load_mbit", "Mbit/s", Better.HIGHER,
             label=f"TCP goodput {LOAD_PHASES[phase]} (the load)") for phase in LOADED),
)

DECLARATION = Declaration(
    name="loaded_latency",
    description=("ping RTT every 10 ms between two agents on different switches: idle, "
                 "under TCP one way, both ways; the latency the load adds"),
    metrics=LOADED_LATENCY,
    runtime="vnetbench.scenarios.loaded_latency:LoadedLatency",
    variants={EVERY: {"default": {"passes": 1, "seconds": 3}}},
)
