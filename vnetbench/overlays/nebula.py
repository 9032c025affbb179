"""Nebula: a lighthouse at each switch position, each agent a Nebula node.

Certificates are made per stack by `nebula-cert` inside the overlays image, by a
one-shot `nebula_ca` service that every node waits for (so the rendered file
runs with plain `docker compose up`, and rendering needs no engine). It writes
each node's directory (ca.crt, host.crt, host.key owner-only); each node mounts
only its own, read-only. Every agent knows every lighthouse; the hubs also route
between sites (as the baseline's routers), so two agents on different sites
build their tunnel directly, end to end over the routed underlay, which is how
Nebula runs: the lighthouses only introduce them. host.key and the CA's key are
deleted after the stack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vnetbench.model.addressing import TUNNEL_NETWORK, AddressPlan, tunnel_addresses
from vnetbench.model.topology import Topology
from vnetbench.overlays.tunnel import TunnelOverlay
from vnetbench.runtime import gate
from vnetbench.runtime.gate import prepare_gate

FILES = "nebula"
PORT = 4242
CA_DIR = "_ca"  # "_": no node can be named so (topology names take letters, digits, "-")
CONFIG = "config.yml"
PRIVATE_KEYS = ("host.key", "ca.key")
DEFAULT_MTU = 1300  # Nebula's own default


class Nebula(TunnelOverlay):
    name = "nebula"
    secret_dirs = (FILES,)
    summary = "Nebula 1.9 (Debian 13), a lighthouse per switch position, agents as nodes"
    data_path = ("agent → agent (Nebula's own tunnel over UDP, end to end; the hubs "
                 "route the underlay between sites and are the lighthouses)")
    join_event = ("agent", "handshake")
    tunnel_interface = "nebula1"
    services = ("nebula_ca", "hub-{switch}")
    # No control_plane: its lighthouses are the hubs, which also route the underlay
    # between sites here, so a lighthouse cannot fail without the data path failing too
    # (its failover rows of a control-plane kill say "not applicable").
    fixed_encryption = "Nebula has no null cipher (AES-256-GCM or ChaCha20-Poly1305 always)"
    tunnel_mtu_range = (576, 8969)
    tunnel_mtu_note = "Nebula reads the underlay in 9001-byte buffers; its header and tag take 32"

    def tunnel_mtu(self, topology: Topology) -> int:
        return topology.settings.tunnel_mtu or DEFAULT_MTU

    def version(self) -> str:
        return "Nebula 1.9.3 (Debian 13 package)"

    def event_patterns(self) -> dict[str, dict[str, str]]:
        # the first completed handshake (with a lighthouse) makes the node part of the
        # overlay; Nebula logs it as the initiator's "Handshake message received"
        return {"agent": {"handshake": r'Handshake message received.*vpnIp=(?P<peer>\S+)'}}

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        return {"nebula": {"files": "/etc/nebula", "config": f"/etc/nebula/{CONFIG}",
                           "port": PORT, **gate.template_context()}}

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        """Each node's config.yml, and the script the nebula_ca service runs."""
        files = run_dir / FILES
        addresses = tunnel_addresses(topology)
        written = [prepare_gate(run_dir)]
        # node -> (its site's switch, is it a lighthouse)
        nodes = {s: (s, True) for s in topology.switches} | {
            a.name: (a.switch, False) for a in topology.agents}
        for node, (switch, lighthouse) in nodes.items():
            config = node_config(topology, plan, lighthouse, own_switch=switch,
                                 mtu=self.tunnel_mtu(topology))
            written.append(self.write_public(self.node_home(files, node) / CONFIG,
                                             [json.dumps(config, indent=2)]))
        script = self.node_home(files, CA_DIR) / "make-certs"
        script.write_text(certificate_script(
            {node: f"{addresses[node]}/{TUNNEL_NETWORK.prefixlen}" for node in nodes},
            plan.tag))
        written.append(script)
        return written

    def private_files(self, run_dir: Path) -> list[Path]:
        return sorted(p for name in PRIVATE_KEYS for p in (run_dir / FILES).glob(f"*/{name}"))


def node_config(topology: Topology, plan: AddressPlan, lighthouse: bool,
                own_switch: str, mtu: int = 1300) -> dict[str, Any]:
    """Nebula's config (YAML; written as JSON, which YAML reads). A lighthouse is
    reached at its site address from its own site, at its backbone address from
    elsewhere (the hubs route between sites)."""
    addresses = tunnel_addresses(topology)

    def reached_at(switch: str) -> str:
        side = plan.switch_site if switch == own_switch else plan.switch_backbone
        return f"{side[switch]}:{PORT}"

    underlay = {str(addresses[s]): [reached_at(s)] for s in topology.switches}
    return {
        "pki": {"ca": "/etc/nebula/ca.crt", "cert": "/etc/nebula/host.crt",
                "key": "/etc/nebula/host.key"},
        "static_host_map": {} if lighthouse else underlay,
        "lighthouse": {"am_lighthouse": lighthouse, "interval": 60,
                       "hosts": [] if lighthouse else list(underlay)},
        "listen": {"host": "0.0.0.0", "port": PORT},
        "punchy": {"punch": False},
        "tun": {"dev": "nebula1", "mtu": mtu},
        "logging": {"level": "info", "format": "text"},
        "firewall": {"outbound": [{"port": "any", "proto": "any", "host": "any"}],
                     "inbound": [{"port": "any", "proto": "any", "host": "any"}]},
    }


def certificate_script(nodes: dict[str, str], tag: str) -> str:
    """The nebula-ca service's script: a CA for this stack and one certificate per
    node, each node's files in its own directory, keys owner-only."""
    ca = CA_DIR
    # a year: a stack left up (vnetbench up) keeps working; its keys are per stack
    lines = ["#!/bin/bash", "set -eu", "cd /nebula", "umask 077",
             f"rm -f {ca}/ca.crt {ca}/ca.key */host.crt */host.key */ca.crt",
             f"nebula-cert ca -name vnetbench-{tag} -duration 8760h "
             f"-out-crt {ca}/ca.crt -out-key {ca}/ca.key"]
    for node, address in nodes.items():
        lines += [f"nebula-cert sign -name {node} -ip {address} -ca-crt {ca}/ca.crt "
                  f"-ca-key {ca}/ca.key -out-crt {node}/host.crt -out-key {node}/host.key",
                  f"cp {ca}/ca.crt {node}/ca.crt", f"chmod 644 {node}/host.crt {node}/ca.crt"]
    lines.append("echo nebula_ca: certificates for $(ls -d */ | wc -l) directories")
    return "\n".join(lines) + "\n"
