"""The address plan: which subnet each network gets and which address each node.

A run owns one /16 block. The backbone is its first /24; switch k's site
network is the k-th /20 after it, so 15 sites of up to 1000 agent containers
fit. Inside the comparison overlays' tunnels (TUNNEL_NETWORK), switch k's site
is the k-th subnet of a size that holds its agents (tunnel_sites).
Pure functions of the topology, the run id and the block: rendering the same
inputs twice gives the same files (golden tests rely on it).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.model.topology import Topology

BLOCK_POOL = IPv4Network("10.160.0.0/11")  # 32 blocks of /16 for concurrent runs
TUNNEL_NETWORK = IPv4Network("100.64.0.0/16")  # inside tunnels; never on a Docker network
SITE_PREFIX = 20
ROUTER_HOST = 2  # .1 is the Docker bridge's own address
FIRST_AGENT_HOST = 10


@dataclass(frozen=True)
class Network:
    key: str  # name inside the compose file
    subnet: IPv4Network
    bridge: str  # Linux bridge name on the host, for host-side shaping
    segment: str  # "site" or "backbone": which link profile applies


@dataclass(frozen=True)
class AddressPlan:
    block: IPv4Network
    backbone: Network
    sites: dict[str, Network]  # by switch name
    switch_backbone: dict[str, IPv4Address]
    switch_site: dict[str, IPv4Address]
    agent_site: dict[str, IPv4Address]  # by agent; pooled agents share their container's
    container_site: dict[str, IPv4Address]  # by agent container
    conductor: IPv4Address
    tag: str  # short and stable per run (the bridge prefix): names and derived keys

    @property
    def networks(self) -> list[Network]:
        return [self.backbone, *self.sites.values()]


def bridge_prefix(run_id: str) -> str:
    """Short, stable, per-run prefix for Linux bridge names (15 chars max)."""
    return "vb" + hashlib.sha256(run_id.encode()).hexdigest()[:6]


# Where a run's block may lie: the private ranges (RFC 1918) and the one set aside for
# benchmarks (RFC 2544). A public, loopback or multicast block would hide those
# addresses from the containers, or not be routed at all.
BLOCK_RANGES = tuple(IPv4Network(r) for r in ("10.0.0.0/8", "172.16.0.0/12",
                                              "192.168.0.0/16", "198.18.0.0/15"))


def block_problem(block: IPv4Network) -> str:
    """Why `block` cannot be a run's address block ('' when it can)."""
    if block.prefixlen != 16:
        return "a run's address block is a /16"
    if block.overlaps(TUNNEL_NETWORK):
        return f"it overlaps {TUNNEL_NETWORK}, the addresses inside the overlays' tunnels"
    if not any(block.subnet_of(allowed) for allowed in BLOCK_RANGES):
        return ("it is not in a private range (" + ", ".join(map(str, BLOCK_RANGES)) +
                "): the containers would lose those addresses")
    return ""


def plan_addresses(topology: Topology, run_id: str, block: IPv4Network) -> AddressPlan:
    problem = block_problem(block)
    if problem:
        raise UserError(f"The address block {block} cannot be used: {problem}. Give "
                        "another /16, e.g. 10.190.0.0/16.")
    prefix = bridge_prefix(run_id)
    subnets = list(block.subnets(new_prefix=SITE_PREFIX))
    backbone_subnet = next(subnets[0].subnets(new_prefix=24))
    backbone = Network("backbone", backbone_subnet, f"{prefix}-bb", "backbone")
    sites: dict[str, Network] = {}
    switch_site: dict[str, IPv4Address] = {}
    switch_backbone: dict[str, IPv4Address] = {}
    agent_site: dict[str, IPv4Address] = {}
    container_site: dict[str, IPv4Address] = {}
    containers = topology.agent_containers()
    for index, switch in enumerate(topology.switches):
        subnet = subnets[index + 1]
        sites[switch] = Network(f"site_{switch}", subnet, f"{prefix}-s{index + 1}", "site")
        switch_site[switch] = subnet.network_address + ROUTER_HOST
        switch_backbone[switch] = backbone_subnet.network_address + FIRST_AGENT_HOST + index
        on_site = [c for c in containers if c.switch == switch]
        for slot, container in enumerate(on_site):
            address = subnet.network_address + FIRST_AGENT_HOST + slot
            container_site[container.name] = address
            agent_site.update(dict.fromkeys(container.agents, address))
    return AddressPlan(
        block=block,
        backbone=backbone,
        sites=sites,
        switch_backbone=switch_backbone,
        switch_site=switch_site,
        agent_site=agent_site,
        container_site=container_site,
        conductor=backbone_subnet.network_address + ROUTER_HOST,
        tag=prefix,
    )


def free_blocks(used: list[IPv4Network], pool: IPv4Network = BLOCK_POOL
                ) -> Iterator[IPv4Network]:
    """The /16s of the pool that overlap no subnet already in use, lowest first."""
    for candidate in pool.subnets(new_prefix=16):
        if not any(candidate.overlaps(subnet) for subnet in used):
            yield candidate


def free_block(used: list[IPv4Network], pool: IPv4Network = BLOCK_POOL,
               among: int = 1) -> IPv4Network:
    """The first /16 of the pool that overlaps no subnet already in use; with `among`
    > 1, one of the first `among` free ones at random (two runs refused the same block
    at once would otherwise both move to the same next one, and collide again)."""
    found = list(itertools.islice(free_blocks(used, pool), among))
    if found:
        return found[0] if among == 1 else random.SystemRandom().choice(found)
    raise EnvironmentProblem(
        f"Every /16 block of {pool} overlaps a Docker network already present, so "
        "this run has no address space. Remove finished runs with 'vnetbench clean' "
        "(or unused networks with 'docker network prune') and run again."
    )


# Links between hubs (OpenVPN's site links): no site's tunnel subnet may reach it.
HUB_LINKS = IPv4Network("100.64.250.0/24")
TUNNEL_HUB_HOST = 1
SITE_TUNNEL_PREFIX = 24  # while a site's agents fit a /24: 100.64.k.0/24 for switch k


def site_tunnel_prefix(agents: int) -> int:
    """The longest prefix, /24 at most, whose subnet holds a hub at .1 and `agents`
    from .10, all below its broadcast address."""
    prefix = SITE_TUNNEL_PREFIX
    while FIRST_AGENT_HOST + agents > 2 ** (32 - prefix) - 1:
        prefix -= 1
    return prefix


def tunnel_sites(topology: Topology) -> dict[str, IPv4Network]:
    """Switch k's subnet inside the tunnels: the k-th of TUN subnets of one size, the
    size that holds the most agents any site has (a /24 up to 245 agents, a /22 for
    1000), so the sites tile TUNNEL_NETWORK below HUB_LINKS."""
    most = max(len(topology.agents_on(switch)) for switch in topology.switches)
    prefix = site_tunnel_prefix(most)
    size = 2 ** (32 - prefix)
    sites = {switch: IPv4Network((int(TUNNEL_NETWORK.network_address) + (index + 1) * size,
                                  prefix))
             for index, switch in enumerate(topology.switches)}
    last = sites[topology.switches[-1]]
    if not last.subnet_of(TUNNEL_NETWORK) or last.broadcast_address >= HUB_LINKS.network_address:
        room = (int(HUB_LINKS.network_address) - int(TUNNEL_NETWORK.network_address)) // (
            len(topology.switches) + 1)
        fits = 2 ** (room.bit_length() - 1) - 1 - FIRST_AGENT_HOST
        raise UserError(
            f"{most} agents on one switch do not fit the tunnels' addresses: they need a "
            f"/{prefix} per site, and {len(topology.switches)} site(s) of that size (from "
            f"the second of {TUNNEL_NETWORK}) reach {HUB_LINKS}, the links between hubs. "
            f"Give at most {fits} agents per switch with {len(topology.switches)} "
            "switch(es) (add switches for more).")
    return sites


def tunnel_addresses(topology: Topology) -> dict[str, IPv4Address]:
    """Addresses inside a comparison overlay's tunnels: switch k's hub at the first host
    of its tunnel_sites subnet, its agents from host 10 (100.64.k.1 and 100.64.k.10 on,
    for sites of up to 245 agents); every tunnel device holds TUNNEL_NETWORK's prefix."""
    addresses: dict[str, IPv4Address] = {}
    for switch, site in tunnel_sites(topology).items():
        addresses[switch] = site.network_address + TUNNEL_HUB_HOST
        for slot, agent in enumerate(topology.agents_on(switch)):
            addresses[agent.name] = site.network_address + FIRST_AGENT_HOST + slot
    return addresses
