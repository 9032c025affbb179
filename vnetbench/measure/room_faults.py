"""What each fault of a schedule did to a room under its open loop: figures per event
from the generator's per-request records and the instants the faults were stamped
in effect and lifted (pure).

A request belongs to the instant it was scheduled (the open loop's clock: the room's
instant plus its scheduled offset, on the host's clock, the clock fault stamps use):
its latency counts from there, so a request asked for during a fault is the
fault's, whenever its reply came. Per event, over the requests scheduled while it
was in effect (from its effective start to its effective end; a kill for good: to
the load's end): those failed (connect, read, write, status) and timed out, the
p50 and p99 of those answered; the same percentiles over the AFTER_S after the
lift (cut short where the next event begins: its requests are its own); the time
until the room's p99 is back within its band from before the fault; the machines
that never got an answer again. And a timeline per 100 ms (BIN_S) of
requests answered and failed and the answered ones' p50 and p99, by scheduled
instant, with each event's effective start and end on its axis.

The rolling p99: over windows of WINDOW_S (1 s) on a 100 ms grid, counting a
request that failed or timed out as infinitely late (it never got a good answer:
a window where more than 1 % failed has an infinite p99, however fast the rest).
One second: at the room's default rate (5 requests/s a machine) a room of 50
machines asks 250 requests a second, so a window's p99 is its third-latest
request, not its latest alone; a shorter window would make it the maximum, one
late request; a longer one would blur the instant the room came back by its length.
(With fewer than 100 requests in a window, its p99 is its maximum.)

The band: the rolling p99 of every window in the BEFORE_S before the fault (not
reaching back into the load's first WARMUP_S, while connections open and tunnels
make their first handshakes, unless that leaves no whole window; nor into the
previous event, up to its end and AFTER_S more), over the requests whose reply
came before the fault began and those that failed when due over the room's timeout
before it (one still in flight when it struck is the fault's, not the room's steady
state); none when one of those failed (no steady state to come back to); its upper
edge is the highest of them, and at least
their median plus BAND_FLOOR_MS (the generator's timers wake at millisecond
resolution: measure/room.py BEHIND_FLOOR_MS), so a room as steady as its clock
is not judged on the clock's ticks. Faster than the band is back too.
Recovered: the start of the first window, from the lift on, whose p99 is within
the band and after which every window up to the horizon (AFTER_S after the lift,
or the next event's start, or the last request) is too; `recovery_ms` is that
instant less the lift (0: back at once). None: no band (no full window before the
fault), or not back within the horizon, or never lifted.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

from vnetbench.measure.room import BEHIND_FLOOR_MS, MARK, RoomRecordError, machines_named

BIN_S = 0.1  # the timeline's bins
WINDOW_S = 1.0  # the rolling p99's window
GRID_S = 0.1  # the rolling windows' starts
BEFORE_S = 10.0  # the band is read over at most this long before the fault
# the load's start left out of the band: measured, WireGuard's room of 50 had its
# rolling p99 at 135-281 ms in its first second (connections opening, handshakes),
# 3-27 ms from 1.2 s on
WARMUP_S = 2.0
AFTER_S = 10.0  # "after the fault": this long after the lift
BAND_FLOOR_MS = BEHIND_FLOOR_MS
TIMEOUT = "timeout"


@dataclass(frozen=True)
class Request:
    """One request of one machine's open loop: its scheduled instant on the host's
    clock (epoch seconds) and its latency, exact from the generator's microseconds
    (an epoch float holds a microsecond only to a fraction of it)."""

    machine: str
    scheduled: float
    latency_ms: float | None  # from its scheduled instant to its reply's end (None: none)
    error: str | None = None  # connect, read, write, status, timeout (None: answered)
    sent: bool = True  # False: it timed out waiting for a connection, never written
    # the connection it opened (None: it used one already open, or opened none): how
    # long opening it took, and over TLS its handshake, "full" or "resumed"
    connect_ms: float | None = None
    handshake: str | None = None

    @property
    def answered(self) -> bool:
        return self.latency_ms is not None and self.error is None

    @property
    def late_ms(self) -> float:
        """Its latency, or infinitely late (failed or timed out): the rolling p99's."""
        return self.latency_ms if self.answered and self.latency_ms is not None else math.inf


@dataclass(frozen=True)
class EventWindow:
    """When one event of the schedule was in effect (epoch seconds, as stamped:
    faults/window.py FaultWindow.start and .end)."""

    label: str
    start: float | None  # None: it never took effect
    end: float | None  # None: never lifted (a kill for good)


@dataclass(frozen=True)
class EventFigures:
    label: str
    requests: int  # scheduled while it was in effect
    failed: int  # of those: connect, read, write or status errors
    timed_out: int
    p50_ms: float | None  # of those answered
    p99_ms: float | None
    after_p50_ms: float | None  # answered, scheduled in the AFTER_S after the lift
    after_p99_ms: float | None
    band_ms: float | None  # the band's upper edge (the pre-fault rolling p99)
    recovery_ms: float | None
    never_answered: tuple[str, ...]  # machines with no answer after it, room order


@dataclass(frozen=True)
class Bin:
    """One 100 ms of the timeline: requests scheduled in [start_s, end_s) after the
    room's instant."""

    start_s: float
    end_s: float
    answered: int
    failed: int  # every kind, timeouts included
    p50_ms: float | None
    p99_ms: float | None


@dataclass(frozen=True)
class Mark:
    """An event's effective start and end on the timeline's axis (None: not stamped)."""

    label: str
    start_s: float | None
    end_s: float | None


def requests_of(machine: str, text: str) -> tuple[Request, ...]:
    """The per-request columns of a machine's open-loop record (`vnetbench-room open`'s
    last line) on the host's clock: offsets are microseconds after its START."""
    lines = [line[len(MARK):] for line in text.splitlines() if line.startswith(MARK + "{")]
    if not lines:
        raise RoomRecordError(f"no record in its output: {text.strip()[-200:] or 'nothing'}")
    data = json.loads(lines[-1])
    if "columns" not in data:
        raise RoomRecordError(f"no per-request columns (the closed loop's, or the generator "
                              f"failed: {data.get('error') or 'no error said'})")
    planned, columns = float(data["planned"]), data["columns"]
    unsaid = [None] * len(columns["scheduled_us"])  # a generator before HTTPS: none
    return tuple(
        Request(machine, planned + due / 1e6, None if done is None else (done - due) / 1000,
                error, sent is not None, None if connect is None else connect / 1000,
                handshake)
        for due, done, error, sent, connect, handshake in zip(
            columns["scheduled_us"], columns["done_us"], columns["error"],
            columns["sent_us"], columns.get("connect_us", unsaid),
            columns.get("handshake", unsaid), strict=True))


def unsent_during(requests: Iterable[Request], events: Sequence[EventWindow]) -> int:
    """Requests never sent that were due from the first event's effective start on:
    they waited for a connection the faults held, or a path that did not come back,
    until they timed out (the system under test, not a generator behind: that is its
    lag, measured apart)."""
    starts = [e.start for e in events if e.start is not None]
    if not starts:
        return 0
    return sum(1 for r in requests if not r.sent and r.scheduled >= min(starts))


def quantile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile, nearest rank (as measure/room.py's quantile_us)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def latencies(requests: Iterable[Request]) -> list[float]:
    return [r.latency_ms for r in requests if r.answered and r.latency_ms is not None]


def by_schedule(requests: Iterable[Request]) -> list[Request]:
    return sorted(requests, key=scheduled_at)


def scheduled_at(request: Request) -> float:
    return request.scheduled


def scheduled_in(requests: Sequence[Request], start: float, end: float) -> Sequence[Request]:
    """Those scheduled in [start, end), of requests sorted by_schedule."""
    return requests[bisect_left(requests, start, key=scheduled_at):
                    bisect_left(requests, end, key=scheduled_at)]


def rolling_p99(requests: Sequence[Request], start: float) -> float | None:
    """The p99 of the window [start, start + WINDOW_S) of requests sorted by_schedule,
    failures infinitely late (None: no request in it)."""
    late = [r.late_ms for r in scheduled_in(requests, start, start + WINDOW_S)]
    return quantile(late, 99)


def window_starts(first: float, last: float) -> list[float]:
    """Window starts on the grid from `first` while the window ends by `last`."""
    count = math.floor((last - first - WINDOW_S) / GRID_S + 1e-9) + 1
    return [first + k * GRID_S for k in range(max(0, count))]


def before_the_fault(request: Request, start: float, timeout_s: float) -> bool:
    """Whether a request is the room's steady state before a fault starting at `start`:
    answered before it, or failed when due over `timeout_s` before it."""
    if request.answered:
        return request.scheduled + request.late_ms / 1000 <= start
    return request.scheduled < start - timeout_s


def band_ms(requests: Sequence[Request], since: float, until: float,
            timeout_s: float = 0.0) -> float | None:
    """The upper edge of the rolling p99's band over [since, until) of requests sorted
    by_schedule (see the module's docstring), None: no window with requests fits, or
    one failed (no steady band to come back to). Left out as the fault's: an answered
    request whose reply came after `until`, a failed one due within `timeout_s` (the
    room's timeout) before it (when it failed is not recorded)."""
    requests = [r for r in requests if before_the_fault(r, until, timeout_s)]
    p99s = [p for s in window_starts(since, until)
            if (p := rolling_p99(requests, s)) is not None]
    if not p99s or math.inf in p99s:
        return None
    return max(max(p99s), median(p99s) + BAND_FLOOR_MS)


def recovery_ms(requests: Sequence[Request], lift: float, horizon: float,
                band: float) -> float | None:
    """From the lift to the start of the first window after which every window up to
    the horizon has its p99 within the band (None: the last one is not)."""
    starts = window_starts(lift, horizon)
    judged = [(s, p) for s in starts if (p := rolling_p99(requests, s)) is not None]
    if not judged:
        return None
    out = [index for index, (_, p) in enumerate(judged) if p > band]
    if not out:
        return 0.0
    if out[-1] == len(judged) - 1:
        return None
    return round((judged[out[-1] + 1][0] - lift) * 1000, 3)


def never_answered(requests: Sequence[Request], since: float) -> tuple[str, ...]:
    """Machines that asked after `since` and got no answer to any request from then."""
    asked = {r.machine for r in requests if r.scheduled >= since}
    answered = {r.machine for r in requests if r.scheduled >= since and r.answered}
    return tuple(machines_named(asked - answered))


def event_figures(requests: Sequence[Request], event: EventWindow,
                  previous_end: float | None = None,
                  next_start: float | None = None, timeout_s: float = 0.0) -> EventFigures:
    """One event's figures; `previous_end` and `next_start` (the neighbouring events'
    effective end and start) bound its band and its horizon."""
    if event.start is None or not requests:
        return EventFigures(event.label, 0, 0, 0, None, None, None, None, None, None, ())
    requests = by_schedule(requests)
    during = scheduled_in(requests, event.start,
                          event.end if event.end is not None else math.inf)
    errors = [r.error for r in during if not r.answered]
    band = band_ms(requests, band_since(requests, event.start, previous_end), event.start,
                   timeout_s)
    after: Sequence[Request] = ()
    recovery = None
    if event.end is not None:
        horizon = min(event.end + AFTER_S, next_start or math.inf,
                      requests[-1].scheduled + 1e-6)
        after = scheduled_in(requests, event.end, min(event.end + AFTER_S,
                                                      next_start or math.inf))
        recovery = None if band is None else recovery_ms(requests, event.end, horizon, band)
    return EventFigures(
        event.label, len(during), sum(1 for e in errors if e != TIMEOUT),
        sum(1 for e in errors if e == TIMEOUT),
        quantile(latencies(during), 50), quantile(latencies(during), 99),
        quantile(latencies(after), 50), quantile(latencies(after), 99), band, recovery,
        never_answered(requests, event.end if event.end is not None else event.start))


def band_since(requests: Sequence[Request], start: float,
               previous_end: float | None) -> float:
    """Where the band's span begins: BEFORE_S before the fault, not in the load's
    first WARMUP_S (unless that leaves no whole window before the fault), nor before
    the previous event's end plus AFTER_S (its aftermath)."""
    first = requests[0].scheduled
    if first + WARMUP_S + WINDOW_S <= start:
        first += WARMUP_S
    return max(first, start - BEFORE_S,
               previous_end + AFTER_S if previous_end is not None else -math.inf)


@dataclass(frozen=True)
class Neighbours:
    """An event and what bounds its spans: the previous event's effective end (inf: it
    was never lifted) and the next one's effective start, by effective start."""

    event: EventWindow
    previous_end: float | None
    next_start: float | None


def with_neighbours(events: Sequence[EventWindow]) -> list[Neighbours]:
    """Every event, in the order given, with its neighbours in time."""
    timed = sorted((e for e in events if e.start is not None), key=lambda e: e.start or 0)
    found = []
    for event in events:
        index = timed.index(event) if event in timed else -1
        previous = timed[index - 1] if index > 0 else None
        following = timed[index + 1] if 0 <= index < len(timed) - 1 else None
        previous_end = None if previous is None else (
            previous.end if previous.end is not None else math.inf)
        found.append(Neighbours(event, previous_end, following.start if following else None))
    return found


def schedule_figures(requests: Sequence[Request], events: Sequence[EventWindow],
                     timeout_s: float = 0.0) -> list[EventFigures]:
    """Every event's figures, in the order given; each bounded by its neighbours in
    time (by effective start); `timeout_s` the room's request timeout."""
    requests = by_schedule(requests)
    return [event_figures(requests, n.event, n.previous_end, n.next_start, timeout_s)
            for n in with_neighbours(events)]


def timeline(requests: Sequence[Request], origin: float) -> list[Bin]:
    """Per BIN_S from the room's instant to the last request: answered, failed, p50,
    p99 of the requests scheduled in it."""
    if not requests:
        return []
    requests = by_schedule(requests)
    last = requests[-1].scheduled
    bins = []
    for index in range(math.floor((last - origin) / BIN_S) + 1):
        start = origin + index * BIN_S
        inside = scheduled_in(requests, start, start + BIN_S)
        answered = latencies(inside)
        bins.append(Bin(round(index * BIN_S, 3), round((index + 1) * BIN_S, 3),
                        len(answered), len(inside) - len(answered),
                        quantile(answered, 50), quantile(answered, 99)))
    return bins


def marks(events: Sequence[EventWindow], origin: float) -> list[Mark]:
    """Each event's effective start and end, seconds after the room's instant."""
    return [Mark(e.label, None if e.start is None else round(e.start - origin, 3),
                 None if e.end is None else round(e.end - origin, 3)) for e in events]
