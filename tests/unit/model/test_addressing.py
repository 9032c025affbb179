"""The address plan at every size the topology model accepts: every address unique
and inside its network, for the run's Docker networks and inside every overlay."""

from __future__ import annotations

import json
import re
from collections import Counter
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vnetbench.engines.swarm.deployment import dynamic_range
from vnetbench.errors import UserError
from vnetbench.model.addressing import (
    BLOCK_POOL,
    HUB_LINKS,
    TUNNEL_NETWORK,
    AddressPlan,
    plan_addresses,
    tunnel_addresses,
    tunnel_sites,
)
from vnetbench.model.topology import MAX_AGENTS_PER_SITE, Topology, parse_topology
from vnetbench.overlays import OVERLAY_NAMES, overlay_for
from vnetbench.overlays.openvpn import SITE_LINKS
from vnetbench.overlays.vnet.profile import load_profile

MAX_SWITCHES = next(m.max_length for m in Topology.model_fields["switches"].metadata
                    if hasattr(m, "max_length"))  # 15
DEVICE_ADDRESS = re.compile(r"ip address add (100\.64\.[\d.]+)/(\d+) dev wg0")
MAX_POOL = 100  # Topology.agent_pool's le
BLOCKS = list(BLOCK_POOL.subnets(new_prefix=16))
# Examples are few but large (up to 15 x 1000 agents, up to 3 s each with every
# overlay's plan), the same ones every run (derandomize: a failure is reproducible,
# never a fluke), plus the edges as explicit examples: sizes past a /24 are what broke
# (2 x 300 agents). 12, not 25: the unit suite must stay about a minute.
FEW = settings(max_examples=12, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.too_slow])


def topology_of(counts: list[int], pool: int = 1, overlay: str = "baseline") -> Topology:
    """Switch k holds counts[k] agent containers of `pool` agents each, listed switch
    by switch (so a site's agents are not interleaved with another's)."""
    switches = [f"s{k + 1}" for k in range(len(counts))]
    agents = [{"name": f"a{k + 1}-{i}", "switch": switch}
              for k, (switch, count) in enumerate(zip(switches, counts, strict=True))
              for i in range(count * pool)]
    return parse_topology({"name": "t", "switches": switches, "agents": agents,
                           "agent_pool": pool, "overlay": overlay}, "t.yml")


def host_of(address: IPv4Address, network: IPv4Network) -> bool:
    """Inside the network and neither its network nor its broadcast address (one
    comparison: half a million calls a run)."""
    return network.network_address < address < network.broadcast_address


def assert_unique(addresses: dict[str, IPv4Address], what: str) -> None:
    shared = [str(a) for a, n in Counter(addresses.values()).items() if n > 1]
    assert not shared, f"{what}: {shared[:5]} given to more than one node"


def check_site_plan(topology: Topology, plan: AddressPlan) -> None:
    networks = [network.subnet for network in plan.networks]
    assert all(subnet.subnet_of(plan.block) for subnet in networks)
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1:])
    assert not plan.block.overlaps(TUNNEL_NETWORK)
    backbone = {"conductor": plan.conductor} | {f"bb-{s}": a
                                               for s, a in plan.switch_backbone.items()}
    assert_unique(backbone, "backbone")
    assert all(host_of(a, plan.backbone.subnet) for a in backbone.values())
    assert not any(a in dynamic_range(plan.backbone.subnet) for a in backbone.values())
    containers = topology.agent_containers()
    assert set(plan.agent_site) == {a.name for a in topology.agents}
    assert all(plan.agent_site[a] == plan.container_site[c.name]
               for c in containers for a in c.agents)
    for switch in topology.switches:
        subnet = plan.sites[switch].subnet
        site = {c.name: plan.container_site[c.name] for c in containers
                if c.switch == switch} | {f"router-{switch}": plan.switch_site[switch]}
        assert_unique(site, f"site {switch}")
        assert all(host_of(a, subnet) and a != subnet.network_address + 1  # Docker's
                   for a in site.values()), f"site {switch} outside {subnet}"
        assert max(site.values()) < dynamic_range(subnet).network_address  # the swarm's


def check_tunnel_plan(topology: Topology, addresses: dict[str, IPv4Address]) -> None:
    sites = tunnel_sites(topology)
    nets = list(sites.values())
    assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    assert all(site.subnet_of(TUNNEL_NETWORK) and not site.overlaps(HUB_LINKS)
               for site in nets)
    assert_unique(addresses, "tunnel")
    for node, address in addresses.items():
        assert host_of(address, TUNNEL_NETWORK) and address not in HUB_LINKS, node
    for switch, site in sites.items():
        assert host_of(addresses[switch], site)
        assert all(host_of(addresses[a.name], site) for a in topology.agents_on(switch))


def check_vnet(topology: Topology, addresses: dict[str, IPv4Address]) -> None:
    profile = load_profile()
    assert_unique(addresses, "vnet")
    assert len(addresses) == len(topology.agents)
    for address in addresses.values():
        tun = IPv4Network(f"{address}/{profile.tun_prefix}", strict=False)
        assert host_of(address, profile.virtual_network) and host_of(address, tun)
    assert not profile.virtual_network.overlaps(BLOCK_POOL)
    assert not profile.virtual_network.overlaps(TUNNEL_NETWORK)


site_counts = st.lists(st.integers(1, MAX_AGENTS_PER_SITE), min_size=1, max_size=MAX_SWITCHES)


@FEW
@given(counts=site_counts, block=st.sampled_from(BLOCKS))
@example(counts=[300, 300], block=BLOCKS[0])
@example(counts=[MAX_AGENTS_PER_SITE] * MAX_SWITCHES, block=BLOCKS[-1])
@example(counts=[245] * MAX_SWITCHES, block=BLOCKS[1])
@example(counts=[246, 1, MAX_AGENTS_PER_SITE], block=BLOCKS[2])
def test_every_address_is_unique_and_inside_its_network(counts: list[int],
                                                        block: IPv4Network) -> None:
    """One agent per container (the tunnel overlays' only form): the run's networks,
    the tunnels' addresses of every comparison overlay, vNet's virtual addresses."""
    topology = topology_of(counts)
    check_site_plan(topology, plan_addresses(topology, "r", block))
    for name in OVERLAY_NAMES:
        addresses = overlay_for(topology, name).overlay_addresses(topology)
        if name == "vnet":
            check_vnet(topology, addresses)
        elif addresses:
            check_tunnel_plan(topology, addresses)
    hubs = [SITE_LINKS.network_address + 1 + k for k in range(len(counts))]
    assert all(host_of(hub, SITE_LINKS) for hub in hubs)  # openvpn: links + 1, + index


@settings(max_examples=8, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(switches=st.integers(1, MAX_SWITCHES), containers=st.integers(1, 60),
       pool=st.integers(2, MAX_POOL))
def test_pooled_agents_fit_or_are_refused(switches: int, containers: int, pool: int) -> None:
    """Pools put up to 100 agents in a container (vNet; the tunnel overlays refuse
    pools, but the plan still holds or says why not). Container counts are kept to 60
    a site (up to 90000 agents, ~1 s an example): sites hold containers, which the
    test above takes to the maximum."""
    topology = topology_of([containers] * switches, pool)
    check_site_plan(topology, plan_addresses(topology, "r", BLOCKS[0]))
    try:
        check_vnet(topology, overlay_for(topology, "vnet").overlay_addresses(topology))
    except UserError as error:
        assert "does not fit" in str(error)
        assert len(topology.agents) > 254 * 255  # 10.0.1.1 to 10.0.255.254, no .0 or .255
    try:
        addresses = tunnel_addresses(topology)
    except UserError as error:
        assert "do not fit the tunnels' addresses" in str(error)
        # sites of one size tile 100.64.0.0/16 from the second below HUB_LINKS (.250.0)
        room = 250 * 256 // (switches + 1)
        assert containers * pool > 2 ** (room.bit_length() - 1) - 11  # hub .1, agents .10
    else:
        check_tunnel_plan(topology, addresses)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(index=st.integers(0, 70_000))
@example(index=253)
@example(index=254)
@example(index=254 * 255 - 1)
@example(index=254 * 255)
def test_vnet_addresses_are_hosts_of_their_tun_subnet_or_refused(index: int) -> None:
    """Agent k's virtual address, up to past the end of vNet's network: a host of its
    agent's /24 (vNet puts it on the TUN device so), or a UserError."""
    profile = load_profile()
    try:
        address = profile.virtual_address(index)
    except UserError as error:
        assert "does not fit" in str(error)
        assert index >= 254 * 255  # 10.0.1.1 to 10.0.255.254 without .0 and .255
        return
    tun = IPv4Network(f"{address}/{profile.tun_prefix}", strict=False)
    assert host_of(address, tun) and host_of(address, profile.virtual_network)
    assert index == 0 or profile.virtual_address(index - 1) < address  # one each, in order


def test_goldens_sizes_keep_their_addresses() -> None:
    """Up to 245 agents a site, switch k's tunnel subnet is 100.64.k.0/24, as before."""
    topology = topology_of([245, 3])
    addresses = tunnel_addresses(topology)
    assert str(addresses["s1"]) == "100.64.1.1" and str(addresses["a1-0"]) == "100.64.1.10"
    assert str(addresses["a1-244"]) == "100.64.1.254" and str(addresses["a2-0"]) == "100.64.2.10"
    assert str(load_profile().virtual_address(253)) == "10.0.1.254"


def test_six_hundred_agents_on_two_switches_render_with_unique_addresses(
        tmp_path: Path) -> None:
    """The case that broke: 300 agents a site overflowed each site's /24 into the next,
    and two agents were given 100.64.2.50. Rendered as a run is (compose file and
    WireGuard's configs, no engine)."""
    from vnetbench.deploy.render import render_run

    topology = parse_topology({"name": "big", "switches": 2, "agents": 600,
                               "overlay": "wireguard"}, "t.yml")
    rendered = render_run(topology, overlay_for(topology), "big", BLOCKS[3], tmp_path)
    # libyaml's parser when PyYAML has it (1.35 s to 0.36 s here, the same document);
    # each service searched as JSON (a string never folded across lines, as a dump might)
    compose = yaml.load(rendered.compose_file.read_text(),
                        Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    devices = {name: DEVICE_ADDRESS.findall(json.dumps(service))
               for name, service in compose["services"].items()}
    devices = {name: found for name, found in devices.items() if found}
    assert len(devices) == 602 and all(len(found) == 1 for found in devices.values())
    tunnel = [IPv4Address(found[0][0]) for found in devices.values()]
    assert len(set(tunnel)) == 602  # hubs and agents, one address each
    assert {int(found[0][1]) for found in devices.values()} == {TUNNEL_NETWORK.prefixlen}
    sites = tunnel_sites(topology)
    peers = [line.split("=", 1)[1].strip() for conf in tmp_path.glob("wireguard/s*/wg0.conf")
             for line in conf.read_text().splitlines() if line.startswith("AllowedIPs")]
    agents = [IPv4Address(p.removesuffix("/32")) for p in peers if p.endswith("/32")]
    assert len(agents) == len(set(agents)) == 600
    assert all(any(host_of(a, site) for site in sites.values()) for a in agents)
    hubs = {IPv4Network(p) for p in peers if not p.endswith("/32")}
    assert hubs == set(sites.values()) and all(s.prefixlen == 23 for s in hubs)


def test_a_block_inside_the_tunnels_is_refused() -> None:
    topology = topology_of([2, 2])
    with pytest.raises(UserError, match=r"overlaps 100\.64\.0\.0/16"):
        plan_addresses(topology, "r", IPv4Network("100.64.0.0/16"))


def test_openvpn_serves_and_routes_each_site_s_whole_subnet(tmp_path: Path) -> None:
    """Its hubs' server lines and the first hub's routes took a /24 from each hub's
    address: with 300 agents a site, agents beyond .255 were outside their hub's subnet."""
    topology = parse_topology({"name": "big", "switches": 2, "agents": 600,
                               "overlay": "openvpn"}, "t.yml")
    overlay = overlay_for(topology)
    plan = plan_addresses(topology, "big", BLOCKS[3])
    served = overlay.client_server(topology, plan, "switch2")
    assert "ifconfig 100.64.4.1 255.255.254.0" in served  # switch2's /23: 100.64.4.0/23
    overlay.site_links(topology, plan, tmp_path)
    core = (tmp_path / "hub-switch1" / "site.conf").read_text()
    assert "route 100.64.4.0 255.255.254.0" in core
    iroute = (tmp_path / "hub-switch1" / "ccd-site" / "hub-switch2").read_text()
    assert "iroute 100.64.4.0 255.255.254.0" in iroute


def test_after_a_refusal_two_runs_are_unlikely_to_choose_the_same_block() -> None:
    """Two runs refused the same block at once both look for another: the lowest free
    one would put them on the same block again (the race of test_faults); one of the
    first 16 at random, each process its own, mostly not."""
    from ipaddress import IPv4Network

    from vnetbench.model.addressing import free_block

    used = [IPv4Network("10.160.0.0/16")]
    assert free_block(used) == IPv4Network("10.161.0.0/16")  # first choice: the lowest
    picks = [free_block(used, among=16) for _ in range(200)]
    assert all(not p.overlaps(used[0]) for p in picks)
    assert len(set(picks)) > 8  # 200 draws of 16: all but a few seen
    same = sum(a == b for a, b in zip(picks[::2], picks[1::2], strict=True))
    assert same < 30  # pairs drawn alike: 1 in 16 expected (~6 of 100), far from all
