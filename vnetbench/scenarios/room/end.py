"""The room's end: the instant every open-loop generator's requests have ended.

Each generator holds its connections until the room's end, since a probe's exit costs
the engine CPU that stalled the requests of machines still running (room.held). Told
only the deadline (the last request's instant plus its timeout), every pass waited out
the whole timeout after the last request: 60 s a pass for the contest profile, whose
requests were all answered seconds before. So the room's server namespace runs a
barrier (`vnetbench-room barrier`): each generator connects to it once its own
requests have ended, and when all have, the barrier closes every connection: the
generators print their records and exit together, with nothing left in flight. A
machine that never arrives (its probe refused, its generator dead) leaves the others
to the deadline, as before. The barrier's connections cross the path under test: a
handshake per machine at its end and a close per machine once the room has ended.
"""

from __future__ import annotations

import json
import threading
import time

from vnetbench.engines.base import ToolOutput
from vnetbench.measure.probe import RunOnEngine

BARRIER_PORT = 8081
BARRIER_MARK = "vnetbench-room-barrier "


class RoomEnd:
    """The barrier, run in the server's probe from before the load; `wait` blocks
    until it released every machine or the deadline, without asking the engine."""

    def __init__(self, run: RunOnEngine, server_probe: str, machines: int, url: str) -> None:
        self.machines = machines
        self.url = url  # where the generators reach the barrier
        self.output: ToolOutput | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(run, server_probe), daemon=True, name="room-end")

    def start(self) -> RoomEnd:
        self._thread.start()
        return self

    def _run(self, run: RunOnEngine, server_probe: str) -> None:
        try:  # ends when the barrier releases, or when the pass removes the server probe
            self.output = run.engine.execute(server_probe, [
                "vnetbench-room", "barrier", str(BARRIER_PORT), str(self.machines)])
        finally:
            self._done.set()

    def wait(self, deadline: float) -> float | None:
        """When every machine was released (epoch seconds), waiting at most until
        `deadline` (epoch seconds); None when they were not (the deadline, a machine
        that never arrived, or no barrier)."""
        self._done.wait(max(0.0, deadline - time.time()))
        return released_at(self.output.stdout if self.output else "", self.machines)


def released_at(output: str, machines: int) -> float | None:
    """The barrier's release instant from its line, when all `machines` arrived."""
    for line in output.splitlines():
        if line.startswith(BARRIER_MARK):
            try:
                said = json.loads(line[len(BARRIER_MARK):])
                if int(said["arrived"]) >= machines:
                    return float(said["released"])
            except (ValueError, KeyError, TypeError):
                return None
    return None
