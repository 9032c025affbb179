"""vNet's files, as pure functions of the topology and the profile:
the config (who joins with which address, who talks to whom) and the
credentials file. Line formats come from the profile."""

from __future__ import annotations

from ipaddress import IPv4Address
from itertools import combinations

from vnetbench.model.topology import Topology
from vnetbench.overlays.vnet.profile import VnetProfile

MEASURED_PER_SWITCH = 2  # agents per switch that scenarios send between


def virtual_addresses(topology: Topology, profile: VnetProfile) -> dict[str, IPv4Address]:
    return {agent.name: profile.virtual_address(index)
            for index, agent in enumerate(topology.agents)}


def measured_agents(topology: Topology) -> list[str]:
    """The agents scenarios send between: the first two of every switch."""
    return [a.name for switch in topology.switches
            for a in topology.agents_on(switch)[:MEASURED_PER_SWITCH]]


def render_config(profile: VnetProfile, addresses: dict[str, IPv4Address],
                  rules: list[tuple[str, str]], header: list[str]) -> str:
    fmt = profile.config
    lines = [fmt.comment.format(text=text) for text in header]
    lines += [fmt.address_line.format(agent=name, address=address)
              for name, address in addresses.items()]
    lines += [fmt.rule_line.format(source=a, destination=b) for a, b in rules]
    return "\n".join(lines) + "\n"


def topology_config(topology: Topology, profile: VnetProfile, run_id: str) -> str:
    """Every agent with its address; rules between every pair of measured agents."""
    header = [f"vnetbench run {run_id}: topology {topology.name}",
              f"{len(topology.agents)} agents; rules between the measured agents"]
    rules = list(combinations(measured_agents(topology), 2))
    return render_config(profile, virtual_addresses(topology, profile), rules, header)


def machines_config(profile: VnetProfile, machines: int, rules_per_machine: int = 4) -> str:
    """The seed's config scenario: one address and four rules per machine, 4 header lines."""
    names = [machine_name(i) for i in range(machines)]
    addresses = {name: profile.virtual_address(i) for i, name in enumerate(names)}
    rules = [(names[i], names[(i + step) % machines]) for i in range(machines)
             for step in range(1, rules_per_machine + 1)]
    header = ["vnetbench config scenario", f"{machines} machines",
              f"one address and {rules_per_machine} rules per machine", "generated, do not edit"]
    return render_config(profile, addresses, rules, header)


def machine_name(index: int) -> str:
    """Short contest-room names (pc0001...), so line sizes resemble the seed's config."""
    return f"pc{index + 1:04d}"


def auth_text(profile: VnetProfile, topology: Topology, keys: dict[str, str]) -> str:
    """The conductor's credentials file: every switch and agent with its key."""
    feature = profile.feature("auth_file")
    lines = [str(feature.get("switch_line")).format(name=s, key=keys[s])
             for s in topology.switches]
    lines += [str(feature.get("agent_line")).format(name=a.name, key=keys[a.name])
              for a in topology.agents]
    return "\n".join(lines) + "\n"
