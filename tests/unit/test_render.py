"""Golden files: compose/ must equal what the templates render, and every
rendered object carries the run's label."""

import os
from ipaddress import IPv4Network
from pathlib import Path

import pytest
import yaml

from vnetbench.addressing import free_block, plan_addresses
from vnetbench.examples import COMPOSE_DIR, EXAMPLE_BLOCKS, render_example
from vnetbench.images import ImageSet
from vnetbench.render import render_compose
from vnetbench.topology import parse_topology


@pytest.mark.parametrize("name", sorted(EXAMPLE_BLOCKS))
def test_committed_compose_matches_templates(name: str) -> None:
    committed = (COMPOSE_DIR / f"{name}.yml").read_text()
    assert committed == render_example(name), (
        f"compose/{name}.yml differs from what the templates render: run 'make compose'")


def render(topology_data: dict, run_id: str = "r1", block: str = "10.170.0.0/16") -> dict:
    topology = parse_topology(topology_data, "t.yml")
    plan = plan_addresses(topology, run_id, IPv4Network(block))
    return yaml.safe_load(render_compose(topology, run_id, plan, ImageSet()))


def test_every_service_and_network_is_labelled_and_networks_internal() -> None:
    compose = render({"name": "t", "switches": 3, "agents": 5}, run_id="run-x")
    assert compose["name"] == "run-x"
    assert len(compose["services"]) == 1 + 3 + 5  # fabric, routers, agents
    for service in compose["services"].values():
        assert service["labels"]["vnetbench.run"] == "run-x"
        assert service.get("privileged") is not True
    for network in compose["networks"].values():
        assert network["labels"]["vnetbench.run"] == "run-x"
        assert network["internal"] is True
        assert len(network["driver_opts"]["com.docker.network.bridge.name"]) <= 15


def test_subnets_inside_block_and_disjoint() -> None:
    compose = render({"name": "t", "switches": 4, "agents": 8}, block="10.171.0.0/16")
    subnets = [IPv4Network(n["ipam"]["config"][0]["subnet"]) for n in compose["networks"].values()]
    block = IPv4Network("10.171.0.0/16")
    assert all(s.subnet_of(block) for s in subnets)
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1:])


def test_agents_route_through_their_own_router() -> None:
    compose = render({"name": "t", "switches": 2,
                      "agents": [{"name": "a", "switch": "switch2"}]})
    agent = compose["services"]["a"]
    router = compose["services"]["router-switch2"]
    router_site_ip = router["networks"]["site_switch2"]["ipv4_address"]
    assert f"via {router_site_ip}" in agent["command"][2]
    assert router["sysctls"]["net.ipv4.ip_forward"] == "1"


def test_free_block_skips_used_subnets() -> None:
    used = [IPv4Network(s) for s in ("10.160.5.0/24", "10.161.0.0/16", "172.17.0.0/16")]
    assert free_block(used) == IPv4Network("10.162.0.0/16")


GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
GOLDEN_OPTIONS = {"vnet": {"images": {"conductor": "golden/vnet-conductor",
                                      "switch": "golden/vnet-switch",
                                      "agent": "golden/vnet-agent"}}}


@pytest.mark.parametrize("overlay", ["baseline", "vnet", "wireguard", "openvpn", "tinc"])
def test_each_overlay_renders_its_golden_file(overlay: str) -> None:
    """The two-sites topology per overlay; VNETBENCH_UPDATE_GOLDEN=1 rewrites them."""
    topology = parse_topology({"name": "two-sites", "overlay": overlay, "switches": 2,
                               "agents": 4, "overlay_options": GOLDEN_OPTIONS}, "golden")
    plan = plan_addresses(topology, "golden", IPv4Network("10.189.0.0/16"))
    text = render_compose(topology, "golden", plan, ImageSet())
    path = GOLDEN / f"{overlay}.yml"
    if os.environ.get("VNETBENCH_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs: check, then VNETBENCH_UPDATE_GOLDEN=1"
    compose = yaml.safe_load(text)
    for service in compose["services"].values():
        assert service["labels"]["vnetbench.run"] == "golden"
        assert service.get("privileged") is not True
        if "devices" in service:  # TUN only with NET_ADMIN, never privileged
            assert service["cap_add"] == ["NET_ADMIN"]
