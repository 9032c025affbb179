"""vnet: the overlay this testbed exists for (conductor, switches, agents;
packets inside TCP, optionally TLS). Every vNet fact comes from the profile."""

from vnetbench.overlays.vnet.adapter import Vnet

__all__ = ["Vnet"]
