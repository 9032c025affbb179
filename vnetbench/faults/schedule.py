"""A schedule of faults (a topology's `faults:`, on one timeline) expanded into
primitive timed steps, so that an executor stages everything before the load and
fires each step at its instant.

Each step is one thing done at one instant (ms after the schedule's zero, the
load's start): backbone drop rules put in, replaced (a loss ramp's levels) or
taken out (`drop-edges-on`/`-set`/`-off`, on every backbone edge, or for a
partition on the edges between its sets), roles killed or started, the backbone
shaped with a profile or shaped as planned again.
Steps are sorted by instant; at one instant a lift (a rule out, a start, the
planned shaping) comes before an apply, so an event may begin where the last one
on its target ended, and a churned machine's start comes after its kill.

Machines (`kill: {machines: N}`, churn) are chosen by a draw seeded with the
event's label: the same schedule on the same room names the same machines, and
two events draw independently. Churn restarts its machines one at a time, evenly
over `over`: the k-th of n at `at + k * over / n` (k from 0), each killed and at
once started again.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from vnetbench.errors import UserError
from vnetbench.model.faults.checks import churn_count
from vnetbench.model.faults.declared import CONTROL_PLANE, SERVER, Fault, MachineCount
from vnetbench.model.topology import Topology

Role = Literal["switch", "control-plane", "server", "machine"]
LIFT, APPLY, AFTER_KILL = 0, 1, 2  # a step's phase: its order among steps at one instant


class Action(StrEnum):
    DROP_ON = "drop-edges-on"
    DROP_OFF = "drop-edges-off"
    DROP_SET = "drop-edges-set"  # the edges' drop rule replaced (a loss ramp's next level)
    KILL = "kill"
    START = "start"
    SHAPE = "shape-backbone"
    RESTORE = "restore-shaping"


@dataclass(frozen=True, order=True)
class Target:
    """A role the engine kills or starts: a switch (its containers), the overlay's
    control plane, the room's server or one machine (an agent)."""

    role: Role
    name: str


@dataclass(frozen=True, order=True)
class Cut:
    """One backbone drop rule: on switch `at`'s backbone attachment, what arrives from
    switch `source` (its backbone address and its site's subnet: what it forwards).
    Both None: every backbone attachment, whatever arrives (the link's faults)."""

    at: str | None = None
    source: str | None = None


EVERY_EDGE = Cut()


@dataclass(frozen=True)
class BackboneShape:
    """The backbone's whole profile for a step (the planned one, a value changed)."""

    loss: float  # percent
    delay_ms: float
    rate: int | None  # bits/s; None: unshaped


@dataclass(frozen=True)
class Step:
    at_ms: float  # after the schedule's zero
    action: Action
    event: str  # its event's label ("backbone-flap", "churn-2")
    entry: int  # its event's index in `faults`
    targets: tuple[Target, ...] = ()  # kill, start
    cuts: tuple[Cut, ...] = ()  # drop-edges-on, drop-edges-off
    drop_percent: float | None = None  # drop-edges-on: the share dropped (100: all)
    shape: BackboneShape | None = None  # shape-backbone
    cycle: int | None = None  # a flap's round, a ramp's level, a churn's machine (from 1)
    phase: int = APPLY


@dataclass(frozen=True)
class Event:
    """One entry as scheduled: its label, declared span, and what it acts on."""

    label: str
    entry: int
    fault: Fault
    start_ms: float
    end_ms: float | None  # None: for good
    targets: tuple[Target, ...] = ()  # the roles it kills (the machines chosen, named)


@dataclass(frozen=True)
class Schedule:
    events: tuple[Event, ...]
    steps: tuple[Step, ...]  # sorted by instant, then phase

    @property
    def end_ms(self) -> float:
        """The last step's instant."""
        return max((s.at_ms for s in self.steps), default=0.0)


def event_labels(faults: Sequence[Fault]) -> list[str]:
    """Each entry's name in results: its kind, numbered from its second (failover's
    convention; a `#` cannot be in a metric's series name)."""
    seen: dict[str, int] = {}
    labels = []
    for fault in faults:
        seen[fault.kind] = seen.get(fault.kind, 0) + 1
        labels.append(fault.kind if seen[fault.kind] == 1 else
                      f"{fault.kind}-{seen[fault.kind]}")
    return labels


def room_machines(topology: Topology) -> list[str]:
    """The room's machines: every agent but the server, in the topology's order."""
    return [a.name for a in topology.agents if a.name != SERVER]


def expand(topology: Topology, machines: Sequence[str] | None = None) -> Schedule:
    """The topology's faults as one schedule's sorted steps; `machines` (default: the
    room's) are those `kill: {machines: N}` and churn choose from. UserError when the
    faults do not fit this topology or these machines."""
    problems = topology.fault_problems(concurrent=True)
    pool = list(room_machines(topology) if machines is None else machines)
    events, steps = [], []
    for entry, (label, fault) in enumerate(zip(event_labels(topology.faults),
                                               topology.faults, strict=True)):
        problems += machine_problems(entry, fault, len(pool))
        if problems:
            continue
        event, own = expand_one(topology, entry, label, fault, pool)
        events.append(event)
        steps += own
    if problems:
        raise UserError(f"The faults of topology '{topology.name}' cannot run as a schedule: "
                        f"{'; '.join(problems)}. Fix them and run again.")
    steps.sort(key=lambda s: (s.at_ms, s.phase, s.entry, s.cycle or 0))
    return Schedule(tuple(events), tuple(steps))


def machine_problems(entry: int, fault: Fault, machines: int) -> list[str]:
    if isinstance(fault.kill, MachineCount) and fault.kill.machines > machines:
        return [f"faults.{entry}.kill: {fault.kill}, and this room has {machines}: kill at "
                "most that many"]
    if fault.churn is not None and churn_count(fault.churn, machines) == 0:
        return [f"faults.{entry}.churn: {fault.churn:g}% of this room's {machines} machines "
                "restarts none: give a larger share"]
    return []


def expand_one(topology: Topology, entry: int, label: str, fault: Fault,
               machines: list[str]) -> tuple[Event, list[Step]]:
    at = fault.at
    lasts = fault.lasts_ms
    targets: tuple[Target, ...] = ()
    if fault.kill is not None:
        targets = kill_targets(fault, label, machines)
        steps = kill_steps(fault, label, entry, targets)
    elif fault.flap is not None:
        steps = flap_steps(fault, label, entry)
    elif fault.ramp == "loss" and fault.start is not None and fault.end is not None \
            and min(fault.start, fault.end) >= topology.links.backbone.loss:
        steps = loss_ramp_steps(topology, fault, label, entry)
    elif fault.ramp is not None:
        steps = ramp_steps(topology, fault, label, entry)
    elif fault.churn is not None:
        targets = tuple(Target("machine", m) for m in choose(
            machines, churn_count(fault.churn, len(machines)), label))
        steps = churn_steps(fault, label, entry, targets)
    elif fault.delay is not None:
        planned = planned_shape(topology)
        spiked = BackboneShape(planned.loss, planned.delay_ms + fault.delay, planned.rate)
        steps = [Step(at, Action.SHAPE, label, entry, shape=spiked),
                 Step(at + (fault.duration or 0), Action.RESTORE, label, entry, phase=LIFT)]
    else:  # link, loss, partition: drop rules for `for`
        cuts = partition_cuts(fault.partition) if fault.partition else (EVERY_EDGE,)
        share = fault.loss if fault.loss is not None else 100.0
        steps = [Step(at, Action.DROP_ON, label, entry, cuts=cuts, drop_percent=share),
                 Step(at + (fault.duration or 0), Action.DROP_OFF, label, entry, cuts=cuts,
                      phase=LIFT)]
    end = None if lasts is None else at + lasts
    return Event(label, entry, fault, at, end, targets), steps


def kill_targets(fault: Fault, label: str, machines: list[str]) -> tuple[Target, ...]:
    kill = fault.kill
    if isinstance(kill, MachineCount):
        chosen = set(choose(machines, kill.machines, label))
        return tuple(Target("machine", m) for m in machines if m in chosen)
    role: Role = ("control-plane" if kill == CONTROL_PLANE else
                  "server" if kill == SERVER else "switch")
    return (Target(role, str(kill)),)


def kill_steps(fault: Fault, label: str, entry: int,
               targets: tuple[Target, ...]) -> list[Step]:
    steps = [Step(fault.at, Action.KILL, label, entry, targets=targets)]
    if fault.restart_after is not None:
        steps.append(Step(fault.at + fault.restart_after, Action.START, label, entry,
                          targets=targets, phase=LIFT))
    return steps


def flap_steps(fault: Fault, label: str, entry: int) -> list[Step]:
    """`times` rounds: down at at + k (down + up), up `down` later (k from 0)."""
    down, up = fault.down or 0.0, fault.up or 0.0
    steps = []
    for k in range(fault.times or 0):
        on = fault.at + k * (down + up)
        steps += [Step(on, Action.DROP_ON, label, entry, cuts=(EVERY_EDGE,),
                       drop_percent=100.0, cycle=k + 1),
                  Step(on + down, Action.DROP_OFF, label, entry, cuts=(EVERY_EDGE,),
                       cycle=k + 1, phase=LIFT)]
    return steps


def partition_cuts(sets: tuple[tuple[str, ...], ...]) -> tuple[Cut, ...]:
    """Every edge between two sets, both ways: at each switch, what arrives from each
    switch of another set. Switches in no set reach every side."""
    cuts = [Cut(a, b) for i, side in enumerate(sets) for j, other in enumerate(sets)
            if i != j for a in side for b in other]
    return tuple(sorted(cuts))


def planned_shape(topology: Topology) -> BackboneShape:
    backbone = topology.links.backbone
    return BackboneShape(backbone.loss, backbone.delay, backbone.rate)


def ramp_steps(topology: Topology, fault: Fault, label: str, entry: int) -> list[Step]:
    """n = ceil(over / step) equal steps from `from` (at `at`) to `to` (at `at + over`),
    each level the planned backbone with the ramped value; the last held `hold` (else
    one step), then the planned shaping again."""
    levels, over = fault.ramp_levels, fault.over or 0.0
    start, end = fault.start or 0.0, fault.end or 0.0
    planned, steps = planned_shape(topology), []
    for level in range(levels + 1):
        value = start + (end - start) * level / levels
        shape = BackboneShape(
            value if fault.ramp == "loss" else planned.loss,
            value if fault.ramp == "delay" else planned.delay_ms,
            round(value) if fault.ramp == "rate" else planned.rate)
        steps.append(Step(round(fault.at + over * level / levels, 3), Action.SHAPE, label,
                          entry, shape=shape, cycle=level + 1))
    steps.append(Step(round(fault.at + over + fault.ramp_hold_ms, 3), Action.RESTORE, label,
                      entry, phase=LIFT))
    return steps


def loss_ramp_steps(topology: Topology, fault: Fault, label: str,
                    entry: int) -> list[Step]:
    """A loss ramp as drop rules, each level's set at its instant on every edge (staged
    where it acts, as a link fault is), then taken out: the planned loss p stays the
    shapers', and a level L drops (L - p) / (100 - p) of what it leaves, so the two
    lose L together."""
    planned = topology.links.backbone.loss
    levels, over = fault.ramp_levels, fault.over or 0.0
    start, end = fault.start or 0.0, fault.end or 0.0
    steps = []
    for level in range(levels + 1):
        value = start + (end - start) * level / levels
        share = 100.0 * (value - planned) / (100.0 - planned) if planned < 100 else 0.0
        steps.append(Step(round(fault.at + over * level / levels, 3), Action.DROP_SET, label,
                          entry, cuts=(EVERY_EDGE,), drop_percent=round(share, 6),
                          cycle=level + 1))
    steps.append(Step(round(fault.at + over + fault.ramp_hold_ms, 3), Action.DROP_OFF, label,
                      entry, cuts=(EVERY_EDGE,), phase=LIFT))
    return steps


def churn_steps(fault: Fault, label: str, entry: int,
                targets: tuple[Target, ...]) -> list[Step]:
    over, steps = fault.over or 0.0, []
    for k, target in enumerate(targets):
        at = round(fault.at + k * over / len(targets), 3)
        steps += [Step(at, Action.KILL, label, entry, targets=(target,), cycle=k + 1),
                  Step(at, Action.START, label, entry, targets=(target,), cycle=k + 1,
                       phase=AFTER_KILL)]
    return steps


def choose(machines: Sequence[str], count: int, seed: str) -> list[str]:
    """`count` of the machines, drawn with a seed (the event's label): reproducible."""
    return random.Random(seed).sample(list(machines), count)
