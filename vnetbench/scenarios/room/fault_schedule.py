"""The room's schedule of faults: the generic schedule on its stack
(faults/on_stack.py) and the room's probes started anew.

A machine's generator runs in its container's network namespace, which goes with the
container when it is killed: a killed machine's generator is given its schedule up
to the kill, and when the machine is started again a new generator takes the
requests due from RESUME_S after that start on (a machine switched off asks
nothing; one just started asks again, and fails until its overlay has it back).
The server's nginx is started anew likewise when the server is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from vnetbench.faults.on_stack import FaultSchedule
from vnetbench.faults.schedule import Action, Schedule, Target
from vnetbench.scenarios.base import ScenarioContext

# a machine started again: its new generator's first request is due this long after
# the start returned (the engine starts the probe in its namespace within it)
RESUME_S = 0.5


@dataclass(frozen=True)
class Resume:
    """A machine started again: a generator under `name` for its requests due in
    [from_s, until_s) after the room's instant `zero`, ended by `bound_at` at the
    latest (epoch seconds); the room's last request is due at `load_end`."""

    machine: str
    from_s: float
    until_s: float
    name: str
    zero: float
    bound_at: float
    load_end: float


def kills_of(schedule: Schedule, machine: str) -> list[float]:
    """When the schedule kills a machine, seconds after the room's instant."""
    target = Target("machine", machine)
    return sorted(s.at_ms / 1000 for s in schedule.steps
                  if s.action is Action.KILL and target in s.targets)


def first_kills(schedule: Schedule) -> dict[str, float]:
    """Each machine the schedule kills: its first kill, seconds after the room's
    instant (its first generator's requests end there)."""
    machines = {t.name for s in schedule.steps if s.action is Action.KILL
                for t in s.targets if t.role == "machine"}
    return {machine: kills_of(schedule, machine)[0] for machine in machines}


Launch = Callable[[Resume], bool]  # False: no request due, or it would not start


class FaultedRoom(FaultSchedule):
    """One pass's schedule on the room's stack. `launch` starts a machine's generator
    for the requests due in [from_s, until_s) after the room's instant (False: none
    due); `serve` starts the room's server probe under a name."""

    def __init__(self, context: ScenarioContext, schedule: Schedule, prefix: str,
                 pass_no: int, launch: Launch, serve: Callable[[str], None]) -> None:
        super().__init__(context, schedule, prefix, context.raw_dir / f"room-pass{pass_no}-")
        self.launch, self.serve = launch, serve
        self.resumed: dict[str, list[str]] = {}  # machine -> its later generators
        self.servers: list[str] = []  # the server's later probes
        self.load_end = self.bound_at = 0.0

    def kills_of(self, machine: str) -> list[float]:
        """When the schedule kills a machine, seconds after the room's instant."""
        return kills_of(self.schedule, machine)

    def first_span(self, machine: str) -> float:
        """A machine's first generator's requests end here (its first kill)."""
        return next(iter(self.kills_of(machine)), math.inf)

    def probes(self) -> list[str]:
        return [*(n for names in self.resumed.values() for n in names), *self.servers]

    def stage(self, zero: float, load_end: float, bound_at: float) -> None:
        """Stage the schedule for a load from `zero` to `load_end` whose probes end by
        `bound_at` (epoch seconds)."""
        self.load_end, self.bound_at = load_end, bound_at
        self.stage_at(zero)

    def started(self, target: Target, at: float) -> None:
        if at >= self.load_end:
            return  # started again for the next pass: the load is over
        if target.role == "server":
            name = f"{self.prefix}-server-{len(self.servers) + 2}"
            self.serve(name)
            self.servers.append(name)
        elif target.role == "machine":
            later = self.resumed.setdefault(target.name, [])
            from_s = at - self.zero + RESUME_S
            until_s = next((k for k in self.kills_of(target.name) if k > from_s), math.inf)
            name = f"{self.prefix}-{target.name}-{len(later) + 2}"
            if self.launch(Resume(target.name, from_s, until_s, name, self.zero,
                                  self.bound_at, self.load_end)):
                later.append(name)
