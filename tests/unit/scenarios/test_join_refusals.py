"""join's wait ends early only when it can only run out: every agent still missing was
refused by a server (vNet's snapshot: its agent does not try again), and stayed so for
the grace an agent that does try again would need (scenarios/join.py: Refusals)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from vnetbench.scenarios import join
from vnetbench.scenarios.join import REFUSED_GRACE_S, STALLED_S, Refusals

AGENTS = ("agent1", "agent2", "agent3")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def refusals(monkeypatch: pytest.MonkeyPatch, refused: set[str]) -> tuple[Refusals, Clock,
                                                                          list[int]]:
    clock, reads = Clock(), []

    def why_not_joined(events: Any, missing: set[str]) -> dict[str, str]:
        reads.append(1)
        events("switch", "agent_rejected")  # read through the context, from the release
        return {agent: "refused by switch1" for agent in missing & refused}

    context = SimpleNamespace(
        topology=SimpleNamespace(agents=[SimpleNamespace(name=a) for a in AGENTS]),
        overlay=SimpleNamespace(why_not_joined=why_not_joined),
        events=lambda role, event, since: None)
    monkeypatch.setattr(join.time, "monotonic", clock)
    return Refusals(context, datetime.now(UTC)), clock, reads  # type: ignore[arg-type]


def test_every_missing_agent_refused_ends_the_wait_after_the_grace(
        monkeypatch: pytest.MonkeyPatch) -> None:
    found, clock, reads = refusals(monkeypatch, {"agent3"})
    assert not found.settled({"agent1", "agent2"})  # joins just came: no log read
    assert reads == []
    clock.now += STALLED_S
    assert not found.settled({"agent1", "agent2"})  # all refused from now on
    assert reads == [1]
    clock.now += REFUSED_GRACE_S - 0.5
    assert not found.settled({"agent1", "agent2"})
    clock.now += 0.5
    assert found.settled({"agent1", "agent2"})


def test_a_missing_agent_not_refused_keeps_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    found, clock, reads = refusals(monkeypatch, {"agent3"})
    for _ in range(20):
        clock.now += STALLED_S
        assert not found.settled({"agent1"})  # agent2 missing, never refused
    assert len(reads) == 19  # read every STALLED_S once agent1's join was seen


def test_a_join_after_the_refusals_starts_the_grace_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    found, clock, _ = refusals(monkeypatch, {"agent2", "agent3"})
    clock.now += STALLED_S
    assert not found.settled({"agent1"})  # agent2 and agent3 refused
    clock.now += REFUSED_GRACE_S - 1
    assert not found.settled({"agent1", "agent2"})  # agent2 tried again and joined
    clock.now += 1.5
    assert not found.settled({"agent1", "agent2"})  # no log read yet since the join
    clock.now += STALLED_S
    assert not found.settled({"agent1", "agent2"})  # read: agent3 refused, grace anew
    clock.now += REFUSED_GRACE_S
    assert found.settled({"agent1", "agent2"})
