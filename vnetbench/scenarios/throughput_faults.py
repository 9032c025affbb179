"""Throughput's stream under a schedule of faults (the topology's `faults:`, on one
timeline from the stream's start): which events a stream can take (a pair of agents
has no room: no machines, no server, no churn), the stream started at one instant
after the schedule is staged, and its rows: per-event figures from iperf3's 100 ms
intervals (measure/stream_faults.py) with a `fault` column each, each event's
effective start and end, the timeline per 100 ms, and whether the stream survived.
"""

from __future__ import annotations

from collections.abc import Sequence

from vnetbench.declared.declaration import Values
from vnetbench.declared.throughput import DECLARATION, STREAM_TIMELINE
from vnetbench.errors import UserError
from vnetbench.faults.on_stack import ScheduleOutcome, expand_within
from vnetbench.measure.stream_faults import (
    Interval,
    StreamEventFigures,
    intervals_of,
    schedule_figures,
)
from vnetbench.model.faults.declared import SERVER, MachineCount
from vnetbench.model.topology import Topology
from vnetbench.scenarios.base import Metrics, SeriesPoint

INTERVAL_OPTIONS = ["-i", "0.1"]  # iperf3's intervals: the timeline's 100 ms


def stream_fault_problems(topology: Topology) -> list[str]:
    """The events a stream between two agents cannot take, one sentence each."""
    problems = []
    for entry, fault in enumerate(topology.faults):
        if isinstance(fault.kill, MachineCount) or fault.kill == SERVER or fault.churn:
            problems.append(f"faults.{entry} ({fault.describe()}) acts on the room's "
                            "machines or server, and throughput's stream has none: run it "
                            "with room, or kill a switch or the control plane")
    return problems


def check_stream_faults(topology: Topology) -> None:
    """The schedule fits the stream: events it can take, its last step within the
    stream's seconds, and the rest as any schedule (expand's checks)."""
    problems = stream_fault_problems(topology)
    if problems:
        raise UserError(f"Topology '{topology.name}': {'; '.join(problems)}.")
    expand_within(topology, [], "the stream")


def figure_values(figures: Sequence[StreamEventFigures]) -> Values:
    values: Values = {}
    for f in figures:
        own = {"stream_fault_before_mbit": f.before_mbit,
               "stream_fault_during_mbit": f.during_mbit,
               "stream_fault_after_mbit": f.after_mbit,
               "stream_fault_stalled_ms": f.stalled_ms,
               "stream_fault_recovery_ms": f.recovery_ms}
        values |= {DECLARATION.series(name, fault=f.label): value
                   for name, value in own.items()}
    return values


def window_values(outcome: ScheduleOutcome, origin: float) -> Values:
    """Each event's effective start and end after the stream's start, its span as
    stamped beside its declared one."""
    values: Values = {}
    for event in outcome.events:
        series = {"fault": event.label}
        if event.start is not None:
            values[DECLARATION.series("stream_fault_at_s", **series)] = round(
                event.start - origin, 3)
        if event.end is not None:
            values[DECLARATION.series("stream_fault_end_s", **series)] = round(
                event.end - origin, 3)
        if event.start is not None and event.end is not None:
            values[DECLARATION.series("stream_fault_held_ms", **series)] = \
                (event.end - event.start) * 1000
        values[DECLARATION.series("stream_fault_declared_ms", **series)] = \
            outcome.declared.get(event.label)
    return values


def timeline(intervals: Sequence[Interval], origin: float) -> list[SeriesPoint]:
    """The stream's rate per interval, each at its interval's end after the start."""
    return [SeriesPoint(STREAM_TIMELINE, i.mbit, "Mbit/s", round(i.end - origin, 3))
            for i in intervals]


def stream_fault_result(report: str, began: float, outcome: ScheduleOutcome,
                        survived: bool) -> tuple[Metrics, list[SeriesPoint], list[str]]:
    """The stream's rows under the schedule: metrics, timeline, words; `began` is when
    the stream began (its vnetbench-at line: the timeline's zero)."""
    intervals = intervals_of(report, began)
    figures = schedule_figures(intervals, outcome.events)
    values = (figure_values(figures) | window_values(outcome, began)
              | {"stream_survived": 1.0 if survived else 0.0})
    words = [f"{f.label}: the stream's rate was not back within a tenth of its rate "
             f"before ({f.before_mbit:.0f} Mbit/s) within 10 s after the lift"
             for f in figures if f.before_mbit and f.recovery_ms is None
             and f.after_mbit is not None]
    if not survived:
        words.append("the stream did not survive the faults: iperf3 ended its test with an "
                     "error (its report is in raw/)")
    return DECLARATION.emitted(values), timeline(intervals, began), words
