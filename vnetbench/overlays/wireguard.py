"""wireguard: hub and spoke with wireguard-go (userspace; this kernel has no module).

Each switch position is a hub on its site network and the backbone; agents
are spokes of their site's hub; hubs peer with each other over the backbone,
so a packet between sites goes agent → hub → hub → agent, like vNet's.
Keys are generated per run; each node's config, with its private key, is
`wireguard/<node>/wg0.conf` (0600), and a container mounts only its own
node's directory. After the run the PrivateKey lines are redacted.
Option: overlay_options.wireguard.mtu (default 1420).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pydantic import Field

from vnetbench.model.addressing import TUNNEL_NETWORK, AddressPlan, tunnel_addresses, tunnel_sites
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import OverlayOptions
from vnetbench.overlays.keys import wireguard_keypair
from vnetbench.overlays.tunnel import TunnelOverlay
from vnetbench.runtime import gate
from vnetbench.runtime.gate import prepare_gate

PORT = 51820
MTU = 1420
HEADERS = 80  # WireGuard's own 32, UDP 8, IPv6 40 (wg-quick's reckoning)
FILES = "wireguard"
CONF = "wg0.conf"  # in each node's directory, FILES/<node>/
PRIVATE_KEY = re.compile(r"^[ \t]*PrivateKey[ \t]*=.*$", re.MULTILINE)
REDACTED = "PrivateKey = (removed after the run)"


def peer(public: str, allowed: str, endpoint: str | None = None,
         keepalive: bool = False) -> list[str]:
    lines = ["", "[Peer]", f"PublicKey = {public}", f"AllowedIPs = {allowed}"]
    lines += [f"Endpoint = {endpoint}:{PORT}"] if endpoint else []
    lines += ["PersistentKeepalive = 25"] if keepalive else []
    return lines


def holds_key(conf: Path) -> bool:
    """Does a wg0.conf still hold its private key (not yet redacted)?"""
    try:
        text = conf.read_text()
    except OSError:
        return True  # unreadable: let remove_private try, and report it
    return any(line.strip() != REDACTED for line in PRIVATE_KEY.findall(text))


class WireGuardOptions(OverlayOptions):
    mtu: int = Field(MTU, ge=1280, le=65535, description="wg0's MTU")


class WireGuard(TunnelOverlay):
    name = "wireguard"
    secret_dirs = (FILES,)
    inotify_per_node = 1  # wireguard-go watches its control (UAPI) socket
    options_model = WireGuardOptions
    options: WireGuardOptions
    summary = "WireGuard (wireguard-go, Debian 13), a hub per switch position"
    data_path = "agent → hub → hub → agent (WireGuard over UDP; hubs peer over the backbone)"
    fixed_encryption = "WireGuard has no null cipher (ChaCha20-Poly1305 always)"
    join_event = ("agent", "handshake")
    tunnel_interface = "wg0"
    tunnel_mtu_range = (1280, 65535)
    tunnel_mtu_note = ("wireguard-go sends with UDP GSO, which cannot fragment: above this, "
                       "its sends fail with 'message too long'")

    def tunnel_mtu_limits(self, topology: Topology) -> tuple[int, int]:
        """Its UDP packets (tunnel MTU + 80 bytes of IPv6-sized headers) must fit the
        smallest link MTU (1500 unless set)."""
        links = (topology.links.site.mtu or 1500, topology.links.backbone.mtu or 1500)
        return self.tunnel_mtu_range[0], min(links) - HEADERS

    def tunnel_mtu(self, topology: Topology) -> int:
        """The setting, else the option fitted to the links (a swarm's are 1450)."""
        return topology.settings.tunnel_mtu or min(self.options.mtu,
                                                   self.tunnel_mtu_limits(topology)[1])

    def version(self) -> str:
        return "wireguard-go 0.0.20230223 (as it reports itself) + wireguard-tools, Debian 13"

    def event_patterns(self) -> dict[str, dict[str, str]]:
        return {"agent": {"handshake": r"Received handshake response"},
                "switch": {"handshake": r"Received handshake initiation"}}

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        addresses = tunnel_addresses(topology)
        return {"wg": {
            "addresses": {k: str(v) for k, v in addresses.items()},
            "prefix": TUNNEL_NETWORK.prefixlen, "mtu": self.tunnel_mtu(topology),
            "files": "/vnetbench-files", **gate.template_context(),
        }}

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        """wireguard/<node>/wg0.conf per hub and agent: its own private key, peers' public."""
        directory = run_dir / FILES
        keys = {node: wireguard_keypair() for node in
                [*topology.switches, *(a.name for a in topology.agents)]}
        addresses, sites = tunnel_addresses(topology), tunnel_sites(topology)
        written = [prepare_gate(run_dir)]
        for switch in topology.switches:
            lines = ["[Interface]", f"PrivateKey = {keys[switch][0]}", f"ListenPort = {PORT}"]
            for other in topology.switches:
                if other != switch:
                    lines += peer(keys[other][1], str(sites[other]),
                                  str(plan.switch_backbone[other]))
            for agent in topology.agents_on(switch):
                lines += peer(keys[agent.name][1], f"{addresses[agent.name]}/32")
            written.append(self.write_secret(self.node_home(directory, switch) / CONF, lines))
        for agent in topology.agents:
            lines = ["[Interface]", f"PrivateKey = {keys[agent.name][0]}"]
            lines += peer(keys[agent.switch][1], str(TUNNEL_NETWORK),
                          str(plan.switch_site[agent.switch]), keepalive=True)
            written.append(self.write_secret(self.node_home(directory, agent.name) / CONF,
                                             lines))
        return written

    def private_files(self, run_dir: Path) -> list[Path]:
        return [conf for conf in sorted((run_dir / FILES).glob(f"*/{CONF}")) if holds_key(conf)]

    def remove_private(self, path: Path) -> None:
        """Redact rather than delete: the peers and endpoints stay readable. The
        redacted config holds no secret, so it becomes readable like other run files."""
        redacted = path.with_name(f".{path.name}.redacted")
        redacted.write_text(PRIVATE_KEY.sub(REDACTED, path.read_text()))
        redacted.chmod(0o644)
        os.replace(redacted, path)
