"""A contest room's requests: each machine's wrk record (`vnetbench-room client` in
the tools image), and the room's figures pooled from them.

Latency percentiles are over every request of every machine together (wrk keeps
each latency to the microsecond, so pooling is exact), not an average of the
machines' own percentiles. Fairness is Jain's index over the machines' goodputs:
1 when every machine got the same, 1/N when one got everything.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MARK = "vnetbench-room "
ERROR_KINDS = ("connect", "read", "write", "status", "timeout")
# the points of the latency CDF each pass records (metrics room_latency_q{point}_ms)
CDF_POINTS = (1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9)


class RoomRecordError(ValueError):
    """A machine's output held no record of its load."""


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
    errors = {kind: int(data.get("errors", {}).get(kind, 0)) for kind in ERROR_KINDS}
    return MachineLoad(
        requests=int(data.get("requests", 0)), bytes=int(data.get("bytes", 0)),
        duration_s=int(data.get("duration_us", 0)) / 1e6, errors=errors,
        latencies_us=tuple((int(v), int(c)) for v, c in data.get("latency_us", [])),
        planned=float(data["planned"]), began=float(data["began"]),
        ended=float(data["ended"]), error=data.get("error"), stalled=data.get("stalled"))


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
    goodputs_mbit: tuple[float, ...]
    seconds: float  # the load's span: first start to last end
    late_s: float  # the latest machine's delay after the room's instant
    without_record: dict[str, str] = field(default_factory=dict)  # machine -> why
    stalled: dict[str, str] = field(default_factory=dict)  # machine -> why (no counts)

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
                   {name: load.stalled for name, load in loads.items() if load.stalled})

    def percentile_ms(self, q: float) -> float | None:
        value = quantile_us(self.latencies_us, q)
        return value / 1000 if value is not None else None

    @property
    def answered(self) -> int:
        return sum(count for _, count in self.latencies_us)

    @property
    def goodput_mbit(self) -> float:
        return sum(self.goodputs_mbit)

    @property
    def requests_per_s(self) -> float | None:
        return self.answered / self.seconds if self.seconds > 0 else None

    @property
    def fairness(self) -> float | None:
        return jain_index(list(self.goodputs_mbit))


def machines_named(names: Iterable[str]) -> list[str]:
    """Machines in their room order (agent2 before agent10)."""
    return sorted(names, key=lambda name: (len(name), name))
