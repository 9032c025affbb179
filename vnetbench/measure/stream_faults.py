"""What each fault of a schedule did to throughput's TCP stream: figures per event from
iperf3's intervals (`-i 0.1`, in its JSON report) and the instants each fault was
stamped in effect and lifted (pure).

iperf3 counts its intervals from the test's start; the stream was started at one
instant by vnetbench-at, whose `began` line anchors them on the host's clock (the
clock the fault stamps use), within the control connection's set-up (a round trip
or two). An interval belongs to an event when its middle lies in the event's span.

Per event: the stream's mean rate in the BEFORE_S before it (not reaching into the
stream's first WARMUP_S, slow start, unless nothing else is left; nor into the
previous event's aftermath), during it, and in the AFTER_S after the lift (up to
the next event); the time the stream moved less than STALL_SHARE of its rate before
(`stalled_ms`, by interval); and `recovery_ms`: from the lift to the start of the
first interval from which the rate stays at least RECOVERED_SHARE of its rate
before, to the horizon (None: never, or no rate before). Whether the stream
survived (iperf3 ended its test without an error) is the pass's, not an event's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from vnetbench.measure.room_faults import EventWindow, with_neighbours

BEFORE_S = 10.0
AFTER_S = 10.0
WARMUP_S = 1.0  # TCP's slow start and the first window's growth
STALL_SHARE = 0.1  # under a tenth of its rate before: the stream is stalled
RECOVERED_SHARE = 0.9  # within a tenth of its rate before: back


@dataclass(frozen=True)
class Interval:
    """One of iperf3's intervals on the host's clock: its span and rate."""

    start: float
    end: float
    mbit: float

    @property
    def middle(self) -> float:
        return (self.start + self.end) / 2


@dataclass(frozen=True)
class StreamEventFigures:
    label: str
    before_mbit: float | None
    during_mbit: float | None
    after_mbit: float | None
    stalled_ms: float | None
    recovery_ms: float | None


def intervals_of(report: str, began: float) -> list[Interval]:
    """The intervals of an iperf3 JSON report (its `sum` per interval), anchored at
    `began` (epoch seconds); none when the report has none."""
    try:
        data = json.loads(report[report.index("{"):])
    except ValueError:
        return []
    found = []
    for interval in data.get("intervals") or []:
        total = interval.get("sum") or {}
        if "start" in total and "end" in total:
            found.append(Interval(began + float(total["start"]), began + float(total["end"]),
                                  float(total.get("bits_per_second", 0.0)) / 1e6))
    return found


def mean_mbit(intervals: Sequence[Interval]) -> float | None:
    """The mean rate over the intervals, weighted by their lengths."""
    span = sum(i.end - i.start for i in intervals)
    if span <= 0:
        return None
    return sum(i.mbit * (i.end - i.start) for i in intervals) / span


def inside(intervals: Sequence[Interval], start: float, end: float) -> list[Interval]:
    """Those whose middle lies in [start, end)."""
    return [i for i in intervals if start <= i.middle < end]


def event_figures(intervals: Sequence[Interval], event: EventWindow,
                  previous_end: float | None = None,
                  next_start: float | None = None) -> StreamEventFigures:
    """One event's figures; its neighbours' effective end and start bound its spans."""
    if event.start is None or not intervals:
        return StreamEventFigures(event.label, None, None, None, None, None)
    first = intervals[0].start
    since = max(first + WARMUP_S if first + WARMUP_S < event.start else first,
                event.start - BEFORE_S,
                previous_end + AFTER_S if previous_end is not None else -math.inf)
    before = mean_mbit(inside(intervals, since, event.start))
    end = event.end if event.end is not None else math.inf
    during = inside(intervals, event.start, end)
    horizon = min(end + AFTER_S, next_start or math.inf)
    after = inside(intervals, end, horizon) if event.end is not None else []
    stalled = None
    if before:
        stalled = 1000 * sum(i.end - i.start for i in inside(intervals, event.start, horizon)
                             if i.mbit < STALL_SHARE * before)
    return StreamEventFigures(event.label, before, mean_mbit(during), mean_mbit(after),
                              stalled, recovery_ms(after, end, before))


def recovery_ms(after: Sequence[Interval], lift: float, before: float | None) -> float | None:
    """From the lift to the first interval from which every one is back (None: none)."""
    if not before or not after:
        return None
    low = [n for n, i in enumerate(after) if i.mbit < RECOVERED_SHARE * before]
    back = low[-1] + 1 if low else 0
    if back >= len(after):
        return None
    return max(0.0, (after[back].start - lift) * 1000)


def schedule_figures(intervals: Sequence[Interval],
                     events: Sequence[EventWindow]) -> list[StreamEventFigures]:
    """Every event's figures, in the order given, each bounded by its neighbours."""
    return [event_figures(intervals, n.event, n.previous_end, n.next_start)
            for n in with_neighbours(events)]
