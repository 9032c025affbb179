"""Does a namespace still apply its plan? Pure functions.

The plan is the commands plan_interface produced ("{dev}" and all); what the
namespace applies is what its kernel reports: `tc -j qdisc show`,
`iptables-save`, `ip -j -4 addr`, ethtool's offload lines and
/proc/net/netfilter/nfnetlink_queue (the queues a delay line listens on, with
what they dropped), and each delay line's own timing since the last read (the
shaper writes it when asked: images/tools/vnetbench-shape), read in one call by
the namespace's shaper (READ_SCRIPT). compare() says, per planned interface,
what held and what changed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SECTION = "@@vnetbench-section@@"
# The interfaces from the kernel (netlink), not /sys/class/net: a host's shaper entering a
# namespace (namespaces.py) keeps its own sysfs, which lists its first namespace's
OFFLOADS_SCRIPT = ("for i in $(ip -o link | cut -d: -f2 | cut -d@ -f1); do "
                   "echo $i $(ethtool -k $i 2>/dev/null | "
                   "grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload'"
                   " | tr '\\n' ' '); done")
# The delay lines' counts since the last read: the shaper is asked (SIGUSR1) to write
# them anew, and the read waits for the new sequence number (at most LINES_WAIT_S);
# "asked N" says which number it waited past. No file: the shaper has no line.
LINES_PATH = "/run/vnetbench-lines"
LINES_WAIT_S = 1.0
LINES_SCRIPT = (
    f"f={LINES_PATH}; if [ -e $f ]; then set -- $(head -n 1 $f); echo asked $2; "
    'kill -USR1 "$4"; i=0; while [ "$(head -n 1 $f | cut -d" " -f2)" = "$2" ] '
    f"&& [ $i -lt {round(LINES_WAIT_S * 100)} ]; do sleep 0.01; i=$((i+1)); done; cat $f; fi")
READ_SCRIPT = f"; echo {SECTION}; ".join([
    "tc -j qdisc show", "iptables-save 2>/dev/null", "ip -j -4 addr", OFFLOADS_SCRIPT,
    "cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null", LINES_SCRIPT])
READ_BACK_TRIES = 3  # a read-back whose output did not come back whole is read again
DEFAULT_QDISCS = {"noqueue", "mq", "pfifo_fast"}  # what a device has when nobody shaped it
OFFLOAD_FEATURES = {"tso": "tcp-segmentation-offload", "gso": "generic-segmentation-offload",
                    "gro": "generic-receive-offload"}
# The kernel keeps tbf's burst as a time in scheduler ticks and its latency as a
# queue limit in bytes; tc converts both back, so they return rounded (seen here:
# exact at 20 Mbit/s), not changed. Rates, netem's delays (ns) and probabilities
# (32-bit fractions) return to within the last of their digits.
ROUNDED_SHARE = 0.01
EXACT_SHARE = 1e-6
ABSOLUTE = {"rate": 1.0, "delay": 1e-6, "jitter": 1e-6, "loss": 1e-6, "probability": 1e-6}


@dataclass(frozen=True)
class Queue:
    """One NFQUEUE queue with a listener, and what it dropped since it was bound."""

    number: int
    dropped: int  # queue full (queue_dropped) or undeliverable to the listener


# A line ran behind when at least this share of what it carried, and this many packets,
# were held past its lateness bound (the larger of 1 ms and a tenth of its delay, the
# shaper's): a wake-up late now and then on a busy host is not a line out of capacity,
# a queue the reader cannot empty is (the venue's 1 ms backbone at 63,000 packets/s).
# Measured: within capacity 0.02-0.2 % late, and 1.1 % (106 of 9,319, the latest
# 6.0 ms: one stall of a busy host) in a fresh clone's run, which 1 % failed; out of
# capacity 45-100 %, a 300-machine room's lines 19-26 %. 5 % is between
BEHIND_SHARE, BEHIND_PACKETS = 0.05, 100


@dataclass(frozen=True)
class LineTiming:
    """What one delay line carried since the last read, and how much of it late."""

    packets: int
    late: int  # held past late_after_us beyond its due time (an upper bound each)
    late_after_us: int
    max_late_us: int
    seconds: float
    answered: bool = True  # False: it wrote no new counts within LINES_WAIT_S

    @property
    def behind(self) -> bool:
        return self.late >= BEHIND_PACKETS and self.late >= BEHIND_SHARE * self.packets

    def describe(self) -> str:
        rate = f", {self.packets / self.seconds:,.0f} a second" if self.seconds > 0 else ""
        return (f"{self.late:,} of its {self.packets:,} packets in {self.seconds:g} s{rate} "
                f"held over {self.late_after_us / 1000:g} ms past their due time, the "
                f"latest {self.max_late_us / 1000:,.1f} ms")


@dataclass(frozen=True)
class Seen:
    """What one namespace's kernel reports."""

    devices: dict[str, str]  # address -> interface holding it
    qdiscs: list[dict[str, Any]]
    rules: list[str]  # "table: -A CHAIN ..." for every rule that matches an interface
    offloads: dict[str, dict[str, str]]  # interface -> feature -> on/off
    queues: dict[int, Queue]
    lines: dict[int, LineTiming] = field(default_factory=dict)  # by queue number


@dataclass
class Comparison:
    held: list[str] = field(default_factory=list)  # what was checked and is as planned
    changed: list[str] = field(default_factory=list)  # sentences: what changed, where

    def add(self, other: Comparison) -> None:
        self.held += other.held
        self.changed += other.changed


# tc -j's units -> the plan's, for sentences: key -> (factor, unit)
SHOWN = {"rate": (8.0, "bit/s"), "burst": (1.0, "bytes"), "lat": (1e-3, "ms"),
         "limit": (1.0, "packets"), "delay": (1e3, "ms"), "jitter": (1e3, "ms"),
         "loss": (100.0, "%")}


@dataclass(frozen=True)
class PlannedQdisc:
    kind: str
    parent: str  # "root" or the parent's handle
    handle: str
    options: dict[str, float]  # in tc -j's units (bytes/s, bytes, us, s, fractions)
    words: tuple[str, ...]  # as the plan says them

    def describe(self) -> str:
        return f"{self.kind} {self.handle} {' '.join(self.words)}"


def shown(key: str, value: float) -> str:
    factor, unit = SHOWN.get(key, (1.0, ""))
    return f"{value * factor:g} {unit}".rstrip()


SECTIONS = 6  # READ_SCRIPT's commands, their outputs apart by SECTION


class ReadBackError(ValueError):
    """READ_SCRIPT's output did not come back whole: a section missing, or tc's or ip's
    JSON unreadable. Seen once in a 50-machine bring-up (make test, 2026-12-07): the
    exec's output began at its fourth section, its first three lost on the way."""


def parse_seen(text: str) -> Seen:
    """READ_SCRIPT's output, in its sections; ReadBackError when it is not whole."""
    parts = text.split(SECTION)
    if len(parts) != SECTIONS:
        raise ReadBackError(f"{len(parts)} of its {SECTIONS} sections came back: "
                            f"{text.strip()[:120]!r}")
    qdiscs, saved, addresses, offloads, queues, lines = (p.strip() for p in parts)
    try:
        return Seen(devices_by_address(addresses), json.loads(qdiscs or "[]"),
                    rules_of(saved), offloads_of(offloads), queues_of(queues),
                    lines_of(lines))
    except json.JSONDecodeError as error:
        raise ReadBackError(f"tc's, ip's or a delay line's JSON did not read ({error})") from None


def devices_by_address(ip_json: str) -> dict[str, str]:
    return {a["local"]: link["ifname"] for link in json.loads(ip_json or "[]")
            for a in link.get("addr_info", []) if "local" in a}


def rules_of(saved: str) -> list[str]:
    """iptables-save's rules that match an interface (the shapers' are such), with their
    table."""
    table, rules = "", []
    for line in saved.splitlines():
        if line.startswith("*"):
            table = line[1:]
        elif line.startswith("-A") and " -i " in line:
            rules.append(f"{table}: {line}")
    return rules


def offloads_of(lines: str) -> dict[str, dict[str, str]]:
    """'eth0 tcp-segmentation-offload: off generic-...: on' lines, per interface."""
    found: dict[str, dict[str, str]] = {}
    for line in lines.splitlines():
        dev, *words = line.split()
        found[dev] = {k.rstrip(":"): v for k, v in zip(words[::2], words[1::2], strict=False)}
    return found


def queues_of(proc: str) -> dict[int, Queue]:
    """/proc/net/netfilter/nfnetlink_queue: queue_number peer_portid queue_total
    copy_mode copy_range queue_dropped user_dropped id_sequence 1."""
    found = {}
    for line in proc.splitlines():
        fields = line.split()
        if len(fields) >= 7:
            found[int(fields[0])] = Queue(int(fields[0]), int(fields[5]) + int(fields[6]))
    return found


def lines_of(text: str) -> dict[int, LineTiming]:
    """LINES_SCRIPT's output: "asked N", then the shaper's file ("seq M pid P" and its
    JSON); M still N means the line did not answer in time (its counts are the last
    read's, not this pass's)."""
    if not text:
        return {}
    asked, header, counts = [*text.splitlines(), "", ""][:3]
    answered = asked.split()[1:2] != header.split()[1:2]
    try:
        return {int(queue): LineTiming(int(c["packets"]), int(c["late"]),
                                       int(c["late_after_us"]), int(c["max_late_us"]),
                                       float(c["seconds"]), answered)
                for queue, c in json.loads(counts).items()}
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ReadBackError(f"a delay line's counts did not read ({error!r})") from None


def compare(interfaces: Sequence[Mapping[str, Any]], seen: Seen, where: str,
            dropped_before: Mapping[int, int] | None = None) -> Comparison:
    """Each planned interface (shaping_spec's: address, commands, delay_line) against
    what its namespace applies; `dropped_before`: each line's drops at the last check."""
    result = Comparison()
    for interface in interfaces:
        dev = seen.devices.get(interface["address"])
        if dev is None:
            result.changed.append(f"{where}: no interface holds {interface['address']} any "
                                  "more, so its shaping is gone")
            continue
        at = f"{where} {dev}"
        commands = [[part.replace("{dev}", dev) for part in c] for c in interface["commands"]]
        result.add(compare_qdiscs(planned_qdiscs(commands), seen.qdiscs, dev, at))
        result.add(compare_rules(planned_rules(commands), seen.rules, dev, at))
        result.add(compare_offloads(planned_offloads(commands), seen.offloads.get(dev, {}), at))
        line = interface.get("delay_line")
        if line:
            result.add(compare_line(line, seen.queues, at, (dropped_before or {}).get(
                int(line["queue"]), 0), seen.lines.get(int(line["queue"]))))
    return result


def planned_qdiscs(commands: Sequence[Sequence[str]]) -> list[PlannedQdisc]:
    return [qdisc_of(list(c)) for c in commands if c[:2] == ["tc", "qdisc"]]


def qdisc_of(command: list[str]) -> PlannedQdisc:
    """'tc qdisc replace dev D (root | parent P) handle H KIND ARGS...'."""
    words = command[5:]
    parent = "root"
    if words[0] == "parent":
        parent, words = words[1], words[2:]
    elif words[0] == "root":
        words = words[1:]
    handle = ""
    if words[0] == "handle":
        handle, words = words[1], words[2:]
    kind, args = words[0], words[1:]
    return PlannedQdisc(kind, parent, handle, OPTION_PARSERS[kind](args), tuple(args))


def tbf_options(args: list[str]) -> dict[str, float]:
    given = dict(zip(args[::2], args[1::2], strict=False))
    return {"rate": bits(given["rate"]) / 8, "burst": float(given["burst"]),
            "lat": seconds(given["latency"]) * 1e6}


def netem_options(args: list[str]) -> dict[str, float]:
    """Every setting netem reports, 0 where the plan sets none."""
    options = {"limit": float(args[args.index("limit") + 1]), "delay": 0.0, "jitter": 0.0,
               "loss": 0.0}
    if "delay" in args:
        at = args.index("delay")
        options["delay"] = seconds(args[at + 1])
        following = args[at + 2] if at + 2 < len(args) else ""
        options["jitter"] = seconds(following) if following.endswith("ms") else 0.0
    if "loss" in args:
        options["loss"] = float(args[args.index("loss") + 1].rstrip("%")) / 100
    return options


OPTION_PARSERS = {"tbf": tbf_options, "netem": netem_options}


def bits(text: str) -> float:
    return float(text.removesuffix("bit"))


def seconds(text: str) -> float:
    return float(text.removesuffix("ms")) / 1000


def reported_options(qdisc: Mapping[str, Any]) -> dict[str, float]:
    """tc -j's options, flattened to PlannedQdisc's keys (netem nests delay and loss)."""
    options = qdisc.get("options", {})
    if qdisc.get("kind") != "netem":
        return {k: float(v) for k, v in options.items() if isinstance(v, int | float)}
    flat = {"limit": float(options.get("limit", 0))}
    delay = options.get("delay", {})
    flat |= {"delay": float(delay.get("delay", 0.0)), "jitter": float(delay.get("jitter", 0.0))}
    flat["loss"] = float(options.get("loss-random", {}).get("loss", 0.0))
    return flat


def close(key: str, planned: float, found: float) -> bool:
    share = ROUNDED_SHARE if key in ("burst", "lat") else EXACT_SHARE
    return math.isclose(planned, found, rel_tol=share, abs_tol=ABSOLUTE.get(key, 0.0))


def compare_qdiscs(planned: list[PlannedQdisc], reported: list[dict[str, Any]], dev: str,
                   at: str) -> Comparison:
    result = Comparison()
    on_dev = [q for q in reported if q.get("dev") == dev]
    for plan in planned:
        found = next((q for q in on_dev if q.get("kind") == plan.kind
                      and q.get("handle") == plan.handle
                      and (q.get("parent", "root") if not q.get("root") else "root")
                      == plan.parent), None)
        if found is None:
            there = ", ".join(f"{q.get('kind')} {q.get('handle')}" for q in on_dev) or "none"
            result.changed.append(f"{at}: {plan.describe()} is gone (there now: {there})")
            continue
        options = reported_options(found)
        differ = [f"{k} {shown(k, v)} planned, {shown(k, options.get(k, math.nan))} applied"
                  for k, v in plan.options.items() if not close(k, v, options.get(k, math.nan))]
        if differ:
            result.changed.append(f"{at}: {plan.kind} {plan.handle} changed: "
                                  + ", ".join(differ))
        else:
            result.held.append(f"{at}: {plan.describe()}")
    handles = {(p.kind, p.handle) for p in planned}
    for q in on_dev:
        if q.get("kind") not in DEFAULT_QDISCS and (q.get("kind"), q.get("handle")) not in handles:
            result.changed.append(f"{at}: qdisc {q.get('kind')} {q.get('handle')} was not "
                                  "planned")
    return result


def planned_rules(commands: Sequence[Sequence[str]]) -> list[str]:
    """'iptables -t T -A CHAIN ...' as iptables-save lists it: 'T: -A CHAIN ...'."""
    return [f"{c[2]}: {' '.join(c[3:])}" for c in commands if c[:2] == ["iptables", "-t"]]


def same_rule(planned: str, found: str) -> bool:
    """Word for word, but numbers (a probability comes back as a 32-bit fraction)."""
    a, b = planned.split(), found.split()
    return len(a) == len(b) and all(x == y or numbers_close(x, y) for x, y in zip(a, b,
                                                                                strict=True))


def numbers_close(a: str, b: str) -> bool:
    try:
        return close("probability", float(a), float(b))
    except ValueError:
        return False


def compare_rules(planned: list[str], reported: list[str], dev: str, at: str) -> Comparison:
    """The planned rules, each once, and no other rule of a shaper's shape on dev."""
    result = Comparison()
    ours = [r for r in reported if shaper_rule(r, dev)]
    for rule in planned:
        match = next((r for r in ours if same_rule(rule, r)), None)
        if match is None:
            result.changed.append(f"{at}: rule '{rule}' is gone")
        else:
            ours.remove(match)
            result.held.append(f"{at}: rule '{rule}'")
    result.changed += [f"{at}: rule '{r}' was not planned" for r in ours]
    return result


def shaper_rule(rule: str, dev: str) -> bool:
    """A rule in the chains the shapers use (raw and mangle PREROUTING) on dev."""
    table, _, line = rule.partition(": ")
    return table in ("raw", "mangle") and line.split()[:4] == ["-A", "PREROUTING", "-i", dev]


def planned_offloads(commands: Sequence[Sequence[str]]) -> dict[str, str]:
    """'ethtool -K D tso off ...' as ethtool -k names the features."""
    planned: dict[str, str] = {}
    for c in commands:
        if c[:2] == ["ethtool", "-K"]:
            planned |= {OFFLOAD_FEATURES[k]: v for k, v in zip(c[3::2], c[4::2], strict=False)}
    return planned


def compare_offloads(planned: dict[str, str], reported: dict[str, str], at: str) -> Comparison:
    result = Comparison()
    for feature, value in planned.items():
        found = reported.get(feature, "unknown")
        if found == value:
            result.held.append(f"{at}: {feature} {value}")
        else:
            result.changed.append(f"{at}: {feature} is {found} (planned {value})")
    return result


def compare_line(line: Mapping[str, Any], queues: Mapping[int, Queue], at: str,
                 dropped_before: int, timing: LineTiming | None = None) -> Comparison:
    """A delay line listens on its queue, dropped nothing since the last check and kept
    its packets' due times (timing: what it carried since the last read)."""
    result = Comparison()
    number = int(line["queue"])
    queue = queues.get(number)
    described = (f"delay line on queue {number} ({line['delay_ms']:g} ms, jitter "
                 f"{line['jitter_ms']:g} ms)")
    if queue is None:
        result.changed.append(f"{at}: no {described} listens: the kernel drops what the rule "
                              "queues there")
    elif queue.dropped > dropped_before:
        result.changed.append(f"{at}: the {described} dropped {queue.dropped - dropped_before} "
                              "packet(s) of its own (its queue was full or its reader behind)")
    elif timing is None:
        result.changed.append(f"{at}: the {described} reported no timing, so whether it "
                              "kept its delay is unknown")
    elif not timing.answered:
        result.changed.append(f"{at}: the {described} did not report its timing within "
                              f"{LINES_WAIT_S:g} s: its loop was that far behind")
    elif timing.behind:
        result.changed.append(
            f"{at}: the {described} ran behind: {timing.describe()}; it could not keep up "
            "(more packets than one line carries, or a host too busy to run it), so the "
            "path's delay and rate were the line's, not the plan's (a kernel with netem "
            "has no such line)")
    else:
        result.held.append(f"{at}: {described} listening, no drops of its own, on time: "
                           f"{timing.describe()}")
    return result
