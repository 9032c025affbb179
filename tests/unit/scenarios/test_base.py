"""ScenarioContext.events and its users (placement, flood's limiter count, join's
joined agents), on the recorded vNet logs through a stack that only reads logs."""

from __future__ import annotations

from datetime import UTC, datetime
from ipaddress import IPv4Network
from pathlib import Path
from typing import cast

import pytest

from vnetbench.engines.base import Source
from vnetbench.engines.stack import Stack
from vnetbench.errors import UserError
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import parse_topology
from vnetbench.overlays import OVERLAY_NAMES, overlay_for
from vnetbench.overlays.base import Overlay
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.vnet import Vnet
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.base import ScenarioContext
from vnetbench.scenarios.flood import limiter_count
from vnetbench.scenarios.join import joined_agents

LOGS = Path(__file__).resolve().parents[2] / "data" / "vnet-logs"
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


TEAMS = {"name": "teams", "switches": 2,
         "agents": [{"name": f"team-{i:02d}", "switch": f"switch{1 + i % 2}"}
                    for i in range(1, 38)],
         "measure": {"from": "team-01", "to": "team-37"}}


@pytest.mark.parametrize("scenario", ["join", "flood"])
def test_a_room_drops_the_measure_pair_its_agents_no_longer_have(scenario: str) -> None:
    """join's room (and flood's, when it adds agents) has agents of its own: the user's
    measure (team-01 -> team-37) made its validation fail mid-run with a traceback."""
    data = ({**TEAMS, "agents": TEAMS["agents"][:2],
             "measure": {"from": "team-01", "to": "team-02"}} if scenario == "flood" else TEAMS)
    topology = parse_topology(data, "t", overlays=OVERLAY_NAMES)
    chosen = get_scenario(scenario)
    chosen.check(topology)
    room = chosen.stack_topology(topology, overlay_for(topology))
    assert room.measure is None and len(room.agents) > len(topology.agents)
    assert room.agents[0].name == "agent1"


def test_a_room_kept_with_its_agents_keeps_its_measure_pair() -> None:
    topology = parse_topology(TEAMS, "t", overlays=OVERLAY_NAMES)
    room = get_scenario("flood").stack_topology(topology, overlay_for(topology))
    assert room.measure == topology.measure


def test_a_room_too_big_for_the_overlay_is_one_paragraph_before_anything_starts() -> None:
    """join of 5000 on WireGuard: one container per client, 2500 per site, more than a
    bridge's ports; pydantic's raw text came out after the run directory was made."""
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2, "overlay": "wireguard",
                               "settings": {"machines": 5000}}, "t", overlays=OVERLAY_NAMES)
    with pytest.raises(UserError) as raised:
        get_scenario("join").check(topology)
    text = str(raised.value)
    assert "5000 machines (settings.machines, --machines" in text
    assert "5000 agents are more than 2000: 2 switch(es) take at most 1000" in text
    assert "\n" not in text and "pydantic" not in text


def test_a_big_vnet_room_is_pooled_within_the_largest_pool() -> None:
    """Auto pools of machines/40 went past agent_pool's 100 (10000 machines: 250)."""
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2, "overlay": "vnet",
                               "settings": {"machines": 10000}}, "t", overlays=OVERLAY_NAMES)
    get_scenario("join").check(topology)
    room = get_scenario("join").stack_topology(topology, overlay_for(topology))
    assert room.agent_pool == 100 and len(room.agent_containers()) == 100
