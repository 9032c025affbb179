"""ping (iputils): runs in an agent's namespace, and its summary and replies parsed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vnetbench.measure.probe import RunOnEngine, ToolRun, parsed, run_probe, save_raw

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


def ping_argv(count: int, interval_s: float, target: str, size: int | None = None) -> list[str]:
    """ping for `count` probes `interval_s` apart, each waiting at most 1 s at the end."""
    argv = ["ping", "-c", str(count), "-i", f"{interval_s:.3f}".rstrip("0").rstrip("."),
            "-W", "1"]
    return [*argv, *(["-s", str(size)] if size is not None else []), target]


PingRun = ToolRun[PingResult]


def run_ping(run: RunOnEngine, container: str, target: str, count: int, interval_s: float,
             size: int | None, raw_path: Path, timeout_seconds: float) -> PingRun:
    """`count` pings of target from container's namespace; the raw output kept at raw_path."""
    argv = ping_argv(count, interval_s, target, size)
    output = run_probe(run, container, argv, timeout_seconds).stdout
    save_raw(raw_path, output)
    return parsed(output, parse_ping, PingParseError)
