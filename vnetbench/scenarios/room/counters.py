"""The kernel's own counters around a pass: what each shaped link dropped or queued
(tc's qdisc statistics, the loss rule's packet count) and what each machine's TCP
did about it (retransmissions, timeouts, those it found unneeded, the accept queue),
read once before the measurement and once after it, never during it (on 2 cores
nothing periodic may run while measuring). One exec per namespace per snapshot
(SCRIPT); the parsers are pure.

Where loss is applied decides where it is counted: without sch_netem (this kernel)
a link's loss is an iptables `statistic` DROP rule in the raw table on the receiving
side, so its drops are that rule's packet count (`iptables-save -c`), not a qdisc's;
its rate is tbf on the sender's egress, whose drops (queue full) and overlimits
(a packet waited for tokens) are the qdisc's. With netem, loss is netem's own drops.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from ipaddress import IPv4Address, IPv4Network
from typing import Any

from vnetbench.engines.base import EngineError, RunOnEngine
from vnetbench.shaping.namespaces import Placed, run_in_namespaces

SECTION = "@@vnetbench-counters@@"
# tc and iptables read what the namespace's shaper set (a shaper has NET_ADMIN; in a
# container without it iptables-save says nothing, which leaves the rule counts empty)
SCRIPT = f"; echo {SECTION}; ".join([
    "tc -s -j qdisc show 2>/dev/null", "iptables-save -c -t raw 2>/dev/null",
    "ip -j -4 addr 2>/dev/null", "cat /proc/net/netstat /proc/net/snmp",
    "cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null; true"])
READERS = 8  # namespaces read at once (the shaping keeper's READERS)
# the qdiscs a device has when nobody shaped it: their counters are the device's own
UNSHAPED_QDISCS = frozenset({"noqueue", "mq", "pfifo_fast", "fq_codel"})
# the TCP counters kept, by /proc/net/netstat's or /proc/net/snmp's line prefix
TCP_COUNTERS = {"Tcp": ("OutSegs", "RetransSegs"),
                "TcpExt": ("TCPTimeouts", "TCPLostRetransmit", "ListenOverflows",
                           "ListenDrops", "TCPSpuriousRTOs", "TCPDSACKRecv", "TCPLossUndo",
                           "TCPDSACKUndo", "TCPSynRetrans")}
# the counters of a retransmission found unneeded: a kernel without one leaves it None
# (unknown), not 0 (none), so the attribution can say it cannot tell
UNDO_COUNTERS = ("TCPSpuriousRTOs", "TCPDSACKRecv", "TCPLossUndo", "TCPDSACKUndo")
# a SYN or SYN-ACK sent again: its timer's doing (1 s, then doubling), in TCPTimeouts too
# (tcp_retransmit_timer, tcp_syn_ack_timeout), and never undone
HANDSHAKE_COUNTER = "TCPSynRetrans"
RULE = re.compile(r"^\[(\d+):(\d+)\] -A (\S+) (.*)$")


class CounterFormatError(ValueError):
    """A tool's output is not in the format its parser reads."""


@dataclass(frozen=True)
class Qdisc:
    """One qdisc's statistics (`tc -s -j qdisc show`): counters since it was made, but
    `backlog` (bytes) and `qlen` (packets), which are queued now."""

    dev: str
    kind: str
    handle: str
    root: bool
    packets: int
    drops: int
    overlimits: int
    requeues: int
    backlog: int
    qlen: int


@dataclass(frozen=True)
class Snapshot:
    """One namespace's counters at one moment."""

    qdiscs: tuple[Qdisc, ...]
    loss_drops: Mapping[str, int]  # device -> packets its raw DROP rules dropped
    addresses: Mapping[str, str]  # device -> its IPv4 address
    tcp: Mapping[str, int]  # TCP_COUNTERS' names -> value
    queue_drops: int  # the delay lines' queues: dropped (full) or undeliverable


def parse_qdiscs(text: str) -> tuple[Qdisc, ...]:
    """`tc -s -j qdisc show`: a JSON list, one object per qdisc, its statistics beside
    its kind (iproute2's print_tcstats2_attr: bytes, packets, drops, overlimits,
    requeues, backlog, qlen)."""
    try:
        items = json.loads(text or "[]")
    except json.JSONDecodeError as error:
        raise CounterFormatError(f"tc -s -j qdisc show: not JSON ({error})") from None
    if not isinstance(items, list):
        raise CounterFormatError("tc -s -j qdisc show: not a list of qdiscs")
    return tuple(Qdisc(str(q.get("dev", "")), str(q.get("kind", "")), str(q.get("handle", "")),
                       bool(q.get("root", False)),
                       *(int(q.get(key, 0)) for key in ("packets", "drops", "overlimits",
                                                        "requeues", "backlog", "qlen")))
                 for q in items if isinstance(q, dict))


def parse_loss_drops(saved: str) -> dict[str, int]:
    """`iptables-save -c -t raw`: each input device's packets dropped by its rules
    (`[packets:bytes] -A PREROUTING -i eth0 -m statistic ... -j DROP`)."""
    drops: dict[str, int] = {}
    for line in saved.splitlines():
        found = RULE.match(line.strip())
        if not found or not found.group(4).rstrip().endswith("-j DROP"):
            continue
        words = found.group(4).split()
        dev = words[words.index("-i") + 1] if "-i" in words[:-1] else ""
        drops[dev] = drops.get(dev, 0) + int(found.group(1))
    return drops


def parse_netstat(text: str) -> dict[str, dict[str, int]]:
    """/proc/net/netstat and /proc/net/snmp (either, or both one after the other): a
    line of names then a line of values under one prefix ("TcpExt: ...")."""
    tables: dict[str, dict[str, int]] = {}
    lines = [line.split() for line in text.splitlines() if line.strip()]
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if not names or names[0] != values[0] or len(names) != len(values):
            raise CounterFormatError(f"/proc/net counters: '{' '.join(names[:3])} ...' has "
                                     "no line of values beside it")
        try:
            tables.setdefault(names[0].rstrip(":"), {}).update(
                zip(names[1:], map(int, values[1:]), strict=True))
        except ValueError:
            raise CounterFormatError(f"/proc/net counters: {values[0]} holds a value that "
                                     "is not a whole number") from None
    return tables


def tcp_counters(tables: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """The TCP counters this module keeps (one the kernel lacks: left out)."""
    return {name: tables[prefix][name] for prefix, names in TCP_COUNTERS.items()
            for name in names if name in tables.get(prefix, {})}


def parse_addresses(ip_json: str) -> dict[str, str]:
    """`ip -j -4 addr`: each device's (first) IPv4 address."""
    try:
        links = json.loads(ip_json or "[]")
    except json.JSONDecodeError as error:
        raise CounterFormatError(f"ip -j -4 addr: not JSON ({error})") from None
    return {link["ifname"]: info["local"] for link in links
            for info in link.get("addr_info", [])[:1] if "local" in info}


def parse_queue_drops(proc: str) -> int:
    """/proc/net/netfilter/nfnetlink_queue: queue_dropped + user_dropped, every queue."""
    return sum(int(f[5]) + int(f[6]) for f in (line.split() for line in proc.splitlines())
               if len(f) >= 7)


def parse_snapshot(text: str) -> Snapshot:
    """SCRIPT's output, in its sections."""
    parts = [*text.split(SECTION), "", "", "", "", ""][:5]
    qdiscs, saved, addresses, proc, queues = (p.strip() for p in parts)
    tcp = tcp_counters(parse_netstat(proc))
    if not tcp:
        raise CounterFormatError("no TCP counters (/proc/net/netstat, /proc/net/snmp) in "
                                 f"the namespace's output: {text.strip()[-200:] or 'none'}")
    return Snapshot(parse_qdiscs(qdiscs), parse_loss_drops(saved), parse_addresses(addresses),
                    tcp, parse_queue_drops(queues))


def read_snapshots(run: RunOnEngine, targets: Mapping[str, str],
                   from_host: Mapping[str, Placed] | None = None
                   ) -> tuple[dict[str, Snapshot], dict[str, str]]:
    """Each node's snapshot: those of `from_host` read by their host's shaper
    (shaping/namespaces.py), the others in their target (a container in the node's
    namespace: its shaper, or itself), READERS at once; and the nodes unread, with
    why."""
    hosted = dict(from_host or {})

    def read(item: tuple[str, str]) -> tuple[str, Snapshot | str]:
        node, container = item
        try:
            return node, parse_snapshot(run.engine.execute(container,
                                                           ["sh", "-c", SCRIPT]).stdout)
        except (EngineError, CounterFormatError) as error:
            return node, f"{container}: {str(error).strip()[-200:]}"

    found = read_from_host(run, hosted)
    with ThreadPoolExecutor(READERS) as readers:
        found |= dict(readers.map(read, [(n, c) for n, c in targets.items()
                                         if n not in hosted]))
    return ({node: s for node, s in found.items() if isinstance(s, Snapshot)},
            {node: s for node, s in found.items() if isinstance(s, str)})


def read_from_host(run: RunOnEngine, hosted: Mapping[str, Placed]) -> dict[str, Snapshot | str]:
    """Each node's snapshot read by its host's shaper, or why not."""
    if not hosted:
        return {}
    outputs = run_in_namespaces(run, list(hosted.values()), SCRIPT)
    found: dict[str, Snapshot | str] = {}
    for node, placed in hosted.items():
        out = outputs[placed.container]
        try:
            found[node] = (parse_snapshot(out.text) if out.text is not None
                           else f"{placed.container}: {out.why}")
        except CounterFormatError as error:
            found[node] = f"{placed.container}: {str(error).strip()[-200:]}"
    return found


# --- deltas over a pass -----------------------------------------------------------


@dataclass(frozen=True)
class LinkDelta:
    """One shaped interface over a pass: `link` is the network it is on. Drops are
    packets lost there: its loss rule's (`loss_drops`), its qdisc's (`drops`, a queue
    full); `overlimits` counts a packet waiting for the rate's tokens (once per wait:
    queueing, not loss); `backlog` is queued at the end."""

    node: str
    dev: str
    link: str
    qdisc: str  # the shaping qdisc's kind at its root ('' when only a rule shapes it)
    packets: int
    drops: int
    overlimits: int
    requeues: int
    backlog: int
    loss_drops: int

    @property
    def lost(self) -> int:
        return self.drops + self.loss_drops


@dataclass(frozen=True)
class TcpDelta:
    """One node's TCP over a pass (its namespace's counters)."""

    node: str
    role: str  # "machine", "server", or the node's role on the stack ("switch"...)
    out_segs: int
    retrans_segs: int
    timeouts: int
    lost_retransmit: int
    listen_overflows: int
    listen_drops: int
    # retransmissions found unneeded (None: the kernel has no such counter). A timeout's
    # recovery (CA_Loss) undone, by timestamps, D-SACK or F-RTO: loss_undo, of them F-RTO's
    # spurious_rtos (tcp_try_undo_loss counts both); a recovery undone once D-SACKs
    # covered every retransmission, most often a fast one: dsack_undo; D-SACKs received
    # (the peer already had the segment): dsack_recv
    spurious_rtos: int | None = None
    dsack_recv: int | None = None
    loss_undo: int | None = None
    dsack_undo: int | None = None
    # of the timeouts, a SYN or SYN-ACK sent again (None: the kernel has no such counter)
    syn_retrans: int | None = None


@dataclass(frozen=True)
class PassCounters:
    """Every delta of one pass, and the nodes whose counters could not be read."""

    links: tuple[LinkDelta, ...] = ()
    tcp: tuple[TcpDelta, ...] = ()
    queue_drops: int = 0  # every delay line's queue, together
    unread: Mapping[str, str] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """As counters.json keeps it."""
        return {"links": [asdict(d) for d in self.links], "tcp": [asdict(d) for d in self.tcp],
                "queue_drops": self.queue_drops, "unread": dict(self.unread)}


def increase(before: int | None, after: int) -> int:
    """A counter's increase; one that went backwards began again within the pass
    (its qdisc replaced, its namespace new): what it counted since is its value."""
    return after - before if before is not None and after >= before else after


def link_of(address: str | None, networks: Sequence[tuple[IPv4Network, str]], dev: str) -> str:
    """The network an address is on, by name (the device's name when none holds it)."""
    if address:
        for subnet, name in networks:
            if IPv4Address(address) in subnet:
                return name
    return dev


def link_deltas(node: str, before: Snapshot | None, after: Snapshot,
                networks: Sequence[tuple[IPv4Network, str]]) -> list[LinkDelta]:
    """Each shaped device's counters over the pass: drops, requeues and backlog its
    root qdisc's (a parent counts what its child dropped), overlimits every qdisc's on
    it (only tbf counts them: netem never waits for tokens)."""
    earlier = {(q.dev, q.handle, q.kind): q for q in before.qdiscs} if before else {}
    lost_before = before.loss_drops if before else {}
    devices = {q.dev for q in after.qdiscs if q.kind not in UNSHAPED_QDISCS}
    devices |= set(after.loss_drops) - {""}
    deltas = []
    for dev in sorted(devices):
        on_dev = [q for q in after.qdiscs if q.dev == dev]
        roots = [q for q in on_dev if q.root] or on_dev[:1]
        root = roots[0] if roots else None

        def grew(q: Qdisc, key: str) -> int:
            old = earlier.get((q.dev, q.handle, q.kind))
            return increase(getattr(old, key) if old else None, getattr(q, key))

        shaped = root is not None and root.kind not in UNSHAPED_QDISCS
        deltas.append(LinkDelta(
            node, dev, link_of(after.addresses.get(dev), networks, dev),
            root.kind if root and shaped else "",
            grew(root, "packets") if root else 0, grew(root, "drops") if root else 0,
            sum(grew(q, "overlimits") for q in on_dev), grew(root, "requeues") if root else 0,
            root.backlog if root else 0,
            increase(lost_before.get(dev), after.loss_drops.get(dev, 0))))
    return deltas


def tcp_delta(node: str, role: str, before: Snapshot | None, after: Snapshot) -> TcpDelta:
    """One node's TCP counters over the pass (an undo counter the kernel lacks: None)."""
    def grew(name: str) -> int:
        return increase(before.tcp.get(name) if before else None, after.tcp.get(name, 0))

    undone = [grew(name) if name in after.tcp else None
              for name in (*UNDO_COUNTERS, HANDSHAKE_COUNTER)]
    return TcpDelta(node, role, grew("OutSegs"), grew("RetransSegs"), grew("TCPTimeouts"),
                    grew("TCPLostRetransmit"), grew("ListenOverflows"), grew("ListenDrops"),
                    *undone)


def pass_counters(before: Mapping[str, Snapshot], after: Mapping[str, Snapshot],
                  roles: Mapping[str, str], networks: Sequence[tuple[IPv4Network, str]],
                  unread: Mapping[str, str] | None = None) -> PassCounters:
    """The pass's deltas from its two snapshots (`roles`: each node's; `networks`: the
    stack's subnets by name; `unread`: the nodes a snapshot could not read, with why).
    A node read at one end only is unread: its increase is unknown."""
    why = dict(unread or {})
    why |= {node: "read after the pass but not before it" for node in after
            if node not in before and node not in why}
    why |= {node: "read before the pass but not after it" for node in before
            if node not in after and node not in why}
    nodes = [node for node in sorted(after) if node in before]
    return PassCounters(
        tuple(d for node in nodes for d in link_deltas(node, before[node], after[node],
                                                      networks)),
        tuple(tcp_delta(node, roles.get(node, ""), before[node], after[node])
              for node in nodes),
        sum(increase(before[node].queue_drops, after[node].queue_drops) for node in nodes),
        why)
