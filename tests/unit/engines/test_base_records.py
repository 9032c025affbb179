"""What the interface derives from its own records (Engine.health_started from an
inspection's ContainerRecord), whatever engine made them."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from vnetbench.engines.base import ContainerRecord, Engine, Listed

STARTED = datetime(2026, 12, 1, 12, 12, 1, tzinfo=UTC)
LISTED = Listed("id1", "p-agent1", "running", "starting", {})


def test_a_container_s_start_and_start_period_are_its_record_s() -> None:
    record = ContainerRecord("id1", "p-agent1", {}, {}, True, False, 0, STARTED, None, 5.0)
    engine = SimpleNamespace(inspect=lambda containers: [record])
    assert Engine.health_started(engine, LISTED) == (STARTED, 5.0)  # type: ignore[arg-type]


def test_a_gone_container_has_no_start() -> None:
    engine = SimpleNamespace(inspect=lambda containers: [])
    assert Engine.health_started(engine, LISTED) == (None, 0.0)  # type: ignore[arg-type]
