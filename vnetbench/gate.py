"""The start gate: containers created and waiting, released at one instant.

Measured on this kind of machine (issue #3): a named pipe read by every
waiting container released 100 containers within 22 ms at almost no CPU,
where polling loops saturated both cores, inotify ran out of instances and
`docker compose start` started containers one by one (~93 ms each). So each
gated container opens the pipe for reading (which blocks) through the
read-only entry wrapper `vnetbench-entry`; vnetbench opens it for writing,
which wakes them all, holds it open briefly for any container still between
its "waiting" mark and its open(), then closes it.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vnetbench.paths import PACKAGE

ENTRY_SOURCE = PACKAGE / "data" / "vnetbench-entry"
GATE_DIR = "gate"
FIFO_NAME = "release"
MOUNT_POINT = "/vnetbench"  # where containers see the gate directory
ENTRY = f"{MOUNT_POINT}/vnetbench-entry"
FIFO_IN_CONTAINER = f"{MOUNT_POINT}/{FIFO_NAME}"
WAITING_MARK = "/tmp/vnetbench-gate-waiting"
RELEASED_MARK = "/tmp/vnetbench-gate-released"
STAMP = re.compile(r"vnetbench-gate released (?P<seconds>\d+[.,]\d+)")
HOLD_SECONDS = 1.0


def prepare_gate(run_dir: Path) -> Path:
    """The run's gate directory: the entry wrapper and a fresh named pipe."""
    directory = run_dir / GATE_DIR
    directory.mkdir(parents=True, exist_ok=True)
    entry = directory / ENTRY_SOURCE.name
    shutil.copyfile(ENTRY_SOURCE, entry)
    entry.chmod(0o555)
    fifo = directory / FIFO_NAME
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo, 0o644)
    return directory


def template_context() -> dict[str, object]:
    """What templates need for gated agents: the entry wrapper, the pipe, and a health
    check that holds while a container waits at the gate or after it left."""
    return {"entry": ENTRY, "fifo": FIFO_IN_CONTAINER,
            "gate_check": ["CMD", "bash", "-c",
                           f"[[ -e {WAITING_MARK} || -e {RELEASED_MARK} ]]"]}


def release(gate_dir: Path, hold_seconds: float = HOLD_SECONDS) -> float:
    """Release every container waiting at the gate; return the release time (epoch s)."""
    released = time.time()  # before open(): the waiting side wakes during the call
    fd = os.open(gate_dir / FIFO_NAME, os.O_RDWR | os.O_NONBLOCK)
    try:
        time.sleep(hold_seconds)
    finally:
        os.close(fd)
    return released


def release_stamp(log_text: str) -> float | None:
    """The release time a container stamped in its log, if it was released."""
    found = STAMP.search(log_text)
    return float(found["seconds"].replace(",", ".")) if found else None


@dataclass(frozen=True)
class GateSpread:
    released: int
    waiting: int
    first: float | None  # epoch seconds
    last: float | None

    @property
    def spread_ms(self) -> float | None:
        if self.first is None or self.last is None:
            return None
        return (self.last - self.first) * 1000


def gate_spread(stamps: Mapping[str, float | None]) -> GateSpread:
    """First to last release over the gated containers; `waiting` were never released."""
    seen = [s for s in stamps.values() if s is not None]
    return GateSpread(released=len(seen), waiting=len(stamps) - len(seen),
                      first=min(seen) if seen else None, last=max(seen) if seen else None)
