"""The address plan: which subnet each network gets and which address each node.

A run owns one /16 block. The backbone is its first /24; switch k's site
network is the k-th /20 after it, so 15 sites of up to 1000 agents fit.
Pure functions of the topology, the run id and the block: rendering the same
inputs twice gives the same files (golden tests rely on it).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

from vnetbench.errors import UserError
from vnetbench.topology import Topology

BLOCK_POOL = IPv4Network("10.160.0.0/11")  # 32 blocks of /16 for concurrent runs
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


def plan_addresses(topology: Topology, run_id: str, block: IPv4Network) -> AddressPlan:
    if block.prefixlen != 16:
        raise UserError(f"The address block {block} must be a /16, e.g. 10.190.0.0/16.")
    prefix = bridge_prefix(run_id)
    subnets = list(block.subnets(new_prefix=SITE_PREFIX))
    backbone_subnet = next(subnets[0].subnets(new_prefix=24))
    backbone = Network("backbone", backbone_subnet, f"{prefix}-bb", "backbone")
    sites: dict[str, Network] = {}
    switch_site: dict[str, IPv4Address] = {}
    switch_backbone: dict[str, IPv4Address] = {}
    agent_site: dict[str, IPv4Address] = {}
    container_site: dict[str, IPv4Address] = {}
    for index, switch in enumerate(topology.switches):
        subnet = subnets[index + 1]
        sites[switch] = Network(f"site_{switch}", subnet, f"{prefix}-s{index + 1}", "site")
        switch_site[switch] = subnet.network_address + ROUTER_HOST
        switch_backbone[switch] = backbone_subnet.network_address + FIRST_AGENT_HOST + index
        on_site = [c for c in topology.agent_containers() if c.switch == switch]
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


def free_block(used: list[IPv4Network], pool: IPv4Network = BLOCK_POOL) -> IPv4Network:
    """The first /16 of the pool that overlaps no subnet already in use."""
    for candidate in pool.subnets(new_prefix=16):
        if not any(candidate.overlaps(subnet) for subnet in used):
            return candidate
    raise UserError(
        f"Every /16 block of {pool} overlaps a Docker network already present, so "
        "this run has no address space. Remove finished runs with 'vnetbench clean' "
        "(or unused networks with 'docker network prune') and run again."
    )


TUNNEL_NETWORK = IPv4Network("100.64.0.0/16")  # inside tunnels; never on a Docker network


def tunnel_addresses(topology: Topology) -> dict[str, IPv4Address]:
    """Addresses inside a comparison overlay's tunnels: hub of switch k at 100.64.k.1,
    its agents from 100.64.k.10 (one /24 per site, the whole /16 on each tunnel)."""
    addresses: dict[str, IPv4Address] = {}
    base = TUNNEL_NETWORK.network_address
    for index, switch in enumerate(topology.switches):
        site = base + (index + 1) * 256
        addresses[switch] = site + 1
        for slot, agent in enumerate(topology.agents_on(switch)):
            addresses[agent.name] = site + FIRST_AGENT_HOST + slot
    return addresses
