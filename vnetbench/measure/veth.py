"""The machine's own limit: iperf3 over a bare veth pair between two namespaces.

The namespaces are made inside a helper container (the tools image, no network
of its own, NET_ADMIN and SYS_ADMIN, which `ip netns` needs; `--privileged` is
refused on some machines and not needed). Nothing else is on the path: no
bridge, no netfilter, no router. The addresses (TEST-NET-1) exist only inside
those two namespaces.
"""

from __future__ import annotations

from python_on_whales.exceptions import DockerException

from vnetbench.engine import docker
from vnetbench.images import TOOLS_IMAGE
from vnetbench.labels import run_labels
from vnetbench.measure.iperf import IperfResult, parse_iperf_json

RAW_PAIR = """
set -e
ip netns add a; ip netns add b
ip link add va netns a type veth peer name vb netns b
ip -n a address add 192.0.2.1/30 dev va; ip -n b address add 192.0.2.2/30 dev vb
for ns in a b; do ip -n $ns link set lo up; done
ip -n a link set va up; ip -n b link set vb up
ip netns exec b iperf3 -s -1 -D
for i in $(seq 50); do ip netns exec b ss -ltn | grep -q :5201 && break; sleep 0.05; done
ip netns exec a iperf3 -c 192.0.2.2 -t "$1" -J
"""


def raw_veth(run_id: str, seconds: float) -> IperfResult:
    """One TCP stream of `seconds` over a bare veth pair."""
    try:
        out = docker.run(TOOLS_IMAGE, ["bash", "-c", RAW_PAIR, "raw-veth", f"{seconds:g}"],
                         networks=["none"], cap_add=["NET_ADMIN", "SYS_ADMIN"],
                         labels=run_labels(run_id, "calibration", "raw-veth"),
                         remove=True, pull="never")
    except DockerException as error:
        from vnetbench.errors import UserError

        raise UserError(
            "The raw veth pair could not be measured: a helper container with NET_ADMIN "
            f"and SYS_ADMIN failed ({(error.stderr or '').strip()[-300:]}). The engine "
            "may refuse these capabilities (rootless Docker, a restrictive profile)."
        ) from None
    return parse_iperf_json(str(out))
