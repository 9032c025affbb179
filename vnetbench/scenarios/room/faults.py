"""The room under a schedule of faults: the schedule run during the load
(faults/executor.py stages and fires it; here what a room needs of it: the
containers each target is, the probes started anew in a machine or the server the
schedule started again), and its results: per-event figures (measure/room_faults.py)
as the pass's metric rows, a `fault` column each (as failover reports its faults),
the timeline per 100 ms as rows with `interval_s`, each event's effective start and
end on that axis, and the pass's words.

A machine's generator runs in its container's network namespace, which goes with the
container when it is killed: a killed machine's generator is given its schedule up
to the kill, and when the machine is started again a new generator takes the
requests due from RESUME_S after that start on (a machine switched off asks
nothing; one just started asks again, and fails until its overlay has it back).
The server's nginx is started anew likewise when the server is."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from vnetbench.declared.declaration import Values
from vnetbench.declared.room import (
    DECLARATION,
    ROOM_FAULT_AT,
    ROOM_FAULT_END,
    ROOM_FAULT_TIMELINE,
)
from vnetbench.measure.room_faults import (
    AFTER_S,
    Bin,
    EventFigures,
    EventWindow,
    Mark,
    Request,
    marks,
    schedule_figures,
    timeline,
)
from vnetbench.scenarios.base import Metrics, SeriesPoint

NAMED_AT_MOST = 5  # machines named in a sentence; the count says the rest
# over this share unanswered, the pass says its percentiles are of the answered only (a
# p99 of 13 ms during WireGuard's switch restart, beside 391 of 783 timed out)
UNANSWERED_SAID = 0.01


def fault_values(figures: Sequence[EventFigures]) -> Values:
    """Each event's figures, by metric series (its label in the `fault` column)."""
    values: Values = {}
    for f in figures:
        own: dict[str, float | None] = {
            "room_fault_requests": f.requests, "room_fault_failed": f.failed,
            "room_fault_timeouts": f.timed_out, "room_fault_p50_ms": f.p50_ms,
            "room_fault_p99_ms": f.p99_ms, "room_fault_after_p50_ms": f.after_p50_ms,
            "room_fault_after_p99_ms": f.after_p99_ms, "room_fault_band_ms": f.band_ms,
            "room_fault_recovery_ms": f.recovery_ms,
            "room_fault_never_answered": len(f.never_answered)}
        values |= {DECLARATION.series(name, fault=f.label): value
                   for name, value in own.items()}
    return values


def mark_values(found: Sequence[Mark]) -> Values:
    values: Values = {}
    for mark in found:
        if mark.start_s is not None:
            values[DECLARATION.series(ROOM_FAULT_AT, fault=mark.label)] = mark.start_s
        if mark.end_s is not None:
            values[DECLARATION.series(ROOM_FAULT_END, fault=mark.label)] = mark.end_s
    return values


def timeline_series(bins: Sequence[Bin]) -> list[SeriesPoint]:
    """Answered, failed, p50 and p99 per bin, each at its bin's end (a bin with no
    answer has no latency row)."""
    points = []
    for b in bins:
        for name, value in zip(ROOM_FAULT_TIMELINE, (b.answered, b.failed, b.p50_ms,
                                                     b.p99_ms), strict=True):
            if value is not None:
                points.append(SeriesPoint(name, float(value), DECLARATION.unit(name),
                                          b.end_s))
    return points


def fault_words(figures: Sequence[EventFigures],
                last_lines: Callable[[], Mapping[str, list[str]]] | None = None) -> list[str]:
    """What the pass says of each event: machines that never got an answer again
    (named, with their containers' last log lines when `last_lines` gives them), a
    p99 not back within its band in the window after the lift."""
    said = []
    lines: Mapping[str, list[str]] | None = None
    for f in figures:
        if f.never_answered:
            if lines is None and last_lines is not None:
                lines = last_lines()  # read once, and only when a machine is named
            named = ", ".join(machine + (f" (its log ends: {' | '.join(lines[machine])})"
                                         if lines and lines.get(machine) else "")
                              for machine in f.never_answered[:NAMED_AT_MOST])
            more = len(f.never_answered) - NAMED_AT_MOST
            said.append(f"{f.label}: {len(f.never_answered)} machine(s) never got an answer "
                        f"again after it ({named}{f' and {more} more' if more > 0 else ''})")
        unanswered = f.failed + f.timed_out
        if f.requests and unanswered > UNANSWERED_SAID * f.requests:
            said.append(f"{f.label}: its p50 and p99 are of the requests answered; "
                        f"{unanswered} of its {f.requests} got no answer ({f.failed} failed, "
                        f"{f.timed_out} timed out)")
        if f.band_ms is not None and f.recovery_ms is None and f.requests:
            said.append(f"{f.label}: the room's p99 was not back within its band (up to "
                        f"{f.band_ms:.1f} ms before the fault) within {AFTER_S:g} s after "
                        "the lift, or before the next event or the load's end")
    return said


def held_values(events: Sequence[EventWindow], declared: Mapping[str, float | None]) -> Values:
    """Each event's span as stamped beside its declared one."""
    values: Values = {}
    for event in events:
        if event.start is not None and event.end is not None:
            values[DECLARATION.series("room_fault_held_ms", fault=event.label)] = \
                (event.end - event.start) * 1000
        values[DECLARATION.series("room_fault_declared_ms", fault=event.label)] = \
            declared.get(event.label)
    return values


def room_fault_result(requests: Sequence[Request], events: Sequence[EventWindow],
                      origin: float, declared: Mapping[str, float | None] | None = None,
                      last_lines: Callable[[], Mapping[str, list[str]]] | None = None,
                      timeout_s: float = 0.0) -> tuple[Metrics, list[SeriesPoint], list[str]]:
    """A room pass's rows for its schedule of faults: the metrics, the timeline, the
    words; `origin` is the room's instant (the timeline's zero); `declared` each
    event's declared span; `last_lines` the machines' last log lines, by machine;
    `timeout_s` the room's request timeout."""
    figures = schedule_figures(requests, events, timeout_s)
    values = (fault_values(figures) | mark_values(marks(events, origin))
              | held_values(events, declared or {}))
    return (DECLARATION.emitted(values), timeline_series(timeline(requests, origin)),
            fault_words(figures, last_lines))
