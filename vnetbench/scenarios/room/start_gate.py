"""The room's start gate: the machines' probes begin as soon as the last one is up,
not at the end of a lead sized for a slow engine.

Every probe is told one instant (epoch seconds) in its arguments, set before the
first is created from a lead that allows for the engine's slowest pace (runtime.py
LEAD_S, LEAD_PER_MACHINE_S: 2 + 0.3 s a machine). The engine is usually faster
(20 probes up in 3 s of an 8 s lead here, 300 in 59 s of 92), and the whole room
waited out the rest. With the gate, each probe also opens a file of this machine,
mounted read-only, and takes a shared flock(2) on it, which this process holds
exclusively while the probes are created. Once every probe is up, it writes how
far the instant moves (seconds, never later: `OPEN_AHEAD_S` from then) and lets go:
each probe shifts the instants of its arguments by that much, all by the same
number, so the room still starts at one instant. Whatever ends the start, the gate
is let go (with no shift when it did not open early), so no probe waits on it past
its own bound.

A probe on another host has no such file: a room placed on several hosts keeps the
lead (`Room.run_pass` asks for a gate only on one host).
"""

from __future__ import annotations

import fcntl
import time
from pathlib import Path
from types import TracebackType
from typing import TextIO

from vnetbench.engines.base import Mount

GATE_DIR = "/run/vnetbench-room-gate"  # in each machine's probe
GATE_FILE = "start"
# From the gate's opening to the room's instant: the probes' wake from the lock (one
# read and a shift each) and the last started ones' interpreter reaching it. The room
# still says how late any machine began (runtime.py LATE_TOLERANCE_S makes it partial).
OPEN_AHEAD_S = 1.0
OPEN_AHEAD_PER_MACHINE_S = 0.005  # 300 machines: 2.5 s


class StartGate:
    """A gate file in `directory` (made here; the room removes the directory with its
    probes), held exclusively from entering until `open_early` or leaving."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory.resolve()  # the engine takes a relative one for a volume
        self.path = directory / GATE_FILE
        self.shift_s: float | None = None
        self._handle: TextIO | None = None

    def __enter__(self) -> StartGate:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path.write_text("")
        handle = self._handle = self.path.open("r+")
        fcntl.flock(handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._handle is not None and self.shift_s is None:
            self._release(0.0)

    @property
    def mount(self) -> Mount:
        return Mount(self.directory, GATE_DIR)

    @staticmethod
    def argv_prefix() -> list[str]:
        """What goes before a probe's subcommand: `vnetbench-room --gate PATH open ...`."""
        return ["--gate", f"{GATE_DIR}/{GATE_FILE}"]

    def open_early(self, planned: float, machines: int, fault_lead_s: float) -> float:
        """Let the probes go for an instant `open_ahead_s` (and the faults' lead) from
        now, when that is before `planned`; the instant the room now has."""
        instant = min(planned, time.time() + open_ahead_s(machines) + fault_lead_s)
        self._release(instant - planned)
        return instant

    def _release(self, shift_s: float) -> None:
        assert self._handle is not None
        self._handle.seek(0)
        self._handle.write(f"{shift_s:.6f}\n")
        self._handle.flush()
        self.shift_s = shift_s
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None


def open_ahead_s(machines: int) -> float:
    return OPEN_AHEAD_S + OPEN_AHEAD_PER_MACHINE_S * machines
