"""ScenarioContext.events and its users (placement, flood's limiter count, join's
joined agents), on the recorded vNet logs through a stack that only reads logs."""

from __future__ import annotations

from datetime import UTC, datetime
from ipaddress import IPv4Network
from pathlib import Path
from typing import cast

from vnetbench.addressing import plan_addresses
from vnetbench.measure.events import Source
from vnetbench.overlays.base import Overlay
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.vnet import Vnet
from vnetbench.scenarios.base import ScenarioContext
from vnetbench.scenarios.flood import limiter_count
from vnetbench.scenarios.join import joined_agents
from vnetbench.stack import Stack
from vnetbench.topology import parse_topology

LOGS = Path(__file__).resolve().parents[1] / "data" / "vnet-logs"
ROLES = {"conductor": "conductor", "switch1": "switch", "switch2": "switch",
         "agent1": "agent", "agent2": "agent", "agent3": "agent"}
LIMITER_LINES = ("2026-11-29T18:05:00.1Z [Switch] Limiter dropped 1200 packets\n"
                 "2026-11-29T18:05:01.1Z [Switch] Limiter dropped 34 packets\n")


class LogStack:
    """The part of Stack the event lookup uses: logs per role, since a time."""

    def __init__(self, sources: list[Source]) -> None:
        self.sources = sources
        self.asked: list[tuple[str | None, datetime | None]] = []

    def logs(self, role: str | None = None, since: datetime | None = None) -> list[Source]:
        self.asked.append((role, since))
        return [s for s in self.sources if role is None or s.role == role]


def recorded(extra_switch_text: str = "") -> list[Source]:
    sources = [Source(name, role, name, (LOGS / f"{name}.log").read_text())
               for name, role in ROLES.items()]
    return [*sources, Source("switch1-more", "switch", "switch1", extra_switch_text)]


def context(stack: LogStack, overlay: Overlay | None = None,
            agents: int = 4) -> ScenarioContext:
    topology = parse_topology({"name": "t", "overlay": "vnet", "switches": 2,
                               "agents": agents}, "t")
    return ScenarioContext(cast(Stack, stack), topology, overlay or Vnet(),
                           plan_addresses(topology, "run1", IPv4Network("10.189.0.0/16")),
                           Path("raw"))


def test_events_reads_only_that_roles_logs_since_the_time_asked() -> None:
    stack = LogStack(recorded())
    since = datetime(2026, 11, 29, 18, 4, tzinfo=UTC)
    frame = context(stack).events("switch", "route_learned", since=since)
    assert stack.asked == [("switch", since)]
    assert set(frame["event"]) == {"route_learned"} and set(frame["role"]) == {"switch"}
    assert len(frame) == 4


def test_events_without_a_pattern_is_empty() -> None:
    assert context(LogStack(recorded())).events("switch", "no_such_event").empty


def test_placement_follows_the_join_events() -> None:
    # the topology places agent1 on switch1; the conductor put it on switch2
    placement = context(LogStack(recorded())).placement()
    assert placement == {"agent1": "switch2", "agent2": "switch1", "agent3": "switch2",
                         "agent4": "switch1"}


def test_placement_leaves_out_agents_that_did_not_join() -> None:
    placement = context(LogStack(recorded()), agents=6).placement()
    assert sorted(placement) == ["agent1", "agent2", "agent3", "agent4"]


def test_placement_without_join_events_is_the_topologys() -> None:
    ctx = context(LogStack(recorded()), overlay=Baseline())
    assert ctx.placement() == {a.name: a.switch for a in ctx.topology.agents}


def test_limiter_count_sums_the_switches_lines() -> None:
    assert limiter_count(context(LogStack(recorded()))) is None  # nothing logged
    assert limiter_count(context(LogStack(recorded(LIMITER_LINES)))) == 1234


def test_joined_agents_first_join_each_with_its_switch() -> None:
    ctx = context(LogStack(recorded()))
    frame = ctx.events("conductor", "agent_joined")
    joined = joined_agents(frame, ctx.topology)
    assert list(joined["agent"]) == ["agent1", "agent2", "agent3", "agent4"]
    assert list(joined["switch"]) == ["switch2", "switch1", "switch2", "switch1"]
    assert "agent" not in frame.columns  # the caller's frame is left as it was
