"""The overlay registry: name -> adapter."""

from vnetbench.errors import UserError
from vnetbench.overlays.base import Overlay
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.openvpn import OpenVpn
from vnetbench.overlays.tinc import Tinc
from vnetbench.overlays.vnet import Vnet
from vnetbench.overlays.wireguard import WireGuard

OVERLAYS: dict[str, Overlay] = {
    overlay.name: overlay for overlay in (Baseline(), Vnet(), WireGuard(), OpenVpn(), Tinc())
}


def get_overlay(name: str) -> Overlay:
    try:
        return OVERLAYS[name]
    except KeyError:
        raise UserError(
            f"There is no overlay called '{name}'. The overlays vnetbench knows are: "
            f"{', '.join(sorted(OVERLAYS))}. Set 'overlay:' in the topology or --overlay "
            "to one of them."
        ) from None


__all__ = ["OVERLAYS", "Overlay", "get_overlay"]
