"""A contest room's requests: each machine's record (`vnetbench-room client`, wrk's
closed loop, or `vnetbench-room open`, the open loop's per-request columns, in the
tools image), and the room's figures pooled from them.

Latency percentiles are over every request of every machine together (wrk keeps
each latency to the microsecond, and the open loop's is its reply's end less its
scheduled instant, in microseconds: pooling is exact), not an average of the
machines' own percentiles. The room's goodput is every byte received over the
load's span (first start to last end), not the machines' rates summed: under a
workload machines load the room for spans of their own (a burst's copies end one
by one), and their rates' sum exceeds what the site link carried. Fairness is Jain's
index, 1 when every machine got the same, 1/N when one got everything: of wrk's
closed loop, over the machines' goodputs (each asks all it can); of the open loop,
over each machine's share of its schedule answered (each asks what its schedule
says, which a workload's random arrivals make unequal by design).

An open-loop generator is behind when its own lag (taking a request up after its
instant: its event loop or its CPU, not a connection's wait) has a p99 above a
tenth of its mean gap between requests (and above 2 ms, the timers' resolution):
latency counts from the schedule, so that lag is in every latency, and beyond it
the arrivals no longer keep the spacing they were planned with.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MARK = "vnetbench-room "
ERROR_KINDS = ("connect", "read", "write", "status", "timeout")
# the points of the latency CDF each pass records (metrics room_latency_q{point}_ms)
CDF_POINTS = (1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9)
BEHIND_SHARE_OF_GAP = 0.1  # a generator's lag p90 above this share of its gap: behind
# p90, not p99 or the max: a generator that cannot keep up is late on most requests; one
# late wake-up (measured: the last request of 1 machine in 20, 18 ms late, as the testbed
# read every container's CPU at the load's end) keeps the rate, and its lateness is in
# that request's latency anyway (counted from the schedule). Lag p99 and max are reported.
BEHIND_QUANTILE = 90
# ... and above this: epoll's and libuv's (uvloop's) timers wake at millisecond
# resolution, so a lag of a tick or two is the clock's, not a generator short of CPU
BEHIND_FLOOR_MS = 2.0


class RoomRecordError(ValueError):
    """A machine's output held no record of its load."""


@dataclass(frozen=True)
class Generator:
    """What one machine's open-loop generator did beyond wrk's counts."""

    planned: int
    sent: int
    waited: int  # requests that waited for a connection (all the machine's were busy)
    lag_us: tuple[tuple[int, int], ...]  # its own lateness per request: [us, count]
    mean_gap_s: float | None  # of its schedule
    cpu_s: float
    max_rss_kib: int
    # requests sent again on a new connection: the server had closed the kept one
    # before any byte of the reply (its keep-alive timeout), as a browser would
    reopened: int = 0

    @property
    def behind(self) -> str | None:
        """Why this generator fell behind its schedule, or None."""
        lag_ms = (quantile_us(self.lag_us, BEHIND_QUANTILE) or 0) / 1000
        if not self.mean_gap_s or lag_ms <= BEHIND_FLOOR_MS:
            return None
        if lag_ms > BEHIND_SHARE_OF_GAP * self.mean_gap_s * 1000:
            return (f"its own lag p{BEHIND_QUANTILE} {lag_ms:.1f} ms, over "
                    f"{BEHIND_SHARE_OF_GAP:.0%} of its {self.mean_gap_s * 1000:.0f} ms gap")
        return None


@dataclass(frozen=True)
class MachineLoad:
    """What one machine's wrk did: counts, latencies ([microseconds, count]) and when."""

    requests: int
    bytes: int
    duration_s: float
    errors: dict[str, int]
    latencies_us: tuple[tuple[int, int], ...]
    planned: float  # the room's start instant (epoch seconds, the host's clock)
    began: float
    ended: float
    error: str | None = None  # wrk itself failed (e.g. could not connect at all)
    stalled: str | None = None  # wrk never ended and was stopped: its counts are lost
    generator: Generator | None = None  # the open loop's; None: wrk's closed loop
    # replies received, counted, not read off the latencies: wrk's histogram holds
    # entries its coordinated-omission correction added (a stall over twice the
    # achieved interval: requests the machine would have sent), no reply each
    answered: int = 0

    @property
    def failed(self) -> int:
        """Requests that got no good reply: connect, read, write, non-2xx, timed out."""
        return sum(self.errors.values())

    @property
    def goodput_mbit(self) -> float:
        return self.bytes * 8 / self.duration_s / 1e6 if self.duration_s > 0 else 0.0

    @property
    def late_s(self) -> float:
        """How long after the room's instant this machine's load began."""
        return max(0.0, self.began - self.planned)


def parse_machine(text: str) -> MachineLoad:
    """The last `vnetbench-room {json}` line of a client probe's output."""
    lines = [line[len(MARK):] for line in text.splitlines() if line.startswith(MARK + "{")]
    if not lines:
        raise RoomRecordError(f"no record in its output: {text.strip()[-200:] or 'nothing'}")
    data = json.loads(lines[-1])
    if data.get("loop") == "open":
        return parse_open(data)
    errors = {kind: int(data.get("errors", {}).get(kind, 0)) for kind in ERROR_KINDS}
    return MachineLoad(
        requests=int(data.get("requests", 0)), bytes=int(data.get("bytes", 0)),
        duration_s=int(data.get("duration_us", 0)) / 1e6, errors=errors,
        latencies_us=tuple((int(v), int(c)) for v, c in data.get("latency_us", [])),
        planned=float(data["planned"]), began=float(data["began"]),
        ended=float(data["ended"]), error=data.get("error"), stalled=data.get("stalled"),
        # wrk's `complete` counts a reply later than the timeout too (and records no
        # latency for it): answered are the others
        answered=int(data.get("requests", 0)) - errors["timeout"])


def joined(texts: Sequence[str]) -> str:
    """One machine's open-loop generators as one record line (a schedule of faults
    killed the machine and started it again: a generator ran for each span it was up,
    on disjoint parts of its schedule, all against the room's instant). Columns are
    concatenated in order; the span is the first's start to the last's end; CPU is
    summed, peak memory the highest. A generator without a record: RoomRecordError."""
    records = []
    for text in texts:
        lines = [line[len(MARK):] for line in text.splitlines() if line.startswith(MARK + "{")]
        if not lines:
            raise RoomRecordError(f"no record in its output: {text.strip()[-200:] or 'nothing'}")
        records.append(json.loads(lines[-1]))
    if len(records) == 1 or any("columns" not in r for r in records):
        failed = [r for r in records if "columns" not in r]
        return MARK + json.dumps(failed[0] if failed else records[0])
    first = records[0]
    merged = {**first, "began": min(float(r["began"]) for r in records),
              "ended": max(float(r["ended"]) for r in records),
              "requests": sum(int(r["requests"]) for r in records),
              "cpu_s": sum(float(r["cpu_s"]) for r in records),
              "max_rss_kib": max(int(r["max_rss_kib"]) for r in records),
              "reopened": sum(int(r.get("reopened", 0)) for r in records),
              "generators": len(records),
              "columns": {key: [v for r in records for v in r["columns"][key]]
                          for key in first["columns"]}}
    return MARK + json.dumps(merged)


def parse_open(data: Mapping[str, Any]) -> MachineLoad:
    """An open loop's record: its per-request columns counted and pooled."""
    planned, began, ended = (float(data[key]) for key in ("planned", "began", "ended"))
    if "columns" not in data:  # the generator itself failed
        return MachineLoad(0, 0, 0.0, dict.fromkeys(ERROR_KINDS, 0), (), planned, began,
                           ended, error=str(data.get("error") or "the generator gave no columns"))
    columns = data["columns"]
    scheduled, done, sent = columns["scheduled_us"], columns["done_us"], columns["sent_us"]
    kinds = Counter(kind for kind in columns["error"] if kind)
    latencies = Counter(int(end) - int(due) for due, end in zip(scheduled, done, strict=True)
                        if end is not None)
    lags = Counter(int(lag) for lag in columns["lag_us"] if lag is not None)
    gap = ((scheduled[-1] - scheduled[0]) / (len(scheduled) - 1) / 1e6
           if len(scheduled) > 1 else None)
    return MachineLoad(
        requests=sum(1 for at in sent if at is not None), bytes=sum(columns["bytes"]),
        duration_s=ended - began,
        errors={kind: kinds[kind] for kind in ERROR_KINDS},
        latencies_us=tuple(sorted(latencies.items())), planned=planned, began=began,
        ended=ended,
        error=data.get("error"), answered=sum(latencies.values()),
        generator=Generator(
            planned=len(scheduled), sent=sum(1 for at in sent if at is not None),
            waited=sum(1 for waited in columns["waited"] if waited),
            lag_us=tuple(sorted(lags.items())), mean_gap_s=gap,
            cpu_s=float(data["cpu_s"]), max_rss_kib=int(data["max_rss_kib"]),
            reopened=int(data.get("reopened", 0))))


def quantile_us(latencies: Sequence[tuple[int, int]], q: float) -> float | None:
    """The q-th percentile of a weighted list of latencies (nearest rank), or None."""
    ordered = sorted(latencies)
    total = sum(count for _, count in ordered)
    if total == 0:
        return None
    rank = max(1, math.ceil(q / 100 * total))
    seen = 0
    for value, count in ordered:
        seen += count
        if seen >= rank:
            return float(value)
    return float(ordered[-1][0])


def jain_index(values: Sequence[float]) -> float | None:
    """(sum x)^2 / (n * sum x^2): 1 when all equal, 1/n when one has it all."""
    squares = sum(v * v for v in values)
    return sum(values) ** 2 / (len(values) * squares) if values and squares > 0 else None


@dataclass(frozen=True)
class RoomFigures:
    """The room pooled: every machine's requests together."""

    machines: int  # machines that ran (their probe gave a record)
    requests: int
    failed: int
    errors: dict[str, int]
    latencies_us: tuple[tuple[int, int], ...]
    goodputs_mbit: tuple[float, ...]  # each machine's bytes over its own span
    seconds: float  # the load's span: first start to last end
    late_s: float  # the latest machine's delay after the room's instant
    without_record: dict[str, str] = field(default_factory=dict)  # machine -> why
    stalled: dict[str, str] = field(default_factory=dict)  # machine -> why (no counts)
    generators: dict[str, Generator] = field(default_factory=dict)  # the open loop's
    answered: int = 0  # replies received (MachineLoad.answered), any status
    bytes: int = 0  # received, every machine together
    # the open loop's machines: each one's replies over the requests its schedule planned
    served_shares: tuple[float, ...] = ()

    @classmethod
    def of(cls, loads: dict[str, MachineLoad], without_record: dict[str, str]) -> RoomFigures:
        ran = list(loads.values())
        pooled: dict[int, int] = {}
        for load in ran:
            for value, count in load.latencies_us:
                pooled[value] = pooled.get(value, 0) + count
        span = (max(load.ended for load in ran) - min(load.began for load in ran)
                if ran else 0.0)
        return cls(len(ran), sum(load.requests for load in ran),
                   sum(load.failed for load in ran),
                   {kind: sum(load.errors[kind] for load in ran) for kind in ERROR_KINDS},
                   tuple(sorted(pooled.items())), tuple(load.goodput_mbit for load in ran),
                   span, max((load.late_s for load in ran), default=0.0),
                   dict(without_record),
                   {name: load.stalled for name, load in loads.items() if load.stalled},
                   {name: load.generator for name, load in loads.items() if load.generator},
                   sum(load.answered for load in ran), sum(load.bytes for load in ran),
                   tuple(load.answered / load.generator.planned for load in ran
                         if load.generator is not None and load.generator.planned > 0))

    def percentile_ms(self, q: float) -> float | None:
        value = quantile_us(self.latencies_us, q)
        return value / 1000 if value is not None else None

    @property
    def goodput_mbit(self) -> float:
        return self.bytes * 8 / self.seconds / 1e6 if self.seconds > 0 else 0.0

    @property
    def requests_per_s(self) -> float | None:
        return self.answered / self.seconds if self.seconds > 0 else None

    @property
    def fairness(self) -> float | None:
        if self.generators:
            return jain_index(list(self.served_shares))
        return jain_index(list(self.goodputs_mbit))

    @property
    def open_loop(self) -> OpenLoopFigures | None:
        return OpenLoopFigures.of(self.generators) if self.generators else None


@dataclass(frozen=True)
class OpenLoopFigures:
    """The room's open-loop generators together: what they planned and sent, how far
    they fell behind, what they cost."""

    planned: int
    sent: int
    waited: int
    lag_us: tuple[tuple[int, int], ...]
    cpu_s: float
    max_rss_kib: int
    behind: dict[str, str]  # machine -> why it fell behind
    reopened: int = 0

    @classmethod
    def of(cls, generators: Mapping[str, Generator]) -> OpenLoopFigures:
        lags: Counter[int] = Counter()
        for generator in generators.values():
            lags.update(dict(generator.lag_us))
        behind = {name: why for name, generator in generators.items()
                  if (why := generator.behind)}
        return cls(sum(g.planned for g in generators.values()),
                   sum(g.sent for g in generators.values()),
                   sum(g.waited for g in generators.values()), tuple(sorted(lags.items())),
                   sum(g.cpu_s for g in generators.values()),
                   max((g.max_rss_kib for g in generators.values()), default=0), behind,
                   sum(g.reopened for g in generators.values()))

    def lag_ms(self, q: float) -> float | None:
        value = quantile_us(self.lag_us, q)
        return value / 1000 if value is not None else None

    @property
    def sent_percent(self) -> float | None:
        return 100 * self.sent / self.planned if self.planned else None

    @property
    def cpu_s_per_1000(self) -> float | None:
        return 1000 * self.cpu_s / self.planned if self.planned else None

    @property
    def max_rss_mib(self) -> float:
        return self.max_rss_kib / 1024


def machines_named(names: Iterable[str]) -> list[str]:
    """Machines in their room order (agent2 before agent10)."""
    return sorted(names, key=lambda name: (len(name), name))
