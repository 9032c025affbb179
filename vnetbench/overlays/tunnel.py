"""What the comparison overlays share: hubs at the switch positions, agents as
clients in their own containers, addresses inside the tunnels from
addressing.tunnel_addresses, the start gate, and per-run secret files."""

from __future__ import annotations

from ipaddress import IPv4Address
from pathlib import Path
from typing import ClassVar

from vnetbench.model.addressing import AddressPlan, tunnel_addresses
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import Overlay
from vnetbench.runtime.pki import write_private


class TunnelOverlay(Overlay):
    """A hub-and-spoke tunnel overlay with one client per agent container."""

    services: ClassVar[tuple[str, ...]] = ("hub-{switch}",)
    # Clients join their hubs; no central config, one client per namespace.
    capabilities = frozenset({Capability.JOIN})

    def target_address(self, topology: Topology, plan: AddressPlan, agent: str) -> str:
        return str(tunnel_addresses(topology)[agent])

    def overlay_addresses(self, topology: Topology) -> dict[str, IPv4Address]:
        return tunnel_addresses(topology)

    def hub_address(self, topology: Topology, switch: str) -> str:
        return str(tunnel_addresses(topology)[switch])

    @staticmethod
    def node_home(files: Path, node: str) -> Path:
        """A node's own directory under the overlay's files: the only one it mounts."""
        home = files / node
        home.mkdir(parents=True, exist_ok=True)
        return home

    @staticmethod
    def write_secret(path: Path, lines: list[str]) -> Path:
        """A config holding keys: owner-readable only (before the key is written)."""
        return write_private(path, "\n".join(lines) + "\n")

    @staticmethod
    def write_public(path: Path, lines: list[str]) -> Path:
        """A config without keys: readable by whoever shares the run directory."""
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o644)
        return path
