"""The fabric's DOCKER-USER rule lets the run's own traffic cross its routers and
nothing else: a container on another network that forges a source inside the run's
address block does not get its packets into the run's internal networks."""

from __future__ import annotations

import re
from ipaddress import ip_address

import pytest
from python_on_whales import docker

from tests.integration.conftest import leftovers
from vnetbench.images import TOOLS_IMAGE
from vnetbench.labels import ROLE, RUN
from vnetbench.pytest_plugin import TopologyFactory
from vnetbench.testing import RunningTopology

pytestmark = pytest.mark.integration
PINGS = 10


def echoes_received(net: RunningTopology, agent: str) -> int:
    """ICMP echo requests the agent's namespace has received (its own counter)."""
    snmp = net.exec(agent, "cat /proc/net/snmp").stdout
    names, values = (line.split() for line in snmp.splitlines() if line.startswith("Icmp:"))
    return int(dict(zip(names, values, strict=True))["InEchos"])


def test_a_forged_source_from_another_network_does_not_get_in(
        vnetbench_topology: TopologyFactory) -> None:
    net = vnetbench_topology({"name": "forge", "switches": 2, "agents": 2},
                             overlay="baseline")
    target = net.address("agent2")
    assert net.ping("agent1", "agent2", count=PINGS, interval_s=0.05).received == PINGS
    before = echoes_received(net, "agent2")
    assert before >= PINGS  # the counter counts the run's own pings
    forged = str(ip_address(target) + 100)  # inside the run's block, on no container
    outsider = docker.network.create(f"{net.run_id}-outsider", labels={RUN: net.run_id})
    try:
        said = docker.run(TOOLS_IMAGE, ["sh", "-c", (
            f"ip address add {forged}/32 dev eth0 && ip route get {target} from {forged}; "
            f"ping -c {PINGS} -i 0.05 -W 1 -I {forged} {target}; true")],
            networks=[outsider], cap_add=["NET_ADMIN", "NET_RAW"], remove=True, pull="never",
            labels={RUN: net.run_id, ROLE: "probe"})
    finally:
        docker.network.remove(outsider)
    assert re.search(rf"{re.escape(target)} from {re.escape(forged)} ", str(said)), said
    assert echoes_received(net, "agent2") == before, "forged packets reached the agent"
    assert leftovers(net.run_id) != []  # still up: the fixture tears it down
