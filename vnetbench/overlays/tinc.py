"""tinc: tinc 1.0 in router mode over TCP only, a hub per switch position.

Agents connect to their site's hub and mark themselves IndirectData, so no
other node talks to them directly; hubs connect to the first hub over the
backbone. With TCPOnly every packet rides the meta connections (TCP), so a
packet between sites goes agent → hub → hub → agent, as in vNet. RSA keys
are generated per run; each node's config directory, `tinc/<node>/` (its own
rsa_key.priv, 0600, and the public host files it needs), is the only one its
container mounts, read-only (tinc's own `-K` would fail silently there, so it
is never used). rsa_key.priv is deleted after the run.

encryption: false cannot keep TCPOnly (tinc 1.0 always encrypts its meta
connections, which then carry the data): the data goes over UDP instead, with
`Cipher = none` and `Digest = none` in every host file, and the results say so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vnetbench.model.addressing import TUNNEL_NETWORK, AddressPlan, tunnel_addresses
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import Adjusted
from vnetbench.overlays.keys import tinc_keypair
from vnetbench.overlays.tunnel import TunnelOverlay
from vnetbench.runtime import gate
from vnetbench.runtime.gate import prepare_gate
from vnetbench.runtime.pki import write_private

NETWORK = "vnetbench"
FILES = "tinc"
PORT = 655
PRIVATE_KEY = "rsa_key.priv"


PLAIN_REMARK = ("unencrypted: tinc's data over UDP with Cipher = none and Digest = none "
                "(TCPOnly off: tinc 1.0 always encrypts its meta connections)")


@dataclass(frozen=True)
class Mode:
    """What every node's config shares: the tun MTU, and whether the data is plain."""

    mtu: int | None = None
    plain: bool = False


def tinc_name(node: str) -> str:
    """tinc node names allow letters, digits and '_' only."""
    return re.sub(r"[^A-Za-z0-9_]", "_", node)


class Tinc(TunnelOverlay):
    name = "tinc"
    secret_dirs = (FILES,)
    summary = "tinc 1.0 (Debian 13), router mode, TCP only, a hub per switch position"
    data_path = "agent → hub → hub → agent (tinc meta connections over TCP; IndirectData)"
    join_event = ("agent", "joined")
    tunnel_interface = "tun0"
    tunnel_mtu_range = (576, 1500)
    tunnel_mtu_note = ("Debian's tinc 1.0 is built without jumbograms: at tun MTU 9000, "
                       "8000-byte pings were all lost")
    # tinc 1.0 accepts at most 10 meta connections per second of its clock (time_t,
    # read after each select): the rest are tarpitted, and their clients join only after
    # PingTimeout (5 s) and a retry 5 s later (net_socket.c, max_accept_burst). Hubs
    # restarted between join passes are ready once the other hubs' connections to the
    # first hub are up, a few hundred ms before the release: in the same second, such a
    # connection took one of the 10 (passes of 10 agents a hub: 0.13 s, then 9.7 s).
    # One second after the hubs are ready, the agents' connections count afresh.
    servers_settle_s = 1.0
    # The other hubs ConnectTo the first: restarted with it, their dial was refused
    # and retried 5 s later (restarts of 6.4 s instead of 1.5 s).
    first_switch_first = True

    def version(self) -> str:
        return "tinc 1.0.36 (Debian 13 package)"

    def event_patterns(self) -> dict[str, dict[str, str]]:
        return {"agent": {"joined": r"Connection with hub_\S+ \(\S+ port \d+\) activated"}}

    def adjust_settings(self, topology: Topology) -> Adjusted:
        """Unencrypted is a different transport (UDP): said with every result."""
        return Adjusted(topology, PLAIN_REMARK if topology.settings.encryption is False else "")

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        return {"tinc": {"files": f"/etc/tinc/{NETWORK}", "network": NETWORK,
                         **gate.template_context()}}

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        """One config directory per node: tinc.conf, tinc-up, rsa_key.priv, hosts/."""
        addresses = tunnel_addresses(topology)
        keys = {node: tinc_keypair() for node in
                [*topology.switches, *(a.name for a in topology.agents)]}
        mode = Mode(topology.settings.tunnel_mtu, topology.settings.encryption is False)
        plain = ["Cipher = none", "Digest = none"] if mode.plain else []
        agents = {tinc_name(a.name): ["IndirectData = yes", f"Subnet = {addresses[a.name]}/32",
                                      *plain, keys[a.name][1]] for a in topology.agents}

        def hubs(via: dict[str, object]) -> dict[str, list[str]]:
            """Hub host files with the address a node reaches them at: hubs over the
            backbone, agents on their site."""
            return {f"hub_{tinc_name(s)}": [f"Address = {via[s]} {PORT}",
                                            f"Subnet = {addresses[s]}/32", *plain, keys[s][1]]
                    for s in topology.switches}

        core = f"hub_{tinc_name(topology.switches[0])}"
        written = [prepare_gate(run_dir)]
        for switch in topology.switches:
            me = f"hub_{tinc_name(switch)}"
            connect = [] if me == core else [core]
            written.append(self.node_dir(run_dir, switch, me, connect, keys[switch][0],
                                         str(addresses[switch]),
                                         hubs(dict(plan.switch_backbone)) | agents, mode))
        for agent in topology.agents:
            written.append(self.node_dir(run_dir, agent.name, tinc_name(agent.name),
                                         [f"hub_{tinc_name(agent.switch)}"],
                                         keys[agent.name][0], str(addresses[agent.name]),
                                         hubs(dict(plan.switch_site)) | agents, mode))
        return written

    def private_files(self, run_dir: Path) -> list[Path]:
        return sorted((run_dir / FILES).glob(f"*/{PRIVATE_KEY}"))

    @staticmethod
    def node_dir(run_dir: Path, node: str, name: str, connect: list[str], private: str,
                 address: str, hosts: dict[str, list[str]], mode: Mode) -> Path:
        directory = run_dir / FILES / node
        (directory / "hosts").mkdir(parents=True, exist_ok=True)
        mtu = mode.mtu
        (directory / "tinc.conf").write_text("\n".join(
            [f"Name = {name}", "Mode = router", f"TCPOnly = {'no' if mode.plain else 'yes'}",
             "AddressFamily = ipv4",
             "DeviceType = tun", "Interface = tun0", "ProcessPriority = normal",
             *(f"ConnectTo = {c}" for c in connect)]) + "\n")
        up = directory / "tinc-up"
        up.write_text("#!/bin/sh\nip address add "
                      f"{address}/{TUNNEL_NETWORK.prefixlen} dev $INTERFACE\n"
                      f"ip link set $INTERFACE{f' mtu {mtu}' if mtu else ''} up\n")
        up.chmod(0o755)
        write_private(directory / PRIVATE_KEY, private)
        for host, lines in hosts.items():
            (directory / "hosts" / host).write_text("\n".join(lines) + "\n")
        return directory
