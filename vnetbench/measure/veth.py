"""The machine's own limits: iperf3 between namespaces joined by bare veth pairs.

The namespaces are made inside a helper container (the tools image, no network
of its own, NET_ADMIN and SYS_ADMIN, which `ip netns` needs, and no AppArmor
profile, which would deny its mounts; `--privileged` is refused on some
machines and not needed). Two paths: one veth pair (the limit
of this machine), and the baseline's shape without a testbed (agent, router,
router, agent over three veth pairs, no bridge, no netfilter), so the gap
between a vnetbench path and the bare one splits into the path's own nature
and the testbed's cost. The addresses (TEST-NET-1) exist only inside those
namespaces.
"""

from __future__ import annotations

from vnetbench.engines.base import EngineError, HostRuntime, ToolSpec
from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.measure.iperf import IperfError, IperfResult, parse_iperf_json
from vnetbench.runtime.labels import run_labels

# $1: seconds; $2: routers between the two ends (0, or 2 as the baseline path)
BARE_PATH = r"""
set -e
routers=$2; last=$((routers + 1))
for i in $(seq 0 $last); do ip netns add n$i; ip -n n$i link set lo up; done
for i in $(seq 0 $routers); do  # link i: n$i (.4i+1) -- n$((i+1)) (.4i+2)
  j=$((i + 1))
  ip link add l$i netns n$i type veth peer name r$j netns n$j
  ip -n n$i address add 192.0.2.$((4 * i + 1))/30 dev l$i; ip -n n$i link set l$i up
  ip -n n$j address add 192.0.2.$((4 * i + 2))/30 dev r$j; ip -n n$j link set r$j up
done
source=192.0.2.1; target=192.0.2.$((4 * routers + 2))
ip -n n0 route add default via 192.0.2.2
ip -n n$last route add default via 192.0.2.$((4 * routers + 1))
for i in $(seq 1 $routers); do
  # /proc/sys is read-only in a container; a new netns inherits the host's IPv4
  # forwarding (on wherever Docker runs), which is checked here
  [ "$(ip netns exec n$i cat /proc/sys/net/ipv4/ip_forward)" = 1 ] \
    || { echo "router namespace n$i does not forward" >&2; exit 1; }
  [ $i -lt $routers ] && ip -n n$i route add $target via 192.0.2.$((4 * i + 2))
  [ $i -gt 1 ] && ip -n n$i route add $source via 192.0.2.$((4 * i - 3))
done
ip netns exec n$last iperf3 -s -1 -D
for i in $(seq 50); do ip netns exec n$last ss -ltn | grep -q :5201 && break; sleep 0.05; done
ip netns exec n0 iperf3 -c $target -t "$1" -J
"""


def bare_rates(runtime: HostRuntime, run_id: str, seconds: float, passes: int,
               routers: int = 0) -> list[float]:
    """Receiver Mbit/s of `passes` streams over a bare path, with progress."""
    from vnetbench.terminal.ui import waiting

    rates = []
    for pass_no in range(1, passes + 1):
        with waiting(f"bare veth path ({routers} routers), pass {pass_no}", seconds + 2):
            rates.append(round(bare_path(runtime, run_id, seconds, routers).receiver_mbit, 1))
    return rates


def bare_path(runtime: HostRuntime, run_id: str, seconds: float,
              routers: int = 0) -> IperfResult:
    """One TCP stream of `seconds` over bare veth pairs with `routers` between."""
    try:
        out = runtime.run_helper(ToolSpec(
            ("bash", "-c", BARE_PATH, "bare-path", f"{seconds:g}", str(routers)),
            run_labels(run_id, "calibration", f"bare-{routers}"), network="none",
            capabilities=("NET_ADMIN", "SYS_ADMIN"),
            # Docker's AppArmor profile denies mount, which `ip netns` needs; this helper
            # is ours, never the system under test
            security_options=("apparmor=unconfined",)))
    except EngineError as error:
        raise EnvironmentProblem(
            "The bare veth path could not be measured: a helper container with NET_ADMIN "
            f"and SYS_ADMIN failed ({(error.stderr or '').strip()[-300:]}). The engine "
            "may refuse these capabilities (rootless Docker, a restrictive profile)."
        ) from None
    try:
        return parse_iperf_json(str(out))
    except IperfError as error:
        raise UserError(f"The bare veth path gave no iperf3 result ({error}).") from None
