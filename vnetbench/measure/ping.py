"""ping (iputils), run in an agent's namespace; its output is read by measure/ping_output.py."""

from __future__ import annotations

from pathlib import Path

from vnetbench.measure.ping_output import PingParseError, PingResult, parse_ping
from vnetbench.measure.probe import RunOnEngine, ToolRun, parsed, run_probe, save_raw

__all__ = ["PingParseError", "PingResult", "PingRun", "parse_ping", "ping_argv", "run_ping"]


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
