"""Where the seconds of a bring-up and a teardown go: the engine's own events
(create, start, health_status, kill, die, destroy of containers; create, connect,
disconnect, destroy of networks, each with its time) beside vnetbench's own steps
(render, up, shape, save logs, remove: lifecycle.StackSpec.steps), read into one
breakdown. Pure: the events come from Engine.watch_events, the steps from the
stack's spec.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from vnetbench.engines.base import EngineEvent


def of_project(events: Iterable[EngineEvent], project: str) -> list[EngineEvent]:
    """The events of a compose project's containers and networks (named
    `<project>-...` and `<project>_...`), in time order."""
    return sorted((event for event in events if event.kind in ("container", "network")
                   and event.name.startswith(project)), key=lambda event: event.time)


# (phase, kind, action, detail or None for any), in the order they happen
BRING_UP_PHASES = (
    ("networks created", "network", "create", None),
    ("containers created", "container", "create", None),
    ("containers joined to networks", "network", "connect", None),
    ("containers started", "container", "start", None),
    ("health checks run", "container", "exec_create", None),
    ("health checks passed", "container", "health_status", "healthy"),
)
TEARDOWN_PHASES = (
    ("containers killed", "container", "kill", None),
    ("containers ended", "container", "die", None),
    ("containers left networks", "network", "disconnect", None),
    ("containers removed", "container", "destroy", None),
    ("networks removed", "network", "destroy", None),
)


def phases(events: list[EngineEvent], origin: float, until: float,
           table: tuple[tuple[str, str, str, str | None], ...]) -> list[dict[str, Any]]:
    """Each phase of `table` between origin and until: its first and last event (s
    after origin), their span and how many there were."""
    rows = []
    for phase, kind, action, detail in table:
        times = [e.time for e in events if e.kind == kind and e.action == action
                 and (detail is None or e.detail == detail) and origin <= e.time <= until]
        if times:
            rows.append({"phase": phase, "count": len(times),
                         "first_s": round(times[0] - origin, 3),
                         "last_s": round(times[-1] - origin, 3),
                         "span_s": round(times[-1] - times[0], 3)})
    return rows


def breakdown(events: list[EngineEvent],
              steps: list[tuple[str, float, float]]) -> dict[str, Any]:
    """vnetbench's steps (seconds each) and the engine's phases of the bring-up (from
    the start of `up` to the end of `shape`) and of the teardown (from the start of
    `save logs` to the end of `remove`), times in seconds after each one's start."""
    spans = {name: (began, ended) for name, began, ended in steps}
    result: dict[str, Any] = {
        "steps": [{"step": name, "seconds": round(ended - began, 3),
                   "first_s": round(began - steps[0][1], 3) if steps else 0.0}
                  for name, began, ended in steps]}
    up_from = spans.get("up", (None, None))[0]
    up_to = spans.get("shape", spans.get("up", (None, None)))[1]
    if up_from is not None and up_to is not None:
        result["bring_up"] = phases(events, up_from, up_to, BRING_UP_PHASES)
    down_from = spans.get("save logs", spans.get("remove", (None, None)))[0]
    down_to = spans.get("remove", (None, None))[1]
    if down_from is not None and down_to is not None:
        result["teardown"] = phases(events, down_from, down_to, TEARDOWN_PHASES)
    return result


def breakdown_lines(result: dict[str, Any]) -> list[str]:
    """The breakdown as short lines, for a figure's note and the docs' table."""
    lines = [", ".join(f"{row['step']} {row['seconds']:.1f} s" for row in result["steps"])]
    for part in ("bring_up", "teardown"):
        lines += [f"{part.replace('_', '-')}: {row['phase']} x{row['count']} at "
                  f"{row['first_s']:.1f}-{row['last_s']:.1f} s"
                  for row in result.get(part, [])]
    return lines
