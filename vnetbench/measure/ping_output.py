"""What ping (iputils) prints, read: its summary and its replies. Apart from running
ping (measure/ping.py) so that reading kept output (the report's latency CDFs)
needs no engine."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SUMMARY = re.compile(r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_RTT = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
_REPLY = re.compile(r"icmp_seq=(\d+) .*time=([\d.]+) ms")


@dataclass(frozen=True)
class PingResult:
    transmitted: int
    received: int
    rtt_min_ms: float | None
    rtt_mean_ms: float | None
    rtt_max_ms: float | None
    rtt_mdev_ms: float | None
    rtts_ms: tuple[float, ...]

    @property
    def lost(self) -> int:
        return self.transmitted - self.received

    @property
    def loss_percent(self) -> float:
        return 100.0 * self.lost / self.transmitted if self.transmitted else 100.0


class PingParseError(Exception):
    pass


def parse_ping(text: str) -> PingResult:
    summary = _SUMMARY.search(text)
    if not summary:
        raise PingParseError(f"no ping summary in its output: {text.strip()[-200:]}")
    rtt = _RTT.search(text)
    values = [float(v) for v in rtt.groups()] if rtt else [None] * 4
    return PingResult(
        transmitted=int(summary.group(1)),
        received=int(summary.group(2)),
        rtt_min_ms=values[0],
        rtt_mean_ms=values[1],
        rtt_max_ms=values[2],
        rtt_mdev_ms=values[3],
        rtts_ms=tuple(float(m.group(2)) for m in _REPLY.finditer(text)),
    )
