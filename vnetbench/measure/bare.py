"""The reference beside the testbed: vnetbench's two-site shape built from bare
network namespaces, veth pairs and Linux bridges, as Mininet would build it.

One helper container of the tools image (no network of its own, NET_ADMIN and
SYS_ADMIN, no AppArmor profile: as measure/veth.py) builds, for each N, two
site bridges and a backbone bridge, two router namespaces joining each site to
the backbone, and N host namespaces on the sites in turn; times the bring-up
(every host addressed and routed) and the teardown (every namespace deleted,
then every link gone, which the kernel does after); and, at the first N,
measures TCP (iperf3) and RTT (ping) between a host of each site over both
routers, the bridges' netfilter off and on. The bridges are in the helper's own
namespace, so `net.bridge.bridge-nf-call-iptables` is toggled there only (a
proc mounted in the helper: the host's setting is never touched); "on" also
loads a conntrack rule in FORWARD, as Docker's host has, so bridged frames
cross conntrack as on the engine's bridges. Addresses: 198.18.0.0/15 (RFC 2544's
benchmark range), inside those namespaces only.

The output is marked lines (`bare-shape up N SECONDS`, ...) and each tool's
output between `--- tool variant ---` and `--- end ---`; parse_bare reads it.

Below it, calibrate's rounds of the two-router path: a helper kept up with two
bare paths, one as Mininet's and one as the engine's host has it (netfilter on,
the engine's own rules copied from vnetbench's stack: rules_commands), measured
round after round beside vnetbench's path (runs/calibration.py's path_rounds).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vnetbench.measure.iperf import IperfError, parse_iperf_json
from vnetbench.measure.ping_output import PingParseError, parse_ping

if TYPE_CHECKING:
    from vnetbench.engines.base import HostRuntime

# $1: seconds of TCP; $2: pings (10 ms apart); $3...: the N to build, the path at the first
BARE_SHAPE = r"""
set -e
seconds=$1; pings=$2; shift 2
now() { date +%s.%N; }
took() {
  awk -v a="$3" -v b="$(now)" -v w="$1 $2" 'BEGIN { printf "bare-shape %s %.4f\n", w, b - a }'
}
mkdir -p /tmp/proc && mount -t proc proc /tmp/proc  # this namespace's sysctls, writable
brnf=/tmp/proc/sys/net/bridge/bridge-nf-call-iptables
links() { ip -o link show | wc -l; }
base=$(links)
up() {
  for b in vbb vs1 vs2; do ip link add $b type bridge; ip link set $b up; done
  for r in 1 2; do
    other=$((3 - r))
    ip netns add r$r; ip -n r$r link set lo up
    ip link add rb$r type veth peer name b0 netns r$r
    ip link add rs$r type veth peer name s0 netns r$r
    ip link set rb$r master vbb up; ip link set rs$r master vs$r up
    ip -n r$r address add 198.18.0.$r/24 dev b0; ip -n r$r link set b0 up
    ip -n r$r address add 198.18.$r.1/24 dev s0; ip -n r$r link set s0 up
    ip -n r$r route add 198.18.$other.0/24 via 198.18.0.$other
    [ "$(ip netns exec r$r cat /proc/sys/net/ipv4/ip_forward)" = 1 ] \
      || { echo "router namespace r$r does not forward" >&2; exit 1; }
  done
  for i in $(seq 1 $1); do
    site=$(( (i - 1) % 2 + 1 )); host=$(( (i - 1) / 2 + 2 ))
    ip netns add h$i; ip -n h$i link set lo up
    ip link add e$i type veth peer name eth0 netns h$i
    ip link set e$i master vs$site up
    ip -n h$i address add 198.18.$site.$host/24 dev eth0; ip -n h$i link set eth0 up
    ip -n h$i route add default via 198.18.$site.1
  done
}
down() {
  for i in $(seq 1 $1); do ip netns del h$i; done
  ip netns del r1; ip netns del r2
  for b in vbb vs1 vs2; do ip link del $b; done
}
path() {  # $1: the variant's name
  ip netns exec h2 iperf3 -s -1 -D
  for i in $(seq 50); do ip netns exec h2 ss -ltn | grep -q :5201 && break; sleep 0.05; done
  echo "--- ping $1 ---"
  # held in a file until it ends, as every probe's output (measure/probe.py)
  ip netns exec h1 ping -c "$pings" -i 0.01 -W 1 198.18.2.2 > /tmp/ping.out || true
  cat /tmp/ping.out; echo "--- end ---"
  echo "--- iperf3 $1 ---"
  ip netns exec h1 iperf3 -c 198.18.2.2 -t "$seconds" -J; echo "--- end ---"
}
first=1
for n in "$@"; do
  begun=$(now); up $n; took up $n $begun
  if [ $first = 1 ]; then
    first=0
    echo 0 > $brnf; path netfilter-off
    echo 1 > $brnf; iptables -A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
    path netfilter-on
    iptables -F FORWARD; echo 0 > $brnf
  fi
  begun=$(now); down $n; took down $n $begun
  while [ "$(links)" -gt "$base" ]; do sleep 0.01; done; took gone $n $begun
done
"""

_TIMING = re.compile(r"^bare-shape (up|down|gone) (\d+) ([\d.]+)$", re.MULTILINE)
_SECTION = re.compile(r"^--- (ping|iperf3) (\S+) ---\n(.*?)^--- end ---$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class BarePath:
    """TCP and RTT between a host of each site, over both routers, one variant."""

    tcp_mbit: float | None
    rtt_mean_ms: float | None


@dataclass
class BareShape:
    """What one helper run measured: seconds per N, and the path per variant."""

    up_s: dict[int, float] = field(default_factory=dict)
    down_s: dict[int, float] = field(default_factory=dict)  # every `ip netns del` returned
    gone_s: dict[int, float] = field(default_factory=dict)  # every link gone, from the start
    paths: dict[str, BarePath] = field(default_factory=dict)


def parse_bare(text: str) -> BareShape:
    """The helper's output (BARE_SHAPE) read; a tool's unreadable output is None."""
    shape = BareShape()
    for what, n, seconds in _TIMING.findall(text):
        table = {"up": shape.up_s, "down": shape.down_s, "gone": shape.gone_s}[what]
        table[int(n)] = float(seconds)
    found: dict[str, dict[str, float | None]] = {}
    for tool, variant, body in _SECTION.findall(text):
        read_section(tool, body, found.setdefault(variant, {"tcp": None, "rtt": None}))
    shape.paths = {variant: BarePath(v["tcp"], v["rtt"]) for variant, v in found.items()}
    return shape


def bare_argv(sizes: list[int], seconds: float, pings: int) -> list[str]:
    return ["bash", "-c", BARE_SHAPE, "bare-shape", f"{seconds:g}", str(pings),
            *(str(n) for n in sizes)]


def bare_shape(runtime: HostRuntime, run_id: str, sizes: list[int], seconds: float,
               pings: int) -> BareShape:
    """The two-site shape of bare namespaces at each N (helper container: veth.py's)."""
    from vnetbench.engines.base import EngineError, ToolSpec
    from vnetbench.errors import EnvironmentProblem
    from vnetbench.runtime.labels import run_labels

    try:
        out = runtime.run_helper(ToolSpec(
            tuple(bare_argv(sizes, seconds, pings)),
            run_labels(run_id, "calibration", "bare-shape"), network="none",
            capabilities=("NET_ADMIN", "SYS_ADMIN"), security_options=("apparmor=unconfined",)))
    except EngineError as error:
        raise EnvironmentProblem(
            "The bare namespaces' two-site shape could not be measured: a helper container "
            f"with NET_ADMIN and SYS_ADMIN failed ({(error.stderr or '').strip()[-300:]})."
        ) from None
    return parse_bare(str(out))


# -- the two-router path beside vnetbench's, round after round (runs/calibration.py) --
#
# One helper (as above, but kept running) holds two bare two-router paths for every
# round: A (198.18.0.0/16), measured with the bridges' netfilter off, as Mininet's,
# and B (198.19.0.0/16), bridges' netfilter on with a conntrack rule in FORWARD as
# the engine's host has, and in each host and router namespace the engine's own rules
# (its embedded DNS's NAT chains) read from vnetbench's running path. A NAT table
# turns connection tracking on in its namespace, so B tracks each packet where
# vnetbench's path does: what is left between B and vnetbench's path is vnetbench's
# own (docs/studies/2026-12-testbed-cost.md, "The RTT's rest").

# shape PREFIX O: bridges PREFIXbb, PREFIXs1, PREFIXs2; routers PREFIXr1, PREFIXr2; hosts
# PREFIXh1 (198.O.1.2) and PREFIXh2 (198.O.2.2); research/rtt_residual.py builds its too
BARE_PATH_SHAPE = r"""
shape() {  # $1: prefix; $2: 198.$2.0.0/16
  p=$1; o=$2
  for b in ${p}bb ${p}s1 ${p}s2; do ip link add $b type bridge; ip link set $b up; done
  for r in 1 2; do
    other=$((3 - r)); ns=${p}r$r
    ip netns add $ns; ip -n $ns link set lo up
    ip link add ${p}rb$r type veth peer name b0 netns $ns
    ip link add ${p}rs$r type veth peer name s0 netns $ns
    ip link set ${p}rb$r master ${p}bb up; ip link set ${p}rs$r master ${p}s$r up
    ip -n $ns address add 198.$o.0.$r/24 dev b0; ip -n $ns link set b0 up
    ip -n $ns address add 198.$o.$r.1/24 dev s0; ip -n $ns link set s0 up
    ip -n $ns route add 198.$o.$other.0/24 via 198.$o.0.$other
    [ "$(ip netns exec $ns cat /proc/sys/net/ipv4/ip_forward)" = 1 ] \
      || { echo "router namespace $ns does not forward" >&2; exit 1; }
  done
  for i in 1 2; do
    ns=${p}h$i
    ip netns add $ns; ip -n $ns link set lo up
    ip link add ${p}e$i type veth peer name eth0 netns $ns
    ip link set ${p}e$i master ${p}s$i up
    ip -n $ns address add 198.$o.$i.2/24 dev eth0; ip -n $ns link set eth0 up
    ip -n $ns route add default via 198.$o.$i.1
  done
}
"""

BARE_PATHS_UP = r"""
set -e
mkdir -p /tmp/proc && mount -t proc proc /tmp/proc  # this namespace's sysctls, writable
iptables -A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
""" + BARE_PATH_SHAPE + """shape A 18
shape B 19
"""

# $1 round, $2 seconds of TCP, $3 pings, $4...: the bare variants in order (off, rules)
BARE_PATHS_ROUND = r"""
round=$1; seconds=$2; pings=$3; shift 3
brnf=/tmp/proc/sys/net/bridge/bridge-nf-call-iptables
for variant in "$@"; do
  case $variant in
    off) want=0; p=A; to=198.18.2.2 ;;
    rules) want=1; p=B; to=198.19.2.2 ;;
  esac
  # a variant whose bridge netfilter could not be set is not measured (left out, said)
  # rather than measured as the other one
  echo $want > $brnf 2>/dev/null
  if [ "$(cat $brnf 2>/dev/null)" != "$want" ]; then
    echo "--- not measured: $variant round $round: bridge netfilter cannot be set ---"
    continue
  fi
  ip netns exec ${p}h2 iperf3 -s -1 -D
  for i in $(seq 50); do ip netns exec ${p}h2 ss -ltn | grep -q :5201 && break; sleep 0.05; done
  ip netns exec ${p}h1 ping -c "$pings" -i 0.01 -W 1 $to > /tmp/ping.out 2>&1 || true
  echo "--- ping $variant round $round ---"; cat /tmp/ping.out; echo "--- end ---"
  timeout $((seconds + 30)) ip netns exec ${p}h1 iperf3 -c $to -t "$seconds" -J \
    > /tmp/tcp.out 2>&1 || true
  echo "--- iperf3 $variant round $round ---"; cat /tmp/tcp.out; echo "--- end ---"
done
echo 0 > $brnf 2>/dev/null || true
"""

# in a probe of vnetbench's first agent: $1 the second agent's address, $2 round, $3
# seconds, $4 pings, $5 the port of the server kept in the second agent
TESTBED_ROUND = r"""
to=$1; round=$2; seconds=$3; pings=$4; port=$5
ping -c "$pings" -i 0.01 -W 1 "$to" > /tmp/ping.out 2>&1 || true
echo "--- ping vnetbench round $round ---"; cat /tmp/ping.out; echo "--- end ---"
timeout $((seconds + 30)) iperf3 -c "$to" -p "$port" -t "$seconds" -J > /tmp/tcp.out 2>&1 || true
echo "--- iperf3 vnetbench round $round ---"; cat /tmp/tcp.out; echo "--- end ---"
"""

# the engine's rules in a container's namespace, from whichever iptables holds them
READ_RULES = ("s=$(iptables-save 2>/dev/null); case $s in *DOCKER_*) printf '%s\\n' \"$s\" ;; "
              "*) iptables-legacy-save ;; esac")

_ROUND_SECTION = re.compile(r"^--- (ping|iperf3) (\S+) round (\d+) ---\n(.*?)^--- end ---$",
                            re.MULTILINE | re.DOTALL)
ENGINE_CHAIN = "DOCKER_"  # the embedded DNS's chains: DOCKER_OUTPUT, DOCKER_POSTROUTING


def engine_rules(saved: str) -> str:
    """iptables-restore input holding only the engine's rules of an iptables-save of a
    container's namespace: its nat table's chains and jumps naming DOCKER_ (vnetbench's
    own rules, a shaper's NFQUEUE or drops, are not the engine's and would break a
    path without their program); "" when it holds none."""
    kept: list[str] = []
    table: list[str] = []  # the nat table's lines so far; [] outside it
    for line in map(str.strip, saved.splitlines()):
        if line.startswith("*"):
            table = [line] if line == "*nat" else []
        elif table and line == "COMMIT":
            if any(rule.startswith("-A") for rule in table):
                kept += [*table, "COMMIT"]
            table = []
        elif table and line.startswith(":"):
            table.append(line.split(" [")[0] + " [0:0]")  # the chain, its counters anew
        elif table and line.startswith("-A") and ENGINE_CHAIN in line:
            table.append(line)
    return "\n".join(kept) + "\n" if kept else ""


def restore_command(saved: str) -> str:
    """The iptables-restore of the iptables that saved it (legacy or nf_tables)."""
    return "iptables-legacy-restore" if "(legacy)" in saved else "iptables-restore"


def rules_commands(agent_saved: str, router_saved: str) -> list[str]:
    """The shell commands that put the engine's rules of vnetbench's agent and router
    (their iptables-save) into path B's host and router namespaces; none when either
    holds no rule of the engine's (B would be A: no figure against it)."""
    agent, router = engine_rules(agent_saved), engine_rules(router_saved)
    if not agent or not router:
        return []
    return [f"ip netns exec {ns} {restore_command(saved)} <<'RULES'\n{rules}RULES"
            for saved, rules, names in ((agent_saved, agent, ("Bh1", "Bh2")),
                                        (router_saved, router, ("Br1", "Br2")))
            for ns in names]


def bare_paths_script(commands: list[str]) -> str:
    """The helper's set-up: both bare paths, then the engine's rules into B."""
    return BARE_PATHS_UP + "\n".join(commands) + "\n"


def read_section(tool: str, body: str, values: dict[str, float | None]) -> None:
    """One tool's section into a path's values (RTT from ping, TCP from iperf3); an
    unreadable output leaves its value None."""
    if tool == "ping":
        with suppress(PingParseError):
            values["rtt"] = parse_ping(body).rtt_mean_ms
    else:
        with suppress(IperfError):
            values["tcp"] = parse_iperf_json(body).receiver_mbit


def parse_rounds(text: str) -> dict[int, dict[str, BarePath]]:
    """Round -> variant -> its path (RTT, TCP) from TESTBED_ROUND's and
    BARE_PATHS_ROUND's output; a tool's unreadable output is None."""
    found: dict[int, dict[str, dict[str, float | None]]] = {}
    for tool, variant, number, body in _ROUND_SECTION.findall(text):
        read_section(tool, body, found.setdefault(int(number), {}).setdefault(
            variant, {"tcp": None, "rtt": None}))
    return {number: {variant: BarePath(v["tcp"], v["rtt"]) for variant, v in paths.items()}
            for number, paths in found.items()}


@contextmanager
def bare_paths(runtime: HostRuntime, run_id: str, commands: list[str]) -> Iterator[str]:
    """The helper with both bare paths (B with `commands`: rules_commands) up for the
    `with` block, its container's name given; removed after, whatever happens."""
    from vnetbench.engines.base import EngineError, ToolSpec
    from vnetbench.errors import EnvironmentProblem
    from vnetbench.runtime.interrupts import shielded, teardown_guard
    from vnetbench.runtime.labels import run_labels

    name = f"{run_id}-bare-paths"
    with teardown_guard():
        try:
            try:
                runtime.start_helper(ToolSpec(
                    ("sleep", "infinity"), run_labels(run_id, "calibration", "bare-paths"),
                    name=name, entrypoint="", network="none",
                    capabilities=("NET_ADMIN", "SYS_ADMIN"),
                    security_options=("apparmor=unconfined",), init=True, keep=True))
                done = runtime.execute(name, ["bash", "-c", bare_paths_script(commands)])
                said = "" if done.exit_code == 0 else (
                    done.stderr or done.stdout or f"exit {done.exit_code}")
            except EngineError as error:
                said = error.stderr or str(error)
            if said:
                raise EnvironmentProblem(
                    "The bare two-router paths could not be built in their helper container "
                    f"(NET_ADMIN and SYS_ADMIN): {said.strip()[-300:]}")
            yield name
        finally:
            with shielded():
                runtime.remove(name)


def bare_round(runtime: HostRuntime, helper: str, number: int, seconds: int, pings: int,
               variants: list[str]) -> str:
    """One round's bare paths (variants 'off', 'rules' in order): their marked output."""
    return runtime.execute(helper, ["bash", "-c", BARE_PATHS_ROUND, "bare-round", str(number),
                                    str(seconds), str(pings), *variants]).stdout
