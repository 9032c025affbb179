"""The overlay registry: name -> adapter class, and one configured adapter per run."""

from vnetbench.errors import UserError
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import Overlay
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.nebula import Nebula
from vnetbench.overlays.openvpn import OpenVpn
from vnetbench.overlays.tinc import Tinc
from vnetbench.overlays.vnet import Vnet
from vnetbench.overlays.wireguard import WireGuard

OVERLAY_TYPES: dict[str, type[Overlay]] = {
    overlay.name: overlay for overlay in (Baseline, Vnet, WireGuard, OpenVpn, Tinc, Nebula)
}
OVERLAY_NAMES = tuple(OVERLAY_TYPES)


def check_overlay_name(name: str) -> str:
    if name not in OVERLAY_TYPES:
        raise UserError(
            f"There is no overlay called '{name}'. The overlays vnetbench knows are: "
            f"{', '.join(sorted(OVERLAY_TYPES))}. Set 'overlay:' in the topology or --overlay "
            "to one of them."
        )
    return name


def overlay_for(topology: Topology, name: str | None = None) -> Overlay:
    """The adapter for the topology's overlay (or `name`), with the topology's options
    for it. Create it once per run and pass it down; call detect() before rendering."""
    name = check_overlay_name(name or topology.overlay)
    overlay = OVERLAY_TYPES[name](topology.overlay_options.get(name))
    overlay.generated_services(topology)  # no node takes a generated service's name
    return overlay


def unknown_options(topology: Topology) -> list[str]:
    """overlay_options keys that name no overlay."""
    return [key for key in topology.overlay_options if key not in OVERLAY_TYPES]


def check_overlay_options(topology: Topology, source: str) -> Topology:
    """A mistyped overlay_options key (`wireguad:`) is refused, not silently ignored."""
    unknown = unknown_options(topology)
    if unknown:
        keys = ", ".join(f"overlay_options.{key}" for key in unknown)
        raise UserError(f"{source}: {keys} names no overlay, so its options would be "
                        f"ignored. Use an overlay's name ({', '.join(OVERLAY_NAMES)}) as the "
                        "key, or remove it.")
    return topology


__all__ = ["OVERLAY_NAMES", "OVERLAY_TYPES", "Overlay", "check_overlay_name",
           "check_overlay_options", "overlay_for"]
