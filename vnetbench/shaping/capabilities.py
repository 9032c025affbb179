"""Kernel capability detection: try each mechanism in a throwaway namespace.

A tools container with no network (its own empty namespace) and NET_ADMIN
tries to create each qdisc or device on its loopback; the kernel's own
answer says whether the feature exists. Nothing on the host changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from vnetbench.engines.base import EngineError, HostRuntime, ToolSpec
from vnetbench.runtime.labels import helper_labels

# name -> (command run in the throwaway namespace, what it is for)
MECHANISMS: dict[str, tuple[str, str]] = {
    "netem": ("tc qdisc add dev lo root netem delay 1ms", "delay, jitter, loss in the kernel"),
    "tbf": ("tc qdisc add dev lo root tbf rate 1mbit burst 16kb latency 50ms", "rate limits"),
    "htb": ("tc qdisc add dev lo root handle 1: htb default 1", "rate limits (classful)"),
    "fq": ("tc qdisc add dev lo root fq", "pacing"),
    "ifb": ("ip link add vbifb0 type ifb", "shaping the ingress direction"),
    "ingress": ("tc qdisc add dev lo handle ffff: ingress", "redirecting ingress to ifb"),
    "nfqueue": ("iptables-nft -A INPUT -j NFQUEUE --queue-num 0 --queue-bypass",
                "userspace delay line"),
    "statistic": ("iptables-nft -A INPUT -m statistic --mode random --probability 0.5 -j DROP",
                  "random loss"),
}


@dataclass(frozen=True)
class Capability:
    name: str
    available: bool
    purpose: str
    answer: str  # the kernel's (or tool's) own words when it refused


RESET = "tc qdisc del dev lo root 2>/dev/null; tc qdisc del dev lo ingress 2>/dev/null; true"


def probe_script() -> str:
    lines = []
    for name, (command, _) in MECHANISMS.items():
        lines.append(f'if out=$({command} 2>&1); then echo "{name}|yes|"; '
                     f'else echo "{name}|no|$(echo $out | tr "|" " ")"; fi; {RESET}')
    return "\n".join(lines)


def parse_probe_output(text: str) -> list[Capability]:
    found = []
    for line in text.splitlines():
        parts = line.split("|", 2)
        if len(parts) == 3 and parts[0] in MECHANISMS:
            found.append(Capability(parts[0], parts[1] == "yes", MECHANISMS[parts[0]][1],
                                    parts[2].strip()))
    return found


def detect_capabilities(runtime: HostRuntime) -> list[Capability]:
    """Each mechanism tried in a throwaway namespace on this machine's engine."""
    try:
        output = runtime.run_helper(ToolSpec(
            ("sh", "-c", probe_script()), helper_labels("capability-probe", "local"),
            network="none", capabilities=("NET_ADMIN",)))
    except EngineError as error:
        return [Capability(name, False, purpose, f"probe failed: {error}")
                for name, (_, purpose) in MECHANISMS.items()]
    return parse_probe_output(str(output))
