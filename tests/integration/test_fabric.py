"""The fabric's DOCKER-USER rule lets the run's own traffic cross its routers and
nothing else: a container on another network that forges a source inside the run's
address block does not get its packets into the run's internal networks."""

from __future__ import annotations

import re
from ipaddress import ip_address

import pytest
from python_on_whales import docker

from tests.integration.conftest import leftovers
from vnetbench.deploy.testing import RunningTopology
from vnetbench.pytest_plugin import TopologyFactory
from vnetbench.runtime.images import TOOLS_IMAGE
from vnetbench.runtime.labels import ROLE, RUN

pytestmark = pytest.mark.integration
PINGS = 10


@pytest.fixture(scope="module")
def net(engine_and_images: None, vnetbench_module_topology: TopologyFactory
        ) -> RunningTopology:
    """One two-switch baseline for both tests, one bring-up and teardown instead of two.
    The forge test leaves it as it found it (its outsider network and container are
    removed, nothing of the run is touched); the detach test, which deletes the run's
    veths, is the module's last (pytest runs a module's tests in file order). The
    engine and images first (conftest's session fixture): a module's fixture is set up
    before the per-test one that otherwise brings them."""
    return vnetbench_module_topology({"name": "fabric", "switches": 2, "agents": 2},
                                     overlay="baseline")


def echoes_received(net: RunningTopology, agent: str) -> int:
    """ICMP echo requests the agent's namespace has received (its own counter)."""
    snmp = net.exec(agent, "cat /proc/net/snmp").stdout
    names, values = (line.split() for line in snmp.splitlines() if line.startswith("Icmp:"))
    return int(dict(zip(names, values, strict=True))["InEchos"])


def test_a_forged_source_from_another_network_does_not_get_in(
        net: RunningTopology) -> None:
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


def host_ports(pattern: str) -> set[str]:
    """The veths on the host's bridges whose names match the shell pattern."""
    listed = docker.run(TOOLS_IMAGE, ["sh", "-c", f"ls /sys/class/net/{pattern}/brif"],
                        networks=["host"], remove=True, pull="never")
    return {word for word in str(listed).split() if not word.endswith(":")}


def test_detach_deletes_the_runs_veths_and_only_those(net: RunningTopology) -> None:
    """The teardown's batch deletion (vnetbench-fabric detach): every veth on the run's
    bridges (2 agents, 2 routers with a site and the backbone each: 6), none elsewhere."""
    fabric = f"{net.run_id}-fabric"
    env = dict(item.split("=", 1) for item in docker.container.inspect(fabric).config.env)
    prefix = env["VNETBENCH_BRIDGES"].removesuffix("+")
    outsider = docker.network.create(f"{net.run_id}-outsider", labels={RUN: net.run_id})
    bystander = docker.run(TOOLS_IMAGE, ["sleep", "60"], networks=[outsider], detach=True,
                           remove=True, pull="never", labels={RUN: net.run_id, ROLE: "probe"})
    try:
        others = host_ports(f"br-{outsider.id[:12]}")
        assert len(host_ports(f"{prefix}*")) == 6 and len(others) == 1
        said = docker.execute(fabric, ["vnetbench-fabric", "detach"])
        assert f"deleted 6 veth(s) of bridges {prefix}+" in said
        assert host_ports(f"{prefix}*") == set()
        assert host_ports(f"br-{outsider.id[:12]}") == others  # another network's: kept
        assert "eth0" in docker.execute(bystander, ["ip", "-o", "link"])
    finally:
        docker.container.remove(bystander, force=True)
        docker.network.remove(outsider)
