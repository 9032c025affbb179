"""Where the room's time went, on a real engine: a small room on a lossy site link.
The loss is the mechanism's (an iptables `statistic` rule on each receiving side,
this kernel having no netem): its shapers must count what they dropped, and the
machines' TCP must have retransmitted it. No bound on a speed: only counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.conftest import leftovers
from vnetbench.model.topology import parse_topology
from vnetbench.runs.session import run_scenarios
from vnetbench.scenarios import get_scenario

pytestmark = pytest.mark.integration

MACHINES, RATE, SECONDS, LOSS = 4, 20, 3, "5%"


def test_a_lossy_links_drops_and_the_retransmissions_they_caused(tmp_path: Path) -> None:
    topology = parse_topology(
        {"name": "it-room-lossy", "switches": 2, "agents": 2,
         "links": {"site": {"loss": LOSS}},
         "settings": {"passes": 1, "seconds": SECONDS, "machines": MACHINES,
                      "room_rate": RATE}}, "test", overrides={})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    [kept] = directory.rglob("room-pass1-counters.json")
    counters = json.loads(kept.read_text())
    assert counters["unread"] == {}, counters["unread"]
    # only the site links are shaped (the backbone is not): each of their interfaces,
    # the machines', the server's and the switches', has the loss rule; 4 machines x 20/s
    # x 3 s of requests, each a few packets each way at 5 % a crossing, drop some
    assert counters["links"] and all(link["link"].startswith("site ")
                                     for link in counters["links"])
    assert sum(link["loss_drops"] for link in counters["links"]) > 0
    machines = [tcp for tcp in counters["tcp"] if tcp["role"] == "machine"]
    assert len(machines) == MACHINES
    assert sum(tcp["retrans_segs"] for tcp in machines) > 0
    tail = counters["attribution"][0]
    assert tail.startswith("Where the time went") and "loss rule" in tail, tail
