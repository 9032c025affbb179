"""Stamped pings (`ping -D -O`) read probe by probe, and the probes sent within a
window summarised: RTT percentiles and loss. Pure, so that recorded output reads
the same way.

Each probe is placed by when it was *sent*: an answered one at its reply's stamp
less its round trip, an unanswered one at its "no answer yet" line less one
interval (ping says so when it sends the next). A probe sent while a load ran
belongs to it however late its answer came.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from vnetbench.measure.outage import NO_ANSWER, REPLY
from vnetbench.measure.ping_output import PingResult

_ICMP_ERROR = re.compile(r"^\[(?P<t>\d+\.\d+)\] From \S+ icmp_seq=(?P<seq>\d+) ")


@dataclass(frozen=True)
class Probe:
    seq: int
    sent_at: float  # epoch seconds (ping -D's clock)
    rtt_ms: float | None  # None: never answered


def parse_probes(text: str, interval_s: float) -> list[Probe]:
    """Every probe the output mentions, in sequence order (duplicate replies dropped)."""
    answered: dict[int, Probe] = {}
    unanswered: dict[int, float] = {}
    for line in (raw.strip() for raw in text.splitlines()):
        if (reply := REPLY.match(line)) and not reply["dup"]:
            seq, rtt = int(reply["seq"]), float(reply["rtt"])
            answered.setdefault(seq, Probe(seq, float(reply["t"]) - rtt / 1000, rtt))
        elif found := NO_ANSWER.match(line) or _ICMP_ERROR.match(line):
            unanswered.setdefault(int(found["seq"]), float(found["t"]) - interval_s)
    lost = [Probe(seq, at, None) for seq, at in unanswered.items() if seq not in answered]
    return sorted([*answered.values(), *lost], key=lambda p: p.seq)


def sent_between(probes: list[Probe], start: float, end: float) -> list[Probe]:
    return [p for p in probes if start <= p.sent_at <= end]


def percentile(values: list[float], share: float) -> float:
    """Nearest rank: the smallest value at least `share` of them do not exceed (always
    a measured value, never one interpolated between two)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass(frozen=True)
class RttSummary:
    """The probes of one phase: how many went, how many came back, and their RTTs."""

    sent: int
    rtts_ms: tuple[float, ...]

    @property
    def answered(self) -> int:
        return len(self.rtts_ms)

    @property
    def loss_percent(self) -> float:
        return 100.0 * (self.sent - self.answered) / self.sent if self.sent else 100.0

    def at(self, share: float) -> float | None:
        return percentile(list(self.rtts_ms), share) if self.rtts_ms else None

    @property
    def max_ms(self) -> float | None:
        return max(self.rtts_ms) if self.rtts_ms else None

    @property
    def min_ms(self) -> float | None:
        return min(self.rtts_ms) if self.rtts_ms else None

    def as_ping_result(self) -> PingResult:
        """As ping's own summary reads (what the path's status is decided from)."""
        rtts = self.rtts_ms
        mean = sum(rtts) / len(rtts) if rtts else None
        mdev = (math.sqrt(sum((r - mean) ** 2 for r in rtts) / len(rtts))
                if mean is not None else None)
        return PingResult(self.sent, self.answered, self.min_ms, mean, self.max_ms, mdev, rtts)


def summarise(probes: list[Probe]) -> RttSummary:
    return RttSummary(len(probes), tuple(p.rtt_ms for p in probes if p.rtt_ms is not None))
