"""A fixed number of bytes, timed to the last byte the receiver got (libp2p
perf's method: "uploaded 100.00 MiB in 2.1779 s").

Choice: socat carries the bytes and pv counts them on the receiving side
(`pv -n -t -b`: elapsed seconds and bytes, once a second and at the end), not
iperf3 -n. iperf3 ends a -n test when the *sender* has written the last byte,
and only at its next reporting tick: measured here, 10 MiB over loopback took
1007 ms of wall time with -i 1 and 106 ms with -i 0.1, and under 1 % loss
WireGuard's receiver had 49 of 50 MiB when iperf3 called the upload done. pv's
clock starts when the connection is made (socat starts it then) and its last
line is written when the sender's end of stream arrives.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from vnetbench.measure.probe import (
    ProbeOutput,
    RunOnEngine,
    ToolRun,
    parsed,
    run_probe,
    save_raw,
)

PORT = 5301
REPORT_S = 1  # pv's figure every second, as libp2p perf prints them
CONNECT_RETRIES = "retry=100,interval=0.1"  # the listener may start a moment later
COUNTER = f"pv -f -n -t -b -i {REPORT_S} -B 1m >/dev/null"
BLOCK = ["-b", "262144"]  # socat's 8 KiB default costs a syscall per 8 KiB
_LINE = re.compile(r"^(\d+(?:\.\d+)?) (\d+)$")


class TransferError(Exception):
    """Nothing was received: the connection was never made, or the path is dead."""


@dataclass(frozen=True)
class Interval:
    end_s: float  # seconds since the connection was made
    seconds: float
    bytes: int

    @property
    def mbit(self) -> float:
        return self.bytes * 8 / self.seconds / 1e6 if self.seconds else 0.0


@dataclass(frozen=True)
class Transfer:
    asked_bytes: int
    done_bytes: int  # what the receiver counted
    seconds: float  # from the connection to the last byte received (or the stop)
    intervals: tuple[Interval, ...]

    @property
    def complete(self) -> bool:
        return self.done_bytes >= self.asked_bytes

    @property
    def mbit(self) -> float:
        return self.done_bytes * 8 / self.seconds / 1e6 if self.seconds else 0.0


def parse_counts(text: str, asked_bytes: int) -> Transfer:
    """pv's numeric lines ("elapsed bytes", cumulative) as a transfer; other lines
    (socat's retries) are ignored. TransferError when nothing was counted."""
    points = [(float(m.group(1)), int(m.group(2)))
              for line in text.splitlines() if (m := _LINE.match(line.strip()))]
    if not points or points[-1][1] == 0:
        raise TransferError("the receiver counted no bytes"
                            + (f" ({text.strip().splitlines()[-1][:160]})" if text.strip()
                               else ""))
    intervals, before = [], (0.0, 0)
    for at, total in points:
        if at > before[0]:
            intervals.append(Interval(at, at - before[0], total - before[1]))
            before = (at, total)
    return Transfer(asked_bytes, points[-1][1], points[-1][0], tuple(intervals))


def sender_argv(target: str | None, count: int) -> list[str]:
    """Send `count` zero bytes: to target (upload), or to whoever connects (download)."""
    if target is None:  # -U: from the right address (the bytes) to the left (the peer)
        return ["socat", "-U", *BLOCK, f"TCP-LISTEN:{PORT},reuseaddr",
                f"SYSTEM:head -c {count} /dev/zero"]
    return ["sh", "-c", f"head -c {count} /dev/zero | socat -u {' '.join(BLOCK)} - "
                        f"TCP:{target}:{PORT},{CONNECT_RETRIES}"]


def receiver_argv(target: str | None) -> list[str]:
    """Count what arrives: from target (download), or from whoever connects (upload)."""
    source = (f"TCP:{target}:{PORT},{CONNECT_RETRIES}" if target
              else f"TCP-LISTEN:{PORT},reuseaddr")
    return ["sh", "-c", f"socat -u {' '.join(BLOCK)} {source} SYSTEM:'{COUNTER}' 2>&1"]


def run_transfer(run: RunOnEngine, client: str, server: str, target: str, count: int,
                 download: bool, timeout_seconds: float, raw_path: Path) -> ToolRun[Transfer]:
    """`count` bytes from the client's namespace to the server's at target (download:
    back). The listening side runs in a thread, the connecting side here; the sender
    is stopped at the bound, the receiver a little later (it then counts what came)."""
    listener, connector = (server, client)
    if download:
        listen_argv, connect_argv = sender_argv(None, count), receiver_argv(target)
    else:
        listen_argv, connect_argv = receiver_argv(None), sender_argv(target, count)
    sender_bound, receiver_bound = timeout_seconds, timeout_seconds + 10
    heard: list[ProbeOutput] = []
    thread = threading.Thread(target=lambda: heard.append(run_probe(
        run, listener, listen_argv, sender_bound if download else receiver_bound)),
        daemon=True)  # on Ctrl-C the teardown ends its probe; nothing waits for it
    thread.start()
    connected = run_probe(run, connector, connect_argv,
                          receiver_bound if download else sender_bound)
    thread.join(receiver_bound + 30)
    received = connected if download else (heard[0] if heard else ProbeOutput(-1, "", ""))
    save_raw(raw_path, received.stdout + received.stderr)
    return parsed(received.stdout + received.stderr, lambda text: parse_counts(text, count),
                  TransferError)
