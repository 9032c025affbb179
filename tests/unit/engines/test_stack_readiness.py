"""A stack's own wait for readiness (compose's --wait waited out its whole timeout for
a container still "starting" past its start period): which containers are ready,
failed or starting, and when an inspection can tell."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vnetbench.engines.base import Listed
from vnetbench.engines.stack import Stack, shortest_start_period
from vnetbench.errors import UserError


def test_the_shortest_start_period_of_a_compose_file(tmp_path: Path) -> None:
    path = tmp_path / "compose.yml"
    path.write_text("services:\n"
                    "  a: {healthcheck: {test: [CMD, 'true'], start_period: 60s}}\n"
                    "  b: {healthcheck: {test: [CMD, 'true'], start_period: 30s}}\n"
                    "  c: {image: x}\n")
    assert shortest_start_period(path) == 30.0
    path.write_text("services:\n  a: {healthcheck: {test: [CMD, 'true'], interval: 1s}}\n")
    assert shortest_start_period(path) == 0.0  # an engine without start_interval
    assert shortest_start_period(tmp_path / "missing.yml") == 0.0


class Engine:
    """Inspection as the engine answers it: started `ago` seconds, start period 30 s."""

    def __init__(self, ago: float) -> None:
        self.ago, self.inspected = ago, 0

    def health_started(self, container: Listed) -> tuple[datetime, float]:
        self.inspected += 1
        return datetime.now(UTC) - timedelta(seconds=self.ago), 30.0


def stack_of(engine: Engine, listed: list[Listed], tmp_path: Path) -> Stack:
    stack = Stack.__new__(Stack)
    stack.engine = engine  # type: ignore[assignment]
    compose = tmp_path / "compose.yml"
    compose.write_text("services: {}\n")
    stack.rendered = type("R", (), {"compose_file": compose, "directory": tmp_path})()  # type: ignore[assignment]
    stack.containers = lambda role=None: listed  # type: ignore[method-assign]
    return stack


def box(name: str, state: str, health: str | None, role: str = "agent") -> Listed:
    return Listed(name, name, state, health, {"vnetbench.role": role})


def test_starting_is_not_inspected_before_its_start_period_can_be_over(tmp_path: Path) -> None:
    engine = Engine(ago=120)
    stack = stack_of(engine, [], tmp_path)
    starting = box("a1", "running", "starting")
    assert stack.state_of(starting, may_be_over=False) == "starting"
    assert engine.inspected == 0
    # past its start period and still unchecked: failed (its next check is an hour on)
    assert stack.state_of(starting) == "failed" and engine.inspected == 1
    assert stack.state_of(box("a2", "running", None)) == "ready"
    assert stack.state_of(box("a3", "running", "healthy")) == "ready"
    assert stack.state_of(box("a4", "exited", None)) == "failed"


def test_a_stack_all_ready_is_accepted_at_once(tmp_path: Path) -> None:
    stack = stack_of(Engine(ago=1), [box("a1", "running", "healthy"),
                                     box("r1", "running", None, role="switch")], tmp_path)
    assert stack.accept_unready("", timeout_seconds=60) == []


def test_a_failed_agent_is_named_and_a_failed_switch_stops_the_run(tmp_path: Path) -> None:
    agents = [box("a1", "running", "healthy"), box("a2", "running", "unhealthy"),
              box("r1", "running", "healthy", role="switch")]
    assert stack_of(Engine(ago=1), agents, tmp_path).accept_unready("", 60) == ["a2"]
    switch_down: list[Any] = [box("a1", "running", "healthy"),
                              box("r1", "exited", None, role="switch")]
    with pytest.raises(UserError, match="r1 did not become ready"):
        stack_of(Engine(ago=1), switch_down, tmp_path).accept_unready("", 60)
