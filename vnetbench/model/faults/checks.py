"""A topology's faults checked against the topology: the roles and switches they name,
the room's size, the backbone's profile at every level a ramp takes, and events
that would act on one target at once. Every problem is a sentence naming its entry
(`faults.2`) and the fix; the topology joins them into its one validation error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vnetbench.core.model import duration_text
from vnetbench.model.faults.declared import CONTROL_PLANE, SERVER, Fault, MachineCount

FOR_GOOD = math.inf


@dataclass(frozen=True)
class Ground:
    """What the faults are checked against, read off the topology."""

    switches: tuple[str, ...]
    machines: int  # the room's machines (settings.machines)
    backbone_hold_ms: float  # the planned backbone's delay + jitter
    max_hold_ms: float  # a link profile's bound on delay + jitter (topology.MAX_HOLD_MS)
    # the planned backbone with one value changed (loss, delay or rate): why that is no
    # link vnetbench can shape, or None
    backbone_problem: Callable[[str, float], str | None]


@dataclass(frozen=True)
class Span:
    """When an entry acts on its target: from `start` to `end` (ms after the
    schedule's zero; FOR_GOOD: never lifted)."""

    entry: int
    fault: Fault
    target: str  # in words: "switch2", "the backbone's drop rules"...
    start: float
    end: float


def churn_count(share: float, machines: int) -> int:
    """The machines a churn of `share` % restarts: the nearest whole number."""
    return math.floor(share * machines / 100 + 0.5)


def target_of(fault: Fault) -> str:
    """What an entry acts on. The backbone has two: its drop rules (link, loss, flap,
    partition, a loss ramp: iptables rules on every edge) and its shaping (delay, the
    delay and rate ramps: the shapers), which do not undo each other."""
    if isinstance(fault.kill, MachineCount) or fault.churn is not None:
        return "the room's machines"
    if fault.kill is not None:
        return {CONTROL_PLANE: "the control plane", SERVER: "the room's server"}.get(
            fault.kill, fault.kill)
    if fault.delay is not None or fault.ramp in ("delay", "rate"):
        return "the backbone's shaping"
    return "the backbone's drop rules"  # a loss ramp too: staged as drop rules


def span_of(entry: int, fault: Fault) -> Span:
    lasts = fault.lasts_ms
    return Span(entry, fault, target_of(fault), fault.at,
                FOR_GOOD if lasts is None else fault.at + lasts)


def schedule_problems(faults: Sequence[Fault], ground: Ground,
                      concurrent: bool = False) -> list[str]:
    """Every problem of the faults against the topology, one sentence each.
    `concurrent`: the faults are one schedule over one load (a room's), so two events
    on one target may not overlap; failover injects its entries one after another,
    each in its own window (`at` after its own probes answer), so they may."""
    problems = []
    for entry, fault in enumerate(faults):
        problems += name_problems(entry, fault, ground) + value_problems(entry, fault, ground)
    return problems + (overlap_problems(faults) if concurrent else [])


def name_problems(entry: int, fault: Fault, ground: Ground) -> list[str]:
    where = f"faults.{entry}"
    if isinstance(fault.kill, MachineCount) and fault.kill.machines > ground.machines:
        return [f"{where}.kill: {fault.kill}, and the room has {ground.machines} "
                "(settings.machines): kill at most that many, or give a larger room"]
    if isinstance(fault.kill, str) and fault.kill not in (*ground.switches, CONTROL_PLANE,
                                                          SERVER):
        return [f"{where}.kill: no switch named '{fault.kill}': name one of "
                f"{', '.join(ground.switches)}, or '{CONTROL_PLANE}' for the overlay's "
                f"control plane, '{SERVER}' for the room's server, {{machines: N}} for N of "
                "the room's machines"]
    unknown = [name for group in fault.partition or () for name in group
               if name not in ground.switches]
    if unknown:
        return [f"{where}.partition: no switch named {', '.join(map(repr, unknown))}: the "
                f"sets hold switches of the topology ({', '.join(ground.switches)})"]
    return []


def value_problems(entry: int, fault: Fault, ground: Ground) -> list[str]:
    where = f"faults.{entry}"
    problems = []
    if fault.delay is not None:
        held = ground.backbone_hold_ms + fault.delay
        if held > ground.max_hold_ms:
            problems.append(
                f"{where}.delay: the backbone's delay + jitter + the spike is "
                f"{duration_text(held)} each way, more than {ground.max_hold_ms:g}ms (the "
                "bound of a link profile: links.backbone); give a smaller spike")
    if fault.ramp is not None:
        for key, value in (("from", fault.start), ("to", fault.end)):
            why = ground.backbone_problem(fault.ramp, value) if value is not None else None
            if why:
                problems.append(f"{where}.{key}: the backbone with {fault.ramp} "
                                f"{fault.value_text(value or 0)} is no link vnetbench can "
                                f"shape ({why}); give a value within the link's bounds")
    if fault.churn is not None and churn_count(fault.churn, ground.machines) == 0:
        least = math.ceil(50 / ground.machines * 100) / 100
        problems.append(f"{where}.churn: {fault.churn:g}% of the room's {ground.machines} "
                        f"machines restarts none: give at least {least:g}%")
    return problems


def overlap_problems(faults: Sequence[Fault]) -> list[str]:
    """Two entries acting on one target at once: the later one would undo the earlier
    (a lift deleting the rules a flap still holds) or stack on it."""
    spans = sorted((span_of(i, f) for i, f in enumerate(faults)),
                   key=lambda s: (s.start, s.entry))
    problems = []
    for index, later in enumerate(spans):
        for earlier in spans[:index]:
            if earlier.target == later.target and later.start < max(
                    earlier.end, earlier.start + 1):
                problems.append(overlap_text(earlier, later))
                break
    return problems


def overlap_text(earlier: Span, later: Span) -> str:
    def when(span: Span) -> str:
        end = "for good" if span.end == FOR_GOOD else f"to {duration_text(span.end)}"
        return f"{span.fault.kind}, {duration_text(span.start) if span.start else '0s'} {end}"

    fix = (f"faults.{earlier.entry} holds it for good: drop one, or restart it "
           "(restart_after)" if earlier.end == FOR_GOOD else
           f"start it at {duration_text(max(earlier.end, earlier.start + 1))} or later")
    return (f"faults.{later.entry} ({when(later)}) overlaps faults.{earlier.entry} "
            f"({when(earlier)}) on {later.target}: one event at a time on one target (the "
            f"later would undo or stack on the earlier); {fix}")
