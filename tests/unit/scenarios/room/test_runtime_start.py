"""The room's probes started for one instant, and started once more when the engine
was too slow for the lead (no engine: the starts are stand-ins that take a known time;
the bounds below come from that time, not from this host's speed)."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest

from vnetbench.engines.base import LARGEST_CPU_SHARES
from vnetbench.scenarios.room import runtime as room_module
from vnetbench.scenarios.room.runtime import LEAD_S, STARTERS, LoadArgv, Room

MACHINES = {f"m{n}": f"probe-m{n}" for n in range(2 * STARTERS)}


class TimedStarts(Room):
    """A room whose probe starts take `start_s` each (`again_s` once the room was started
    again), recording what it started and removed."""

    def __init__(self, start_s: float, again_s: float = 0.0) -> None:
        self.start_s, self.again_s = start_s, again_s
        self.started: list[str] = []
        self.removed: list[str] = []
        self.argv: list[list[str]] = []
        self.mounts: list[tuple[Any, ...]] = []

    def start_machine(self, context: Any, machine: str, argv: list[str],  # type: ignore[override]
                      name: str, mounts: tuple[Any, ...] = ()) -> tuple[str, str] | None:
        self.started.append(name)
        self.argv.append(argv)
        self.mounts.append(mounts)
        time.sleep(self.again_s if self.removed else self.start_s)
        return None

    def remove_probes(self, context: Any, names: list[str]) -> None:  # type: ignore[override]
        self.removed += names


def argv_for(planned: float, lead: float) -> LoadArgv:
    return LoadArgv({m: ["vnetbench-room", f"{planned:.3f}"] for m in MACHINES}, 10.0,
                    lead + 20)


def test_a_start_within_the_lead_is_kept_as_it_is() -> None:
    room = TimedStarts(0.0)
    before = time.time()
    start = room.start_room(None, MACHINES, argv_for, lead=30.0, fault_lead=0.0)  # type: ignore[arg-type]
    after = time.time()
    assert start.notes == [] and room.removed == []
    assert sorted(room.started) == sorted(MACHINES.values())
    # the instant planned at the call, the lead ahead, kept (not planned again later);
    # bracketed by the clock around the call, whatever the host's speed
    assert start.lead == 30.0 and before + 30.0 <= start.planned <= after + 30.0


def test_an_engine_too_slow_for_the_lead_gets_the_room_started_again() -> None:
    # each start takes 0.1 s, STARTERS at a time: the first round alone ends 0.1 s after
    # a lead of 0.01 s, so the first attempt cannot be in time
    room = TimedStarts(0.1)
    start = room.start_room(None, MACHINES, argv_for, lead=0.01, fault_lead=0.0)  # type: ignore[arg-type]
    assert sorted(room.removed) == sorted(MACHINES.values())
    assert len(start.notes) == 1 and "started again with a lead of" in start.notes[0]
    # the second attempt starts every machine, for its own instant and lead
    assert room.started[-len(MACHINES):] and sorted(room.started[-len(MACHINES):]) == \
        sorted(MACHINES.values())
    assert start.lead >= LEAD_S
    assert start.load.argv["m0"][1] == f"{start.planned:.3f}"


def test_a_second_miss_is_left_to_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    # with LEAD_S at 0.1 s and first starts of 0.05 s, the second lead is about
    # 0.1 + 2 x 0.05 / 4 x 8 = 0.3 s (PACE_HEADROOM 2); then the engine slows to 1 s a
    # start: 8 in two
    # rounds of 4 take 2 s. The second attempt is not cut short (every machine started,
    # late), and there is no third
    monkeypatch.setattr(room_module, "LEAD_S", 0.1)
    room = TimedStarts(0.05, again_s=1.0)
    start = room.start_room(None, MACHINES, argv_for, lead=0.001, fault_lead=0.0)  # type: ignore[arg-type]
    assert start.starting_s > start.lead
    assert len(start.notes) == 1
    assert sorted(room.started[-len(MACHINES):]) == sorted(MACHINES.values())
    assert sorted(room.removed) == sorted(MACHINES.values())


class RecordedStarts:
    """An engine that keeps each tool it was asked to start."""

    def __init__(self) -> None:
        self.started: list[tuple[str, Any]] = []

    def start_tool(self, target: str, tool: Any) -> str:
        self.started.append((target, tool))
        return str(tool.name)


class OneMachine:
    def __init__(self) -> None:
        self.stack = SimpleNamespace(run_id="r1", engine=RecordedStarts())

    def container(self, machine: str) -> str:
        return f"venue-{machine}"


@pytest.mark.parametrize("shared", [False, True])
def test_the_load_outweighs_every_other_container_on_the_host(shared: bool) -> None:
    # the generators must send at their instants on a host short of CPU: their weight
    # is the engine's largest, against 1024 for every container that sets none
    context = OneMachine()
    assert Room.start_machine(context, "m1", ["vnetbench-room", "many"], "probe-m1",  # type: ignore[arg-type]
                              shared=shared) is None
    ((target, tool),) = context.stack.engine.started
    assert target == "venue-m1" and tool.name == "probe-m1"
    assert tool.cpu_shares == room_module.LOAD_CPU_SHARES == LARGEST_CPU_SHARES == 262144
    assert tool.host_pids is shared
