"""A stack's own wait for readiness (compose's --wait waited out its whole timeout for
a container still "starting" past its start period): which containers are ready,
failed or starting, and when an inspection can tell."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vnetbench.engines.base import Listed
from vnetbench.engines.stack import (
    MARK_WITHIN_S,
    Stack,
    compose_spec,
    marked_services,
    shortest_start_period,
)
from vnetbench.errors import UserError
from vnetbench.runtime import gate


def test_the_shortest_start_period_of_a_compose_file(tmp_path: Path) -> None:
    path = tmp_path / "compose.yml"
    path.write_text("services:\n"
                    "  a: {healthcheck: {test: [CMD, 'true'], start_period: 60s}}\n"
                    "  b: {healthcheck: {test: [CMD, 'true'], start_period: 30s}}\n"
                    "  c: {image: x}\n")
    assert shortest_start_period(compose_spec(path)) == 30.0
    path.write_text("services:\n  a: {healthcheck: {test: [CMD, 'true'], interval: 1s}}\n")
    assert shortest_start_period(compose_spec(path)) == 0.0  # no start_interval
    assert shortest_start_period(compose_spec(tmp_path / "missing.yml")) == 0.0


class Engine:
    """Inspection as the engine answers it: started `ago` seconds, start period 30 s."""

    def __init__(self, ago: float) -> None:
        self.ago, self.inspected = ago, 0

    def health_started(self, container: Listed) -> tuple[datetime, float]:
        self.inspected += 1
        return datetime.now(UTC) - timedelta(seconds=self.ago), 30.0


class Marks:
    """A deployment's look at the run's marks directory, as ComposeDeployment's."""

    def __init__(self, gate_dir: Path) -> None:
        self.gate_dir, self.looks = gate_dir, 0

    def wait_for_marks(self, names: list[str], kind: str, start: int,
                       timeout_s: float) -> list[str]:
        self.looks += 1
        return gate.wait_for_marks(self.gate_dir, names, kind, start, timeout_s)


def stack_of(engine: Engine, listed: list[Listed], tmp_path: Path,
             services: str = "{}") -> Stack:
    stack = Stack.__new__(Stack)
    stack.engine = engine  # type: ignore[assignment]
    stack.started_at = {}
    compose = tmp_path / "compose.yml"
    compose.write_text(f"services: {services}\n")
    stack.rendered = type("R", (), {"compose_file": compose, "directory": tmp_path,  # type: ignore[assignment]
                                    "project": "p"})()
    stack.deployment = Marks(gate.prepare_gate(tmp_path))  # type: ignore[assignment]
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


MARKED = ("{a1: {environment: {VNETBENCH_MARKS: /m/a1}},"
          " a2: {environment: [VNETBENCH_MARKS=/m/a2, VNETBENCH_GATE=/vnetbench/release]},"
          " h1: {environment: {VNETBENCH_MARKS: /m/h1}, healthcheck: {test: [CMD, 'true']}},"
          " r1: {image: x}}")


def test_services_without_a_health_check_are_ready_by_their_mark(tmp_path: Path) -> None:
    """A marked service: behind the gate its 'waiting' mark, else its 'ready' one; a
    service with a health check is judged by it, marks or not."""
    assert marked_services(compose_spec(_written(tmp_path, MARKED))) == {
        "a1": "ready", "a2": "waiting"}
    engine = Engine(ago=1)
    listed = [box("p-a1", "running", None), box("p-a2", "running", None),
              box("p-h1", "running", "healthy", role="switch")]
    stack = stack_of(engine, listed, tmp_path, MARKED)
    marks = tmp_path / gate.GATE_DIR / gate.MARKS_DIR
    (marks / "a1.ready.1").touch()
    (marks / "a2.ready.1").touch()  # the wrong kind: a2 waits at the gate
    states = stack.settle(deadline=0)
    assert {name: state for name, (_, state) in states.items()} == {
        "p-a1": "ready", "p-a2": "starting", "p-h1": "ready"}
    assert engine.inspected == 0  # an unmarked container is not inspected early
    (marks / "a2.waiting.1").touch()
    assert stack.accept_unready("", timeout_seconds=60) == []


def test_a_marked_container_stopped_or_unmarked_past_its_bound_has_failed(
        tmp_path: Path) -> None:
    stack = stack_of(Engine(ago=MARK_WITHIN_S + 1), [], tmp_path, MARKED)
    assert stack.marked_state(box("p-a1", "running", None), True, may_be_late=False) == \
        "starting"
    assert stack.engine.inspected == 0  # type: ignore[attr-defined]
    assert stack.marked_state(box("p-a1", "running", None), True, may_be_late=True) == "failed"
    stack.marked_state(box("p-a1", "running", None), True, may_be_late=True)
    assert stack.engine.inspected == 1  # type: ignore[attr-defined]  # its start, once
    assert stack.marked_state(box("p-a1", "exited", None), False, may_be_late=False) == "failed"
    assert stack.marked_state(box("p-a1", "restarting", None), True, True) == "starting"
    fresh = stack_of(Engine(ago=1), [], tmp_path, MARKED)
    assert fresh.marked_state(box("p-a1", "running", None), True, may_be_late=True) == \
        "starting"  # within its bound


def _written(tmp_path: Path, services: str) -> Path:
    path = tmp_path / "spec.yml"
    path.write_text(f"services: {services}\n")
    return path
