"""A schedule of faults on a scenario's stack during its load: what a scenario needs of
faults/executor.py's runner (the containers each target is, the backbone shaped
with a ramp's level or as planned again, the keeper told the shapers it re-applied
are the planned ones), and the stamps read into each event's window and the pass's
problems and notes. The room (scenarios/room/fault_schedule.py) adds its probes started
anew; throughput runs it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from vnetbench.engines.base import EngineError
from vnetbench.engines.stack import Stack
from vnetbench.errors import UserError
from vnetbench.faults.executor import ENGINE_LATE_S, ScheduleRun, ScheduleRunner
from vnetbench.faults.schedule import BackboneShape, Schedule, Target, expand
from vnetbench.faults.window import FaultWindow
from vnetbench.measure.room_faults import EventWindow
from vnetbench.model.addressing import AddressPlan
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.runtime import labels
from vnetbench.shaping.apply import ShapingKeeper, is_shaped, shape_run, unshape_segment


def expand_within(topology: Topology, machines: list[str], load: str,
                  seconds: float | None = None) -> Schedule:
    """The topology's faults expanded (expand's checks), refused when the last step
    comes after the load (`load`: "the room's load", "the stream") has ended;
    `seconds`: the load's length (default settings.seconds; a room's workload's own)."""
    schedule = expand(topology, machines)
    longer = "--seconds" if seconds is None else "longer phases of its workload"
    seconds = topology.settings.seconds if seconds is None else seconds
    if schedule.end_ms > seconds * 1000:
        raise UserError(f"Topology '{topology.name}': its faults' last step comes "
                        f"{schedule.end_ms / 1000:g} s after {load} begins, and it lasts "
                        f"{seconds:g} s. Give a longer load ({longer}), or faults that end "
                        "sooner.")
    return schedule


class OnStack(Protocol):
    """What a schedule needs of a scenario's pass: scenarios/base.py's ScenarioContext
    (the faults, below the scenarios, do not import it)."""

    @property
    def stack(self) -> Stack: ...
    @property
    def topology(self) -> Topology: ...
    @property
    def overlay(self) -> Overlay: ...
    @property
    def plan(self) -> AddressPlan: ...
    @property
    def shaping(self) -> ShapingKeeper | None: ...
    def container(self, agent: str) -> str: ...


@dataclass
class ScheduleOutcome:
    """Each event's window as stamped, what went wrong, what the pass notes."""

    windows: dict[str, FaultWindow]
    events: list[EventWindow]
    declared: dict[str, float | None]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class FaultSchedule:
    """One pass's schedule on a scenario's stack; `raw`: where each helper's output is
    kept, its name's prefix (raw/room-pass1-)."""

    def __init__(self, context: OnStack, schedule: Schedule, prefix: str,
                 raw: Path) -> None:
        self.context, self.schedule, self.prefix = context, schedule, prefix
        self.runner = ScheduleRunner(context.stack, schedule, context.plan, prefix,
                                     self.containers, self.reshape, self.started, raw)
        self.killed: set[str] = set()  # services the schedule killed
        self.zero = 0.0
        self.reshaped = False

    @property
    def lead_s(self) -> float:
        """How long before its zero staging must begin."""
        return self.runner.lead_s

    def stage_at(self, zero: float) -> None:
        self.zero = zero
        self.runner.stage(zero)

    def fire(self) -> None:
        self.runner.fire()

    # -- the runner's hooks ----------------------------------------------------------
    def containers(self, target: Target) -> list[str]:
        stack = self.context.stack
        if target.role in ("machine", "server"):
            names = [self.context.container(target.name)]
        else:
            role = (self.context.overlay.control_plane if target.role == "control-plane"
                    else "switch")
            listed = stack.containers(role) if role else []
            if target.role == "switch":
                listed = [c for c in listed if c.labels.get(labels.NODE) == target.name]
            names = [c.name for c in listed]
        if not names:
            raise EngineError(f"no running container is {target.name}")
        self.killed |= {stack.service_of(n) for n in names}
        return names

    def started(self, target: Target, at: float) -> None:
        """A target started again (`at`: its start returned); nothing to do here."""

    def reshape(self, shape: BackboneShape | None) -> None:
        """The backbone's containers shaped with `shape` (None: as planned again)."""
        stack, topology = self.context.stack, self.context.topology
        self.reshaped = True
        if shape is not None:
            shape_run(stack, with_backbone(topology, shape), segment="backbone")
        elif is_shaped(topology):
            shape_run(stack, topology, segment="backbone")
        else:
            unshape_segment(stack, "backbone")

    # -- after the load --------------------------------------------------------------
    def cancel(self) -> None:
        """The pass was stopped: no step begins from now on (the teardown removes what
        the schedule staged, by its labels)."""
        self.runner.cancel()

    def finish(self, start_killed: bool = True) -> ScheduleOutcome:
        """Every stamp read into the events' windows (start_killed: what was killed for
        good started again, for the next pass; failover keeps it down for its window)."""
        stamps = self.runner.finish(start_killed)
        keeper = self.context.shaping
        if keeper is not None and (self.killed or self.reshaped):
            keeper.settle(self.killed)
        return outcome_of(self.schedule, stamps)


def with_backbone(topology: Topology, shape: BackboneShape) -> Topology:
    """The topology with the backbone's whole profile replaced (not validated again: a
    level of a ramp is a fault, not a link to measure)."""
    backbone = topology.links.backbone.model_copy(update={
        "loss": shape.loss, "delay": shape.delay_ms, "rate": shape.rate})
    links = topology.links.model_copy(update={"backbone": backbone})
    return topology.model_copy(update={"links": links})


def outcome_of(schedule: Schedule, stamps: ScheduleRun) -> ScheduleOutcome:
    """Each event's window and, where a step was not stamped in time, why."""
    windows = {e.label: stamps.window(schedule, e) for e in schedule.events}
    result = ScheduleOutcome(
        windows, [EventWindow(label, w.start, w.end) for label, w in windows.items()],
        {e.label: e.fault.lasts_ms for e in schedule.events})
    for event in schedule.events:
        label, window = event.label, windows[event.label]
        result.problems += [f"{label}: {p}" for p in window.problems()]
        result.notes += [f"{label}: {n}" for n in window.notes()]
        late = stamps.late_engine_steps(schedule, event)
        if late:
            result.problems.append(
                f"{label}: {len(late)} of its engine steps began over "
                f"{ENGINE_LATE_S:g} s after their instants (up to {max(late):.1f} s): the "
                "engine's calls before them (a kill, a start, shaping anew) ran behind the "
                "schedule, so it did not take effect when declared")
        spread = window.spread_ms()
        if spread is not None and any(e.edge.startswith("engine") for e in window.edges):
            result.notes.append(f"{label}: the engine's calls took {spread:.0f} ms from the "
                                "first asked to the last returned (stamped on the host)")
    return result
