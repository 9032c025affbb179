"""ping (iputils), run in an agent's namespace; its output is read by measure/ping_output.py."""

from __future__ import annotations

from pathlib import Path

from vnetbench.measure.ping_output import PingParseError, PingResult, parse_ping
from vnetbench.measure.probe import RunOnEngine, ToolRun, parsed, run_probe, save_raw

__all__ = ["PingParseError", "PingResult", "PingRun", "parse_ping", "ping_argv", "run_ping",
           "run_stamped_ping", "stamped_ping_argv"]

STAMPED_GRACE_SECONDS = 10  # beyond a stamped ping's length before its probe is killed


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


def stamped_ping_argv(seconds: float, interval_s: float, target: str) -> list[str]:
    """Pings every interval_s for `seconds`, each reply stamped on arrival (-D) and
    each probe unanswered by the next one said (-O). Ended by SIGINT from timeout(1),
    on which ping prints what it has; not by ping's -w, which ends at the first ICMP
    error (failover saw it mid-outage), nor by a count, which a busy host sends
    slower than asked."""
    return ["timeout", "-s", "INT", f"{seconds:g}", "ping", "-D", "-O", "-n", "-i",
            f"{interval_s:.3f}".rstrip("0").rstrip("."), "-W", "1", target]


def run_stamped_ping(run: RunOnEngine, container: str, target: str, seconds: float,
                     interval_s: float, raw_path: Path) -> str:
    """Stamped pings of target from container's namespace; their output kept at
    raw_path (read it with measure/ping_window.py)."""
    argv = stamped_ping_argv(seconds, interval_s, target)
    output = run_probe(run, container, argv, seconds + STAMPED_GRACE_SECONDS).stdout
    save_raw(raw_path, output)
    return output
