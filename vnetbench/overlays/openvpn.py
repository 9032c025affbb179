"""openvpn: OpenVPN 2.6, TLS over TCP by default (UDP as a setting), the design
closest to vNet's (packets in TLS over TCP via a hub).

Each switch position is a hub: an OpenVPN server for its site's agents. The
hubs are joined by site links: the first hub also serves the others over the
backbone, with `iroute` per site, so a packet between sites goes
agent → hub → hub → agent. Stable addresses come from ccd `ifconfig-push`;
ECDSA certificates need `dh none`. A CA and a certificate per node are made
per run. Each node has its own directory, `openvpn/<node>/` (node: hub-<switch>
or the agent), the only one its container mounts: the CA certificate, its own
certificate and key, its configs and, for hubs, the ccd entries they serve. The
CA's private key is never written (make_pki signs with it in memory).
Options: overlay_options.openvpn.proto = udp, .mtu (tun-mtu), .nodelay = false
(OpenVPN's default Nagle on its TCP links; vnetbench sets tcp-nodelay).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from vnetbench.model.addressing import (
    HUB_LINKS,
    TUNNEL_NETWORK,
    AddressPlan,
    tunnel_addresses,
    tunnel_sites,
)
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import OverlayOptions
from vnetbench.overlays.tunnel import TunnelOverlay
from vnetbench.runtime import gate
from vnetbench.runtime.gate import prepare_gate
from vnetbench.runtime.pki import make_pki

CLIENT_PORT = 1194
SITE_PORT = 1195
SITE_LINKS = HUB_LINKS  # the hubs' own subnet, which no site's tunnel subnet reaches
FILES = "openvpn"
MOUNT = "/vnetbench-files"  # where a container sees its node's directory
CA, CERT, KEY = "ca.pem", "cert.pem", "key.pem"  # fixed names: an agent may be called "ca"
STAGING = "_pki"  # make_pki's output, then moved into the node directories ("_": no node's name)


class OpenVpnOptions(OverlayOptions):
    proto: Literal["tcp", "udp"] = Field("tcp", description="transport of the tunnels")
    mtu: int | None = Field(None, ge=576, le=65535, description="tun-mtu")
    nodelay: bool = Field(True, description=(
        "TCP_NODELAY on the tunnels' TCP connections (tcp-nodelay, pushed to the "
        "clients); false: OpenVPN's default, Nagle's algorithm, under which a packet "
        "behind another unacknowledged one waits for the peer's delayed ACK (~40 ms: "
        "TCP_CRR 5/s against 7,883 TCP_RR/s, docs/overlays.md)"))



def common(mtu: int | None = None, plain: bool = False) -> list[str]:
    """Lines every config has; `plain`: the data channel unencrypted (TLS still
    authenticates the peers, and HMAC still guards the packets)."""
    return [f"ca {MOUNT}/{CA}", f"cert {MOUNT}/{CERT}", f"key {MOUNT}/{KEY}", "verb 3",
            "persist-tun", *([f"tun-mtu {mtu}"] if mtu else []),
            *(["data-ciphers none", "cipher none"] if plain else [])]


def plain(topology: Topology) -> bool:
    return topology.settings.encryption is False


class OpenVpn(TunnelOverlay):
    name = "openvpn"
    secret_dirs = (FILES,)
    options_model = OpenVpnOptions
    options: OpenVpnOptions
    summary = "OpenVPN 2.6 (Debian 13), TLS over TCP, a hub per switch position"
    data_path = ("agent → hub → hub → agent (TLS over TCP; the first hub serves the "
                 "others' site links over the backbone)")
    join_event = ("agent", "joined")
    tunnel_interface = "tun0"
    tunnel_mtu_range = (576, 65535)  # tun-mtu, on the agents' and the hubs' links

    def tunnel_mtu(self, topology: Topology) -> int | None:
        return topology.settings.tunnel_mtu or self.options.mtu

    def version(self) -> str:
        return "OpenVPN 2.6 (Debian 13 package)"

    def event_patterns(self) -> dict[str, dict[str, str]]:
        return {"agent": {"joined": r"Initialization Sequence Completed"},
                "switch": {"client": r"(?P<agent>[a-z][a-z0-9-]*)/\S+ MULTI_sva: pool returned"}}

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        return {"ovpn": {"files": MOUNT, "core": topology.switches[0],
                         "client_port": CLIENT_PORT,
                         "site_port": SITE_PORT, **gate.template_context()}}

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        """Per node openvpn/<node>/: ca.pem, cert.pem, key.pem (0600) and its configs
        (agents: client.conf; hubs: clients.conf, site.conf, ccd/, the first hub ccd-site/)."""
        directory = run_dir / FILES
        nodes = [f"hub-{s}" for s in topology.switches] + [a.name for a in topology.agents]
        addresses, sites = tunnel_addresses(topology), tunnel_sites(topology)
        written = [prepare_gate(run_dir), *self.issue(directory, plan.tag, nodes)]
        for switch in topology.switches:
            hub = self.node_home(directory, f"hub-{switch}")
            written.append(self.write_public(hub / "clients.conf",
                                             self.client_server(topology, plan, switch)))
            (hub / "ccd").mkdir(exist_ok=True)  # ccd-exclusive: its own agents only
            for agent in topology.agents_on(switch):
                written.append(self.write_public(hub / "ccd" / agent.name, [
                    f"ifconfig-push {addresses[agent.name]} {sites[switch].netmask}"]))
                written.append(self.write_public(
                    self.node_home(directory, agent.name) / "client.conf", [
                        "client", "dev tun0", "proto tcp-client"
                        if self.options.proto == "tcp" else "proto udp",
                        f"remote {plan.switch_site[switch]} {CLIENT_PORT}", "nobind",
                        "remote-cert-tls server", "connect-retry 1",
                        *common(self.tunnel_mtu(topology), plain(topology))]))
        written += self.site_links(topology, plan, directory)
        return written

    def issue(self, directory: Path, run_id: str, nodes: list[str]) -> list[Path]:
        """The run's CA and a certificate per node, each node's moved into its directory
        with a copy of the CA certificate; the staging directory is removed."""
        staging = directory / STAGING
        if staging.exists():
            shutil.rmtree(staging)  # a run rendered again
        pki = make_pki(staging, run_id, nodes)
        written = []
        for node, issued in pki.roles.items():
            home = self.node_home(directory, node)
            shutil.copyfile(pki.ca, home / CA)
            (home / CA).chmod(0o644)
            os.replace(issued.cert, home / CERT)
            os.replace(issued.key, home / KEY)  # keeps make_pki's 0600
            written += [home / CA, home / CERT, home / KEY]
        shutil.rmtree(staging)
        return written

    def private_files(self, run_dir: Path) -> list[Path]:
        """Node keys, and any left in the staging directory by an interrupted render."""
        files = run_dir / FILES
        return sorted([*files.glob(f"*/{KEY}"), *files.glob(f"{STAGING}/*.key")])

    def client_server(self, topology: Topology, plan: AddressPlan, switch: str) -> list[str]:
        site = tunnel_sites(topology)[switch]
        return ["dev tun0", "mode server", "tls-server", "topology subnet",
                "proto tcp-server" if self.options.proto == "tcp" else "proto udp",
                f"local {plan.switch_site[switch]}", f"port {CLIENT_PORT}",
                f"ifconfig {site.network_address + 1} {site.netmask}",
                f"push \"route-gateway {site.network_address + 1}\"",
                f"push \"route {TUNNEL_NETWORK.network_address} {TUNNEL_NETWORK.netmask}\"",
                "push \"topology subnet\"", f"client-config-dir {MOUNT}/ccd", "ccd-exclusive",
                "dh none", "keepalive 10 60",
                *(["tcp-nodelay"] if self.options.nodelay and self.options.proto == "tcp"
                  else []),
                *common(self.tunnel_mtu(topology), plain(topology))]

    def site_links(self, topology: Topology, plan: AddressPlan, directory: Path) -> list[Path]:
        """The first hub serves the others; each other hub is its client, with iroute."""
        core, others = topology.switches[0], topology.switches[1:]
        if not others:
            return []
        sites = tunnel_sites(topology)
        links = SITE_LINKS.network_address
        server = ["dev tun1", "mode server", "tls-server", "topology subnet", "proto tcp-server",
                  f"local {plan.switch_backbone[core]}", f"port {SITE_PORT}",
                  f"ifconfig {links + 1} {SITE_LINKS.netmask}", "client-to-client",
                  f"route-gateway {links + 1}", f"push \"route-gateway {links + 1}\"",
                  "push \"topology subnet\"",
                  f"client-config-dir {MOUNT}/ccd-site", "dh none", "keepalive 10 60",
                  *(["tcp-nodelay"] if self.options.nodelay else []),
                  f"push \"route {TUNNEL_NETWORK.network_address} {TUNNEL_NETWORK.netmask}\"",
                  *common(self.tunnel_mtu(topology), plain(topology))]
        core_home = self.node_home(directory, f"hub-{core}")
        (core_home / "ccd-site").mkdir(exist_ok=True)
        written = []
        for index, switch in enumerate(others, start=2):
            site = sites[switch]
            server.append(f"route {site.network_address} {site.netmask}")
            written.append(self.write_public(core_home / "ccd-site" / f"hub-{switch}", [
                f"ifconfig-push {links + index} {SITE_LINKS.netmask}",
                f"iroute {site.network_address} {site.netmask}"]))
            written.append(self.write_public(
                self.node_home(directory, f"hub-{switch}") / "site.conf", [
                    "client", "dev tun1", "proto tcp-client",
                    f"remote {plan.switch_backbone[core]} {SITE_PORT}", "nobind",
                    "remote-cert-tls server", "connect-retry 1",
                    *common(self.tunnel_mtu(topology), plain(topology))]))
        written.append(self.write_public(core_home / "site.conf", server))
        return written
