"""failover: what it declares (its settings, metrics, matrix variants, help line);
it measures in vnetbench/scenarios/failover.py."""

from __future__ import annotations

from pydantic import Field

from vnetbench.core.metrics import BOOL, Better, Metric
from vnetbench.core.model import Measured, ScenarioSettings
from vnetbench.declared.declaration import EVERY, Declaration, Timeline

ANSWERED = "answered"  # failover's timeline: probes answered per 0.1 s
FAULT_AT = "fault_at_s"  # where on that timeline the fault took effect on every edge
FAULT_END = "fault_end_s"  # and where it was lifted on every edge
# failover: one of each per fault, its `fault` the fault's kind (switch-restart,
# backbone-down..., numbered when it repeats)
FAILOVER = (
    Metric("outage_ms", "ms", Better.LOWER, "Outage across switches, {fault}", lead=True,
           display="outage_ms_{fault}"),
    Metric("lost", "count", Better.LOWER, "Probes lost (10 ms apart), {fault}",
           display="lost_{fault}"),
    Metric("tcp_stall_ms", "ms", Better.LOWER, "TCP stall, {fault}",
           display="tcp_stall_ms_{fault}"),
    Metric("tcp_survived", BOOL, Better.HIGHER, "TCP connection survived, {fault}",
           lead=True, display="tcp_survived_{fault}"),
    Metric("rejoin_seconds", "s", Better.LOWER, "Agents registered again, {fault}",
           display="rejoin_seconds_{fault}"),
    Metric("not_recovered", BOOL, Better.LOWER,
           "Never recovered: no answer across switches after the lift, {fault}",
           display="not_recovered_{fault}"),
    Metric("no_rejoin_event", "count", Better.LOWER,
           "Agents that logged no rejoin event, {fault}", display="no_rejoin_event_{fault}"),
    Metric("recovery_ms", "ms", Better.LOWER,
           "Recovery: first answer after the lift, less the lift instant, {fault}",
           display="recovery_ms_{fault}"),
    Metric("fault_ms", "ms", label="Fault in effect, measured: latest edge applied to "
           "latest edge lifted, {fault}", display="fault_ms_{fault}"),
    Metric("fault_declared_ms", "ms", label="Fault in effect, declared, {fault}",
           display="fault_declared_ms_{fault}"),
    Metric("fault_spread_ms", "ms", Better.LOWER, noisy=True,
           label="Fault applied: first edge's step began to last edge's command returned, "
           "{fault}", display="fault_spread_ms_{fault}"),
    Metric("late_join_s", "s", Better.LOWER,
           "A machine restarted during the kill: its join, {fault}",
           display="late_join_s_{fault}"),
    Metric("late_joined_during", BOOL,
           label="That machine joined before the killed role was back, {fault}",
           display="late_joined_during_{fault}"),
    Metric("local_outage_ms", "ms", Better.LOWER,
           label="Outage on the same switch, {fault}", display="local_outage_ms_{fault}"),
    Metric("local_lost", "count", Better.LOWER, display="local_lost_{fault}"),
    Metric("ready_seconds", "s", Better.LOWER,
           label="Killed container: started again to ready, {fault}", noisy=True,
           display="ready_seconds_{fault}"),
    # rows with interval_s: the timeline
    Metric(ANSWERED, "share", display="answered_{fault}"),
    Metric(FAULT_AT, "s", label="Fault in effect on every edge, seconds after the probe "
           "began, {fault}", display="fault_at_s_{fault}"),
    Metric(FAULT_END, "s", label="Fault lifted on every edge, seconds after the probe "
           "began, {fault}", display="fault_end_s_{fault}"),
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
    figures=(Timeline("failover", ANSWERED, FAULT_AT, FAULT_END,
                      "failover on {overlay}: share of 10 ms probes answered",
                      "share of probes answered", "seconds since the probe began",
                      per_fault=True),),
)
