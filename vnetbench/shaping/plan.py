"""From a link profile to the exact commands that impose it: pure functions.

Convention (Mininet's): a profile applies to each direction across a
segment. Every container on a segment gets the segment's profile on its
interface there, so a packet crossing the segment meets it once:

- where the kernel has netem: on the sender's egress, netem (delay, jitter,
  loss, with an explicit queue `limit` sized for rate x delay) with a tbf
  child for the rate;
- where it has not (no sch_netem, as on the machine this was written on):
  rate with tbf on the sender's egress; loss with iptables `statistic` and
  delay/jitter with a userspace delay line on NFQUEUE, both on the
  *receiving* side, because drops on a sender's own output path are seen by
  its own TCP stack and do not behave like network loss. The NFQUEUE rule has
  no `--queue-bypass`: with its delay line gone the kernel drops what the rule
  queues (the path goes dead, and the pass says so) instead of passing it on
  undelayed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vnetbench.core.units import burst_bytes
from vnetbench.errors import UserError

if TYPE_CHECKING:
    from vnetbench.model.topology import LinkProfile

DEV = "{dev}"  # replaced by the helper with the interface that holds the address
TBF_LATENCY_MS = 50
MTU_BYTES = 1514
DEFAULT_QUEUE_PACKETS = 1000


@dataclass(frozen=True)
class DelayLine:
    """A userspace delay line on one NFQUEUE queue."""

    queue: int
    delay_ms: float
    jitter_ms: float
    reorder: bool


@dataclass(frozen=True)
class InterfacePlan:
    commands: list[list[str]] = field(default_factory=list)
    delay_line: DelayLine | None = None



def netem_limit(profile: LinkProfile) -> int:
    """netem's queue in packets: what the link holds in rate x delay, with headroom."""
    if not profile.rate:
        return DEFAULT_QUEUE_PACKETS
    in_flight = profile.rate / 8 * (profile.delay + profile.jitter) / 1000 / MTU_BYTES
    return max(DEFAULT_QUEUE_PACKETS, math.ceil(2 * in_flight))


def tbf(parent: list[str], rate: int) -> list[str]:
    return ["tc", "qdisc", "replace", "dev", DEV, *parent, "tbf", "rate", f"{rate}bit",
            "burst", str(burst_bytes(rate)), "latency", f"{TBF_LATENCY_MS}ms"]


def offload_commands(profile: LinkProfile) -> list[list[str]]:
    if profile.offloads:
        return []
    return [["ethtool", "-K", DEV, "tso", "off", "gso", "off", "gro", "off"]]


def plan_with_netem(profile: LinkProfile) -> InterfacePlan:
    commands = offload_commands(profile)
    if profile.delay or profile.jitter or profile.loss:
        netem = ["tc", "qdisc", "replace", "dev", DEV, "root", "handle", "1:", "netem",
                 "limit", str(netem_limit(profile))]
        if profile.delay or profile.jitter:
            netem += ["delay", f"{profile.delay:g}ms"]
            if profile.jitter:
                netem += [f"{profile.jitter:g}ms"]
        if profile.loss:
            netem += ["loss", f"{profile.loss:g}%"]
        commands.append(netem)
        if profile.rate:
            commands.append(tbf(["parent", "1:1", "handle", "10:"], profile.rate))
    elif profile.rate:
        commands.append(tbf(["root", "handle", "1:"], profile.rate))
    return InterfacePlan(commands)


def plan_without_netem(profile: LinkProfile, queue: int) -> InterfacePlan:
    commands = offload_commands(profile)
    if profile.rate:
        commands.append(tbf(["root", "handle", "1:"], profile.rate))
    if profile.loss:
        commands.append(["iptables", "-t", "raw", "-A", "PREROUTING", "-i", DEV, "-m",
                         "statistic", "--mode", "random", "--probability",
                         f"{profile.loss / 100:.6f}", "-j", "DROP"])
    delay_line = None
    if profile.delay or profile.jitter:
        commands.append(["iptables", "-t", "mangle", "-A", "PREROUTING", "-i", DEV, "-j",
                         "NFQUEUE", "--queue-num", str(queue)])
        delay_line = DelayLine(queue, profile.delay, profile.jitter, profile.jitter_reorder)
    return InterfacePlan(commands, delay_line)


def needed_mechanisms(profile: LinkProfile, netem: bool) -> set[str]:
    if netem:
        return {"netem"} | ({"tbf"} if profile.rate else set())
    needed = {"tbf"} if profile.rate else set()
    needed |= {"statistic"} if profile.loss else set()
    needed |= {"nfqueue"} if profile.delay or profile.jitter else set()
    return needed


def plan_interface(profile: LinkProfile, available: set[str], queue: int = 0) -> InterfacePlan:
    """The commands for one interface, with netem where the kernel has it."""
    if not profile.is_shaped and profile.offloads:
        return InterfacePlan()
    netem = "netem" in available
    missing = needed_mechanisms(profile, netem) - available
    if missing:
        raise UserError(
            f"This kernel lacks {', '.join(sorted(missing))}, which the link profile "
            f"'{profile.describe()}' needs, so it cannot be emulated "
            "here. Still possible: "
            + ", ".join(sorted(f"{m}" for m in available if m in
                               ("netem", "tbf", "statistic", "nfqueue")))
            + " ('vnetbench doctor' shows the kernel's own answers). Drop that setting or "
            "run on a kernel that has it."
        )
    return plan_with_netem(profile) if netem else plan_without_netem(profile, queue)
