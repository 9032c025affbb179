"""failover: what it declares (its settings, metrics, matrix variants, help line);
it measures in vnetbench/scenarios/failover.py."""

from __future__ import annotations

from pydantic import Field

from vnetbench.metrics import BOOL, Better, Metric
from vnetbench.model import Measured, ScenarioSettings
from vnetbench.scenarios.declaration import EVERY, Declaration

ANSWERED_PREFIX = "answered_"  # failover's timeline: probes answered per 0.1 s
FAULT_AT_PREFIX = "fault_at_s_"  # where on that timeline the fault was injected
# failover: one of each per fault, `{fault}` its kind (switch-restart, backbone-down...)
FAILOVER = (
    Metric("outage_ms_{fault}", "ms", Better.LOWER, "Outage across switches, {fault}",
           lead=True),
    Metric("lost_{fault}", "count", Better.LOWER, "Probes lost (10 ms apart), {fault}"),
    Metric("tcp_stall_ms_{fault}", "ms", Better.LOWER, "TCP stall, {fault}"),
    Metric("tcp_survived_{fault}", BOOL, Better.HIGHER, "TCP connection survived, {fault}",
           lead=True),
    Metric("rejoin_seconds_{fault}", "s", Better.LOWER, "Agents registered again, {fault}"),
    Metric("not_recovered_{fault}", "count", Better.LOWER, "Never recovered, {fault}"),
    Metric("late_join_s_{fault}", "s", Better.LOWER,
           "A machine restarted during the kill: its join, {fault}"),
    Metric("late_joined_during_{fault}", BOOL,
           label="That machine joined before the killed role was back, {fault}"),
    Metric("local_outage_ms_{fault}", "ms", Better.LOWER,
           label="Outage on the same switch, {fault}"),
    Metric("local_lost_{fault}", "count", Better.LOWER),
    Metric("ready_seconds_{fault}", "s", Better.LOWER,
           label="Killed container: started again to ready, {fault}", noisy=True),
    Metric(ANSWERED_PREFIX + "{fault}", "share"),  # rows with interval_s: the timeline
    Metric(FAULT_AT_PREFIX + "{fault}", "s",
           label="Fault injected, seconds after the probe began, {fault}"),
)

class FailoverSettings(ScenarioSettings):
    prefix = "failover_"
    window_s: Measured[float] = Field(
        20.0, ge=1, le=300, description="failover: how long after a fault ends the probes "
        "wait for the path to answer again (seconds).")


DECLARATION = Declaration(
    name="failover",
    description="10 ms probes and a TCP stream through injected faults: outage, stall, rejoin",
    metrics=FAILOVER,
    runtime="vnetbench.scenarios.failover:Failover",
    settings=FailoverSettings,
    # the standard faults (switch restarted, backbone down, loss burst), once: each waits
    # at most its window for the path to answer again, most far less
    variants={EVERY: {"default": {"passes": 1, "failover_window_s": 15}}},
)
