"""Where the two-router path's RTT goes beyond the bare namespaces
(docs/studies/2026-12-testbed-cost.md).

`calibrate` compares vnetbench's baseline path (agent, router, router, agent on
the engine's bridges) with bare namespaces as Mininet builds them. With the bridges'
netfilter on in both, vnetbench's path was still 7-20 % slower. One difference: the
engine puts NAT rules for its embedded DNS (127.0.0.11) in every container's
namespace, which switches connection tracking on there, so each ping is tracked in
both agents and both routers; the bare namespaces track nothing.

This brings the seed's two-site baseline up (`vnetbench up`), then one privileged
helper of the tools image (the host's PID namespace, no network of its own) builds
two bare two-router paths in its own namespace, bridges' netfilter on with a
conntrack rule in FORWARD as calibrate's: A as they are, B with the rules read from
the running agent and router copied into each host and router namespace. It pings
A, B and vnetbench's path (T, entered with nsenter, so every ping runs from one
process context) in turn, the order rotating each round, and prints each round's
mean RTT and the ratios over rounds (Hodges-Lehmann, the exact signed-rank p):

    python -m research.rtt_residual OUT [--rounds 18] [--pings 500] [--tcp-rounds 12]
        [--tcp-seconds 5]

OUT keeps the helper's output (out.txt, with the rules read and each namespace's
conntrack count) and the stack's run directory; the stack is brought down at the end.

Then the same three paths' TCP: one iperf3 stream of `--tcp-seconds` (default 5; 0: no
TCP) per path and round, for `--tcp-rounds` rounds (default 12), the order rotating
likewise, the receiver's rate compared as the RTT is. Last, vnetbench's path's TCP
two ways in turn: from a helper entering the agents' namespaces (N, as above) and
from probe containers joined to them (P, as vnetbench's passes and `calibrate`).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from statistics import mean

import numpy as np

from vnetbench.analysis.stats import hodges_lehmann, signed_rank_p
from vnetbench.measure.bare import BARE_PATH_SHAPE
from vnetbench.measure.iperf import IperfError, parse_iperf_json
from vnetbench.runtime.labels import ROLE, RUN

ROOT = Path(__file__).resolve().parents[1]
TOOLS = "vnetbench/tools:trixie"

# $1 agent1 pid, $2 agent2 address, $3 rounds, $4 pings, $5 router1 pid, $6 agent2 pid,
# $7 TCP rounds, $8 TCP seconds
HELPER = r"""
set -e
agent=$1; target=$2; rounds=$3; pings=$4; router=$5; peer=$6; tcp_rounds=$7; secs=$8
mkdir -p /tmp/proc && mount -t proc proc /tmp/proc
echo 1 > /tmp/proc/sys/net/bridge/bridge-nf-call-iptables
iptables -A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
""" + BARE_PATH_SHAPE + r"""
shape A 18
shape B 19
ipt=iptables
nsenter -t "$agent" -n iptables-save | grep -q DOCKER_OUTPUT || ipt=iptables-legacy
nsenter -t "$agent" -n $ipt-save > /tmp/agent.rules
nsenter -t "$router" -n $ipt-save > /tmp/router.rules
echo "=== the agent's rules ($ipt) ==="; cat /tmp/agent.rules
echo "=== the router's rules ($ipt) ==="; cat /tmp/router.rules
for ns in Bh1 Bh2; do ip netns exec $ns $ipt-restore < /tmp/agent.rules; done
for ns in Br1 Br2; do ip netns exec $ns $ipt-restore < /tmp/router.rules; done
ping_path() {  # $1: A, B or T; $2: round
  case $1 in
    A) ip netns exec Ah1 ping -c "$pings" -i 0.01 -W 1 198.18.2.2 ;;
    B) ip netns exec Bh1 ping -c "$pings" -i 0.01 -W 1 198.19.2.2 ;;
    T) nsenter -t "$agent" -n ping -c "$pings" -i 0.01 -W 1 "$target" ;;
  esac > /tmp/ping.out 2>&1 || true
  echo "--- ping $1 round $2 ---"; cat /tmp/ping.out; echo "--- end ---"
}
orders=("A B T" "B T A" "T A B" "A T B" "T B A" "B A T")
for r in $(seq 1 "$rounds"); do
  for path in ${orders[$(( (r - 1) % 6 ))]}; do ping_path "$path" "$r"; done
done
tcp_path() {  # $1: A, B or T; $2: round. A one-off server, then one stream to it.
  case $1 in
    A) server="ip netns exec Ah2"; client="ip netns exec Ah1"; to=198.18.2.2 ;;
    B) server="ip netns exec Bh2"; client="ip netns exec Bh1"; to=198.19.2.2 ;;
    T) server="nsenter -t $peer -n"; client="nsenter -t $agent -n"; to=$target ;;
  esac
  $server iperf3 -s -1 -D -p 5299
  sleep 0.5
  $client iperf3 -c "$to" -p 5299 -t "$secs" -J > /tmp/tcp.out 2>&1 || true
  echo "--- tcp $1 round $2 ---"; cat /tmp/tcp.out; echo "--- end ---"
}
if [ "$secs" -gt 0 ]; then
  for r in $(seq 1 "$tcp_rounds"); do
    for path in ${orders[$(( (r - 1) % 6 ))]}; do tcp_path "$path" "$r"; done
  done
fi
echo "=== conntrack entries per namespace ==="
for ns in Ah1 Ar1 Bh1 Br1; do
  echo "$ns $(ip netns exec $ns cat /proc/sys/net/netfilter/nf_conntrack_count 2>&1)"
done
echo "T-agent $(nsenter -t "$agent" -n cat /proc/sys/net/netfilter/nf_conntrack_count 2>&1)"
echo "T-router $(nsenter -t "$router" -n cat /proc/sys/net/netfilter/nf_conntrack_count 2>&1)"
"""

SECTION = re.compile(r"^--- ping (\w) round (\d+) ---\n(.*?)^--- end ---$", re.M | re.S)
TCP_SECTION = re.compile(r"^--- tcp (\w) round (\d+) ---\n(.*?)^--- end ---$", re.M | re.S)
PATHS = {"A": "bare", "B": "bare with the engine's rules", "T": "vnetbench"}
WAYS = {"N": "vnetbench's path entered by a helper", "P": "vnetbench's path from probes"}
TIME = re.compile(r"time=([0-9.]+) ms")


def docker(*argv: str, check: bool = True) -> str:
    """A docker command's stdout; `check=False`: whatever its status (iperf3's error is
    in its JSON)."""
    return subprocess.run(["docker", *argv], capture_output=True, text=True,
                          check=check).stdout.strip()


def of_run(run_id: str, role: str) -> list[str]:
    """`docker ps` filters: the run's containers of one role (vnetbench's labels)."""
    return ["--filter", f"label={RUN}={run_id}", "--filter", f"label={ROLE}={role}"]


def labelled(run_id: str) -> list[str]:
    return ["--label", f"{RUN}={run_id}", "--label", f"{ROLE}=investigation"]


def two_ways(run_id: str, agents: list[str], pids: tuple[str, str], target: str,
             rounds: int, seconds: int) -> str:
    """vnetbench's path's TCP measured two ways in turn, each round's order swapped:
    N from a privileged helper entering the agents' namespaces (as the helper above),
    P from probe containers joined to them (`--network container:`, as vnetbench's
    passes and `calibrate` measure it); sections as the helper's."""
    client = f"iperf3 -c {target} -p 5299 -t {seconds} -J"

    def entered() -> str:
        script = (f"nsenter -t {pids[1]} -n iperf3 -s -1 -D -p 5299; sleep 0.5; "
                  f"nsenter -t {pids[0]} -n {client}")
        return docker("run", "--rm", "--privileged", "--pid", "host", "--network", "none",
                      *labelled(run_id), "--entrypoint", "sh", TOOLS, "-c", script, check=False)

    def probes() -> str:
        docker("run", "-d", "--rm", "--network", f"container:{agents[1]}", *labelled(run_id),
               TOOLS, "iperf3", "-s", "-1", "-p", "5299")
        time.sleep(0.5)
        return docker("run", "--rm", "--network", f"container:{agents[0]}", *labelled(run_id),
                      TOOLS, *client.split(), check=False)

    sections = []
    for number in range(1, rounds + 1):
        for way, measure_tcp in (("N", entered), ("P", probes))[::1 if number % 2 else -1]:
            sections += [f"--- tcp {way} round {number} ---", measure_tcp(), "--- end ---"]
    return "\n".join(sections)


def measure(out: Path, rounds: int, pings: int, tcp_rounds: int, tcp_seconds: int) -> str:
    """The stack up, the helper's pings, the stack down: the helper's output."""
    vnetbench = [sys.executable, "-m", "vnetbench"]
    run_id = subprocess.run([*vnetbench, "up", "-t", str(ROOT / "topologies" / "two-sites.yml"),
                             "--out", str(out)], capture_output=True, text=True,
                            check=True).stdout.strip().splitlines()[-1]
    try:
        agents = sorted(docker("ps", "-q", *of_run(run_id, "agent")).split())
        router = docker("ps", "-q", *of_run(run_id, "switch")).split()[0]
        pid = {c: docker("inspect", "-f", "{{.State.Pid}}", c)
               for c in (*agents[:2], router)}
        # each TCP round: three paths' streams, then two ways' (each a container or two)
        tcp_s = tcp_rounds * (3 * (tcp_seconds + 1) + 2 * (tcp_seconds + 2)) if tcp_seconds else 0
        print(f"pinging three paths, {rounds} rounds of {pings} pings 10 ms apart, then "
              f"{tcp_rounds if tcp_seconds else 0} rounds of {tcp_seconds} s TCP streams: "
              f"about {(rounds * pings * 3 * 0.016 + tcp_s) / 60:.0f} min",
              file=sys.stderr, flush=True)
        target = docker("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} "
                        "{{end}}", agents[1]).split()[0]
        helper = docker("run", "--rm", "--privileged", "--pid", "host", "--network", "none",
                        *labelled(run_id), "--entrypoint", "bash", TOOLS, "-c", HELPER,
                        "helper", pid[agents[0]], target, str(rounds), str(pings),
                        pid[router], pid[agents[1]], str(tcp_rounds), str(tcp_seconds))
        if not tcp_seconds:
            return helper
        return helper + "\n" + two_ways(run_id, agents[:2], (pid[agents[0]], pid[agents[1]]),
                                         target, tcp_rounds, tcp_seconds)
    finally:
        subprocess.run([*vnetbench, "down", run_id], capture_output=True, check=False)


def mean_rtts(text: str) -> dict[int, dict[str, float]]:
    """Each round's mean RTT (ms) per path."""
    found: dict[int, dict[str, float]] = {}
    for path, number, body in SECTION.findall(text):
        found.setdefault(int(number), {})[path] = mean(float(t) for t in TIME.findall(body))
    return found


def tcp_rates(text: str) -> dict[int, dict[str, float]]:
    """Each round's TCP rate (Mbit/s, as the receiver counted it) per path; a stream
    that failed is left out, and its round's ratios with it."""
    found: dict[int, dict[str, float]] = {}
    for path, number, body in TCP_SECTION.findall(text):
        with suppress(IperfError):
            found.setdefault(int(number), {})[path] = parse_iperf_json(body).receiver_mbit
    return found


def ratio_lines(rounds: dict[int, dict[str, float]], what: str,
                pairs: tuple[tuple[str, str], ...] = (("B", "A"), ("T", "A"), ("T", "B")),
                ) -> list[str]:
    """Each pair's ratio (B/A, T/A and T/B) over the rounds that have both paths:
    Hodges-Lehmann of the log ratios with its interval, the exact signed-rank p."""
    lines = []
    for top, bottom in pairs:
        both = [v[top] / v[bottom] for v in rounds.values() if top in v and bottom in v]
        if not both:
            lines.append(f"{what} {top}/{bottom}: no round has both")
            continue
        logs = np.log(both)
        centre, low, high = hodges_lehmann(logs)
        lines.append(f"{what} {top}/{bottom}: {np.exp(centre):.3f} [{np.exp(low):.3f}, "
                     f"{np.exp(high):.3f}], p {signed_rank_p(logs):.4f}, {top} above "
                     f"{bottom} in {int((logs > 0).sum())} of {logs.size} rounds")
    return lines


def table(rounds: dict[int, dict[str, float]], unit: str, scale: float,
          paths: dict[str, str] = PATHS) -> list[str]:
    header = " | ".join(f"{p}: {name}, {unit}" for p, name in paths.items())
    lines = [f"| round | {header} |", "|---" * (len(paths) + 1) + "|"]
    lines += ["| " + " | ".join([str(r), *(f"{v[p] * scale:.0f}" if p in v else "failed"
                                            for p in paths)]) + " |"
              for r, v in sorted(rounds.items()) if any(p in v for p in paths)]
    return lines


def report(text: str) -> str:
    rtts = mean_rtts(text)
    lines = [*table(rtts, "µs", 1000), "", *ratio_lines(rtts, "RTT")]
    rates = tcp_rates(text)
    if any(p in v for v in rates.values() for p in PATHS):
        lines += ["", *table(rates, "Mbit/s", 1), "", *ratio_lines(rates, "TCP")]
    if any("P" in v for v in rates.values()):
        lines += ["", *table(rates, "Mbit/s", 1, WAYS), "",
                  *ratio_lines(rates, "TCP", (("P", "N"),))]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rounds", type=int, default=18)
    parser.add_argument("--pings", type=int, default=500)
    parser.add_argument("--tcp-rounds", type=int, default=12)
    parser.add_argument("--tcp-seconds", type=int, default=5, help="0: no TCP")
    parser.add_argument("--read", action="store_true", help="only read OUT/out.txt again")
    args = parser.parse_args()
    kept = args.out / "out.txt"
    if args.rounds < 1 or args.pings < 1 or args.tcp_rounds < 1:
        parser.error(f"--rounds {args.rounds} --pings {args.pings} --tcp-rounds "
                     f"{args.tcp_rounds}: each must be 1 or more")
    if args.tcp_seconds < 0:
        parser.error(f"--tcp-seconds {args.tcp_seconds}: 0 (no TCP) or more")
    if args.read and not kept.is_file():
        parser.error(f"--read: {kept} does not exist; measure first (without --read)")
    if not args.read:
        args.out.mkdir(parents=True, exist_ok=True)
        kept.write_text(measure(args.out.resolve(), args.rounds, args.pings,
                                args.tcp_rounds, args.tcp_seconds) + "\n")
    print(report(kept.read_text()))


if __name__ == "__main__":
    main()
