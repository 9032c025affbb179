"""flood with agents that did not join: a failed pass that says who joined where, never
an exit of the whole run (vNet's public snapshot loses joins under load)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vnetbench.core.outcome import State
from vnetbench.errors import UserError
from vnetbench.model.topology import parse_topology
from vnetbench.scenarios.flood import pick_roles, unplaced

TOPOLOGY = parse_topology({"name": "it-vnet", "switches": 2, "agents": 4}, "t")


def test_the_topology_places_the_roles_but_the_joined_agents_may_not() -> None:
    static = {a.name: a.switch for a in TOPOLOGY.agents}
    assert pick_roles(TOPOLOGY, static) is not None
    joined = {"agent1": "switch1", "agent3": "switch1"}  # agent2 and agent4 never joined
    with pytest.raises(UserError):
        pick_roles(TOPOLOGY, joined)


def test_a_pass_with_too_few_joined_agents_is_failed_and_says_who_joined() -> None:
    context = SimpleNamespace(topology=TOPOLOGY,
                              overlay=SimpleNamespace(agent_limits=lambda topology: None))
    result = unplaced(context, {"agent3": "switch2", "agent1": "switch1"})  # type: ignore[arg-type]
    assert result.state is State.FAILED
    assert result.status == ("nothing to flood: 2 of 4 agents joined (agent1 on switch1, "
                             "agent3 on switch2), and the flood needs two on one switch and "
                             "one on another")
    assert result.metrics["flood_packets_sent"] == (None, "count")  # no figure
    assert result.metrics["pings_answered"] == (None, "count")
