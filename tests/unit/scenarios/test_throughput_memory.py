"""throughput's memory per role: the metrics it emits, and the reading under load."""

from __future__ import annotations

import time
from typing import cast

import pytest

from vnetbench.declared import catalogue
from vnetbench.engines.base import EngineError
from vnetbench.engines.stack import Stack
from vnetbench.engines.usage import MemoryReading
from vnetbench.measure.memory import MIB, RoleMemory
from vnetbench.scenarios.resources import MemoryFigures
from vnetbench.scenarios.throughput import (
    CpuFigures,
    MemoryUnderLoad,
    Stream,
    stream_metrics,
)


def test_memory_metrics_per_role_idle_load_and_peak() -> None:
    """Mean per container idle and under load; the highest peak of either reading;
    roles outside CPU_ROLES (the probes) and roles with no reading give no metric."""
    idle = {"switch": RoleMemory(2, 20 * MIB, 10 * MIB, 40 * MIB),
            "probe": RoleMemory(1, MIB, MIB, MIB)}
    load = {"switch": RoleMemory(2, 30 * MIB, 15 * MIB, 50 * MIB),
            "agent": RoleMemory(1, 4 * MIB, 4 * MIB, None)}
    stream = Stream.of([], CpuFigures({}, {}, {}), None, MemoryFigures(idle, load))
    memory = {k: v for k, v in stream_metrics(stream).items() if k.startswith("mem_")}
    assert memory == {"mem_switch_idle_mib": (10.0, "MiB"), "mem_switch_load_mib": (15.0, "MiB"),
                      "mem_switch_peak_mib": (50.0, "MiB"), "mem_agent_load_mib": (4.0, "MiB")}


def test_memory_metrics_are_declared_each_with_its_role_as_a_dimension() -> None:
    metrics = catalogue()
    for kind in ("idle", "load", "peak"):
        found = metrics.find(f"mem_conductor_{kind}_mib")
        assert found is not None and found.name == f"mem_{kind}_mib"
        assert found.dimensions == ("role",) and found.unit == "MiB"
        assert metrics.split(f"mem_conductor_{kind}_mib") == (found.name, {"role": "conductor"})


class FakeStack:
    def __init__(self, fail: bool = False) -> None:
        self.fail, self.calls = fail, 0

    def memory_by_role(self) -> dict[str, list[MemoryReading]]:
        self.calls += 1
        if self.fail:
            raise EngineError("docker ps failed", 1)
        return {"agent": [MemoryReading(MIB, 2 * MIB)]}


def asked(stack: FakeStack) -> None:
    """Until the reading thread has asked the engine, its delay past: a fixed sleep
    could end first when a loaded host ran the thread late, and result() then stopped
    it before it read."""
    deadline = time.monotonic() + 60
    while stack.calls == 0:
        assert time.monotonic() < deadline  # a hang guard
        time.sleep(0.01)


def test_memory_under_load_is_read_once_after_its_delay() -> None:
    stack = FakeStack()
    reading = MemoryUnderLoad(cast(Stack, stack), 0.05)
    asked(stack)
    assert reading.result() == {"agent": RoleMemory(1, MIB, MIB, 2 * MIB)}
    assert stack.calls == 1


@pytest.mark.parametrize("fail", [False, True])
def test_no_reading_under_load_when_the_stream_ended_first_or_the_engine_failed(
        fail: bool) -> None:
    stack = FakeStack(fail)
    delay = 0.01 if fail else 30.0
    reading = MemoryUnderLoad(cast(Stack, stack), delay)
    if fail:
        asked(stack)
    started = time.monotonic()
    assert reading.result() == {}
    # no wait for the delay (30 s): having waited it, result() would return 30 s after
    # the thread began, which was before `started`
    assert fail or time.monotonic() - started < delay - 1
    assert stack.calls == (1 if fail else 0)
