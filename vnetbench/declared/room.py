"""room: what it declares (its settings, metrics, matrix variants, help line);
it measures in vnetbench/scenarios/room/runtime.py."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from vnetbench.core.metrics import Better, Metric
from vnetbench.core.model import Measured, ScenarioSettings
from vnetbench.core.schema import MACHINES
from vnetbench.declared.declaration import (
    EVERY,
    LOAD_ROLE,
    AgainstSetting,
    Declaration,
    PercentileCdf,
    Timeline,
)

ROOM_P99_MS = Metric("room_p99_ms", "ms", Better.LOWER, "Room: request latency p99",
                     plot="room-p99", lead=True)
ROOM_LATENCY = "room_latency_ms"  # room's latency CDF: a row per quantile
# room: one row each per pass, over every request of every machine (measure/room.py)
ROOM = (
    Metric("room_p50_ms", "ms", Better.LOWER, "Room: request latency p50", plot="room-p50"),
    ROOM_P99_MS,
    Metric("room_failed", "count", Better.LOWER, "Room: requests failed or timed out"),
    Metric("room_fairness", "index", Better.HIGHER,
           "Room: fairness of the machines' service (Jain's index, 1 = equal)"),
    Metric("room_goodput_mbit", "Mbit/s", Better.HIGHER, "Room: goodput over the load's span",
           lead=True),
    Metric("room_cpu_server_percent", "% of a core", Better.LOWER,
           "Room: CPU of the server agent's container (% of a core)", noisy=True),
    Metric("room_cpu_percent", "% of a core", Better.LOWER,
           "Room: CPU of the {role} containers (% of a core)", noisy=True,
           display="room_cpu_{role}_percent"),
    Metric("room_host_cpu_percent", "% of all cores",
           label="Room: the host's CPU busy during the load (all cores)"),
    Metric("room_p95_ms", "ms", Better.LOWER, label="Room: request latency p95"),
    Metric("room_max_ms", "ms", Better.LOWER, label="Room: request latency max", noisy=True),
    Metric("room_timeouts", "count", Better.LOWER, label="Room: requests timed out"),
    Metric("room_answered", "count", label="Room: requests answered"),
    Metric("room_requests_per_s", "requests/s", label="Room: requests answered per second"),
    Metric("room_goodput_min_mbit", "Mbit/s", Better.HIGHER,
           label="Room: the slowest machine's goodput"),
    Metric("room_machines", "count", label="Room: machines that ran"),
    Metric("room_no_record", "count", Better.LOWER,
           label="Room: machines whose load left no record"),
    Metric("room_stalled", "count", Better.LOWER,
           label="Room: machines whose wrk never ended (stopped, its counts lost)"),
    Metric("room_late_s", "s", Better.LOWER, noisy=True,
           label="Room: the latest machine's start after the room's instant"),
    Metric("room_probes_start_s", "s", noisy=True,
           label="Room: starting every machine's probe took (before the instant)"),
    Metric("room_probes_lead_s", "s", noisy=True,
           label="Room: the lead the probes were given to start before the instant"),
    Metric("room_planned", "count", label="Room: requests the open loop's schedule planned"),
    Metric("room_sent", "count", label="Room: requests the open loop sent"),
    Metric("room_sent_percent", "%", Better.HIGHER,
           label="Room: requests sent, % of those planned (open loop)"),
    Metric("room_behind_p99_ms", "ms", Better.LOWER, noisy=True,
           label="Room: the generator's own lag behind its schedule, p99 (open loop)"),
    Metric("room_behind_max_ms", "ms", Better.LOWER, noisy=True,
           label="Room: the generator's own lag behind its schedule, max (open loop)"),
    Metric("room_waited", "count", Better.LOWER,
           label="Room: requests that waited for a connection (open loop)"),
    Metric("room_reopened", "count",
           label="Room: requests sent again on a new connection, the server having "
                 "closed the kept one (open loop)"),
    Metric("room_generator_cpu_s_per_1000", "s", Better.LOWER, noisy=True,
           label="Room: the generators' CPU seconds per 1000 requests (open loop)"),
    Metric("room_generator_mib", "MiB", Better.LOWER,
           label="Room: a generator's peak memory, the largest machine's (open loop)"),
    Metric(ROOM_LATENCY, "ms", label="Room: request latency, {quantile}th percentile",
           display="room_latency_q{quantile}_ms"),
)
# a schedule of faults during the room (vnetbench/faults/): one of each per event, its
# `fault` the event's label (backbone-flap, churn, switch-restart-2...); figures from
# the requests scheduled while it was in effect (measure/room_faults.py)
ROOM_FAULT_TIMELINE = ("room_timeline_answered", "room_timeline_failed",
                       "room_timeline_p50_ms", "room_timeline_p99_ms")
ROOM_FAULT_AT, ROOM_FAULT_END = "room_fault_at_s", "room_fault_end_s"
ROOM_FAULTS = (
    Metric("room_fault_requests", "count",
           label="Room: requests scheduled while the fault was in effect, {fault}",
           display="room_fault_requests_{fault}"),
    Metric("room_fault_failed", "count", Better.LOWER,
           "Room: requests failed during the fault (connect, read, write, status), {fault}",
           lead=True, display="room_fault_failed_{fault}"),
    Metric("room_fault_timeouts", "count", Better.LOWER,
           label="Room: requests timed out during the fault, {fault}",
           display="room_fault_timeouts_{fault}"),
    Metric("room_fault_p50_ms", "ms", Better.LOWER,
           label="Room: latency p50 of requests scheduled during the fault, {fault}",
           display="room_fault_p50_ms_{fault}"),
    Metric("room_fault_p99_ms", "ms", Better.LOWER,
           "Room: latency p99 of requests scheduled during the fault, {fault}",
           display="room_fault_p99_ms_{fault}"),
    Metric("room_fault_after_p50_ms", "ms", Better.LOWER,
           label="Room: latency p50 in the 10 s after the fault, {fault}",
           display="room_fault_after_p50_ms_{fault}"),
    Metric("room_fault_after_p99_ms", "ms", Better.LOWER,
           "Room: latency p99 in the 10 s after the fault, {fault}",
           display="room_fault_after_p99_ms_{fault}"),
    Metric("room_fault_band_ms", "ms", noisy=True,
           label="Room: the rolling p99's band before the fault (its upper edge), {fault}",
           display="room_fault_band_ms_{fault}"),
    Metric("room_fault_recovery_ms", "ms", Better.LOWER,
           "Room: from the lift until the rolling p99 is back within its band, {fault}",
           lead=True, display="room_fault_recovery_ms_{fault}"),
    Metric("room_fault_never_answered", "count", Better.LOWER,
           "Room: machines that never got an answer again after the fault, {fault}",
           display="room_fault_never_answered_{fault}"),
    Metric("room_fault_held_ms", "ms", label="Room: the fault in effect as stamped, from "
           "its effective start to its lift, {fault}", display="room_fault_held_ms_{fault}"),
    Metric("room_fault_declared_ms", "ms", label="Room: the fault's declared span, {fault}",
           display="room_fault_declared_ms_{fault}"),
    Metric(ROOM_FAULT_AT, "s", label="Room: the fault in effect, seconds after the room's "
           "instant, {fault}", display="room_fault_at_s_{fault}"),
    Metric(ROOM_FAULT_END, "s", label="Room: the fault lifted, seconds after the room's "
           "instant, {fault}", display="room_fault_end_s_{fault}"),
    # rows with interval_s: the timeline per 100 ms, by scheduled instant
    Metric(ROOM_FAULT_TIMELINE[0], "count", label="Room: requests answered per 100 ms"),
    Metric(ROOM_FAULT_TIMELINE[1], "count", label="Room: requests failed per 100 ms"),
    Metric(ROOM_FAULT_TIMELINE[2], "ms", label="Room: latency p50 per 100 ms"),
    Metric(ROOM_FAULT_TIMELINE[3], "ms", label="Room: latency p99 per 100 ms"),
)

# a workload (vnetbench/model/workload.py) instead of the steady rate: one of each per phase,
# its `phase` the phase's name, over its mix's requests; one of each per at-once event,
# its `event` the event's name (scenarios/room/workload_figures.py)
ROOM_WORKLOAD = (
    Metric("room_phase_p50_ms", "ms", Better.LOWER,
           label="Room: latency p50 of the phase's requests, {phase}",
           display="room_phase_p50_ms_{phase}"),
    Metric("room_phase_p99_ms", "ms", Better.LOWER,
           "Room: latency p99 of the phase's requests, {phase}", lead=True,
           display="room_phase_p99_ms_{phase}"),
    Metric("room_phase_max_ms", "ms", Better.LOWER, noisy=True,
           label="Room: latency max of the phase's requests, {phase}",
           display="room_phase_max_ms_{phase}"),
    Metric("room_phase_planned", "count", label="Room: requests the phase planned, {phase}",
           display="room_phase_planned_{phase}"),
    Metric("room_phase_answered", "count", label="Room: requests of the phase answered, "
           "{phase}", display="room_phase_answered_{phase}"),
    Metric("room_phase_failed", "count", Better.LOWER,
           "Room: requests of the phase failed or timed out, {phase}",
           display="room_phase_failed_{phase}"),
    Metric("room_phase_timeouts", "count", Better.LOWER,
           label="Room: requests of the phase timed out, {phase}",
           display="room_phase_timeouts_{phase}"),
    Metric("room_phase_unrecorded", "count", Better.LOWER,
           label="Room: requests of the phase on machines without a matching record, {phase}",
           display="room_phase_unrecorded_{phase}"),
    Metric("room_burst_last_ms", "ms", Better.LOWER,
           "Room: from the at-once event's instant until the last machine had its object, "
           "{event}", lead=True, display="room_burst_last_ms_{event}"),
    Metric("room_burst_p50_ms", "ms", Better.LOWER,
           label="Room: the at-once event's object, p50 of the machines' times, {event}",
           display="room_burst_p50_ms_{event}"),
    Metric("room_burst_unfinished", "count", Better.LOWER,
           "Room: machines that never had the at-once event's object, {event}",
           display="room_burst_unfinished_{event}"),
)
def tls_metrics(prefix: str, requests: str, dimensions: str) -> tuple[Metric, ...]:
    """The TLS handshakes `requests` opened, full and resumed, and opening's p99, named
    as scenarios/room/workload.py's tls_values names them (`prefix`_tls_full...);
    `dimensions`: their placeholders, "{phase}" or "{fault}, {phase}"."""
    suffix = dimensions.replace(", ", "_")
    return (
        Metric(f"{prefix}_tls_full", "count", Better.LOWER,
               label=f"Room: full TLS handshakes of {requests}, {dimensions}",
               display=f"{prefix}_tls_full_{suffix}"),
        Metric(f"{prefix}_tls_resumed", "count",
               label=f"Room: resumed TLS handshakes of {requests}, {dimensions}",
               display=f"{prefix}_tls_resumed_{suffix}"),
        Metric(f"{prefix}_tls_connect_p99_ms", "ms", Better.LOWER,
               label=f"Room: opening a TLS connection (TCP and TLS handshakes), p99 over "
                     f"{requests}, {dimensions}",
               display=f"{prefix}_tls_connect_p99_ms_{suffix}"))


# a workload asking over HTTPS, beside ROOM_WORKLOAD's: the TLS handshakes its requests
# opened, full or resumed (the machine's latest session offered), and the time to open
# such a connection, per phase's mix, per at-once event, and per fault and phase: its
# reconnect storm, the phase's requests from the fault's start until AFTER_S after its
# lift (scenarios/room/workload_faults.py)
ROOM_WORKLOAD_TLS = (
    *tls_metrics("room_phase", "the phase's requests", "{phase}"),
    *tls_metrics("room_burst", "the at-once event's requests", "{event}"),
    *tls_metrics("room_fault_phase", "the phase's requests from the fault until 10 s after "
                 "its lift", "{fault}, {phase}"),
)

# a workload under a schedule of faults (scenarios/room/workload_faults.py): one of each
# per event and phase it reached, over the phase's mix (its `fault` and `phase`); one of
# each per at-once event a fault caught (its `fault` and `event`)
ROOM_WORKLOAD_FAULTS = (
    Metric("room_fault_phase_requests", "count",
           label="Room: the phase's requests scheduled while the fault was in effect, "
                 "{fault}, {phase}", display="room_fault_phase_requests_{fault}_{phase}"),
    Metric("room_fault_phase_failed", "count", Better.LOWER,
           label="Room: the phase's requests failed during the fault (connect, read, write, "
                 "status), {fault}, {phase}",
           display="room_fault_phase_failed_{fault}_{phase}"),
    Metric("room_fault_phase_timeouts", "count", Better.LOWER,
           label="Room: the phase's requests timed out during the fault, {fault}, {phase}",
           display="room_fault_phase_timeouts_{fault}_{phase}"),
    Metric("room_fault_phase_p99_ms", "ms", Better.LOWER,
           label="Room: latency p99 of the phase's requests during the fault, {fault}, "
                 "{phase}", display="room_fault_phase_p99_ms_{fault}_{phase}"),
    Metric("room_fault_phase_after_p99_ms", "ms", Better.LOWER,
           label="Room: latency p99 of the phase's requests in the 10 s after the fault, "
                 "{fault}, {phase}", display="room_fault_phase_after_p99_ms_{fault}_{phase}"),
    Metric("room_fault_phase_recovery_ms", "ms", Better.LOWER,
           label="Room: from the lift until the phase's rolling p99 is back within its "
                 "band, {fault}, {phase}",
           display="room_fault_phase_recovery_ms_{fault}_{phase}"),
    Metric("room_fault_burst_last_ms", "ms", Better.LOWER,
           label="Room: an at-once event the fault caught, from its instant until the last "
                 "machine had its object, {fault}, {event}",
           display="room_fault_burst_last_ms_{fault}_{event}"),
    Metric("room_fault_burst_unfinished", "count", Better.LOWER,
           label="Room: an at-once event the fault caught, machines that never had its "
                 "object, {fault}, {event}",
           display="room_fault_burst_unfinished_{fault}_{event}"),
)

MAX_ROOM_REPLY_BYTES = 16 * 2**20


class RoomSettings(ScenarioSettings):
    prefix = "room_"
    loop: Measured[Literal["open", "closed"]] = Field(
        "open", description="room: open, each machine sends on a schedule fixed before "
        "the load, whatever the replies do (latency from the scheduled instant); closed, "
        "wrk with one connection, the next request 1/rate after each reply.")
    arrivals: Measured[Literal["even", "poisson"]] = Field(
        "even", description="room (open loop): requests evenly spaced at 1/rate, or "
        "Poisson arrivals at that mean (seeded per machine and pass: reproducible).")
    rate: Measured[float] = Field(
        5.0, ge=0, le=10_000, description="room: requests per second of each machine: "
        "the open loop's schedule, or the closed loop's pause of 1/rate after each reply "
        "(0, closed only: no pause, as fast as the replies come).")
    connections: Measured[int] = Field(
        6, ge=1, le=256, description="room (open loop): at most this many connections "
        "per machine at once (a browser's per-host limit is 6); a request waits for one, "
        "and its wait counts in its latency.")
    sizes: Measured[tuple[int, ...]] = Field(
        (200, 2048, 65536), min_length=1, max_length=10, description="room: the replies' "
        "sizes in bytes, requested in turn, e.g. 200,2048,65536.")
    connection: Measured[Literal["keep", "new"]] = Field(
        "keep", description="room: requests on kept connections (the closed loop's one, "
        "the open loop's pool), or each on a new one.")
    timeout_s: Measured[int] = Field(
        2, ge=1, le=60, description="room: a request unanswered this long counts as timed "
        "out (whole seconds: wrk reads no finer unit).")

    @field_validator("sizes", mode="before")
    @classmethod
    def _sizes_from_commas(cls, sizes: object) -> object:
        """`200,2048` as run's --room-sizes takes it, in a file or an ab arm too."""
        if isinstance(sizes, str):
            return tuple(part.strip() for part in sizes.split(",") if part.strip())
        return sizes

    @field_validator("sizes")
    @classmethod
    def _sizes_in_range(cls, sizes: tuple[int, ...]) -> tuple[int, ...]:
        wrong = [s for s in sizes if not 1 <= s <= MAX_ROOM_REPLY_BYTES]
        if wrong:
            raise ValueError(f"room replies are 1 to {MAX_ROOM_REPLY_BYTES} bytes (files the "
                             f"server holds in memory); {wrong} are not")
        return sizes

    @model_validator(mode="after")
    def _open_loop_has_a_rate(self) -> RoomSettings:
        if self.loop == "open" and self.rate == 0:
            raise ValueError("room rate 0 (as fast as the replies come) is a closed loop: "
                             "give room_rate above 0, or room_loop: closed")
        return self

    @model_validator(mode="after")
    def _open_loop_settings_on_the_open_loop(self) -> RoomSettings:
        """The closed loop (wrk, one connection, the next request after each reply) has
        no arrivals and no pool: given to it, either was silently ignored."""
        ignored = [f"room_{name} {value}" for name, value, default in (
            ("arrivals", self.arrivals, "even"), ("connections", self.connections, 6))
            if self.loop == "closed" and value != default]
        if ignored:
            raise ValueError(f"{' and '.join(ignored)}: the closed loop has no schedule of "
                             "arrivals and one connection per machine, so it would be "
                             "ignored; leave it out, or room_loop: open")
        return self


DECLARATION = Declaration(
    name="room",
    description=("a contest room: N machines request replies from one server at once "
                 "(latency percentiles, failures, fairness, CPU per role)"),
    metrics=(ROOM + ROOM_FAULTS + ROOM_WORKLOAD + ROOM_WORKLOAD_TLS
             + ROOM_WORKLOAD_FAULTS),
    runtime="vnetbench.scenarios.room:Room",
    settings=RoomSettings,
    # issue #26's room, short for the matrix's time (make bench's 10 minutes are already
    # spent): 20 machines for 3 s, twice (~30 s an overlay, bring-up included);
    # `vnetbench capacity` finds the largest room, `run room` measures longer
    variants={EVERY: {"n20": {MACHINES: 20, "seconds": 3, "passes": 2}}},
    figures=(AgainstSetting("room-p99-by-size", ROOM_P99_MS, MACHINES, "machines in the room",
                            "room: request latency p99 against the machines in the room"),
             PercentileCdf("room-latency-cdf", "room: latency of every request of every "
                           "machine (mean over passes)", ROOM_LATENCY,
                           "request latency (ms, log scale)",
                           "share of requests answered within", "requests"),
             Timeline("room-faults", ROOM_FAULT_TIMELINE[3], ROOM_FAULT_AT, ROOM_FAULT_END,
                      "room on {overlay} under its faults",
                      "p99 of requests due per 100 ms (ms)", "seconds since the load began")),
    roles=(LOAD_ROLE,),
)
