"""Imposing the topology's link profiles on a running stack, and keeping them.

Choice: a helper container per shaped container, joined to its network
namespace (`--network container:X`), rather than tc on the host side of each
veth from a host-network helper. The namespace helper needs no host state
(its qdiscs and rules vanish with the namespace), touches no host iptables,
finds interfaces by the addresses the plan gave them, and can run the
NFQUEUE delay line right where packets arrive. The host-side variant stays
possible: the plans in shaping/plan.py only name "{dev}", and the bridge
names are recorded per run for it. What the helpers applied is read back
(tc -j qdisc show, iptables-save) and recorded, not the intent.

A container that restarts gets a fresh namespace; ShapingKeeper watches the
engine's start events for the run and starts that container's helper again.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from contextlib import suppress
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from python_on_whales import Container
from python_on_whales.exceptions import DockerException

from vnetbench import labels
from vnetbench.engine import engines, list_containers
from vnetbench.errors import UserError
from vnetbench.images import TOOLS_IMAGE
from vnetbench.labels import run_filter, run_labels
from vnetbench.shaping.capabilities import detect_capabilities
from vnetbench.shaping.plan import plan_interface
from vnetbench.topology import LinkProfile, Topology
from vnetbench.ui import note, waiting

SHAPER_ROLE = "shaper"
UNSHAPED_ROLES = {"fabric", "probe", SHAPER_ROLE, "gatekeeper", "node-files"}
APPLY_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Attachment:
    address: str
    segment: str  # "site" or "backbone"
    network: str


@dataclass(frozen=True)
class Member:
    container: str
    role: str
    node: str
    attachments: tuple[Attachment, ...]


@cache
def available_mechanisms() -> frozenset[str]:
    return frozenset(c.name for c in detect_capabilities() if c.available)


def is_shaped(topology: Topology) -> bool:
    profiles = [topology.links.site, topology.links.backbone,
                *(a.link for a in topology.agents if a.link)]
    return any(p.is_shaped or not p.offloads for p in profiles)


def members(run_id: str) -> list[Member]:
    segments = {n.name: (n.labels or {}).get(labels.SEGMENT, "")
                for _, client in engines.listing()
                for n in client.network.list(filters=run_filter(run_id))}
    shaped = []
    running = [c for c in list_containers(run_filter(run_id))
               if c.state == "running" and c.labels.get(labels.ROLE) not in UNSHAPED_ROLES]
    inspected = []
    for where in dict.fromkeys(c.where for c in running):  # one engine at a time
        client = engines.client_at(where)
        wanted = [c.id for c in running if c.where == where]
        try:  # one inspect for all (a probe started with --rm may be gone: one by one)
            inspected += client.container.inspect(wanted)
        except DockerException:
            inspected += [c for c in (inspect_or_none(i, where) for i in wanted) if c]
    for container in inspected:
        found = container.config.labels or {}
        networks = container.network_settings.networks or {}
        attachments = tuple(
            Attachment(settings.ip_address, segments[name], name)
            for name, settings in networks.items()
            if name in segments and settings.ip_address)
        shaped.append(Member(container.name, found.get(labels.ROLE, ""),
                             found.get(labels.NODE, container.name), attachments))
    return shaped


def profile_for(topology: Topology, member: Member, segment: str) -> LinkProfile:
    if segment == "site" and member.role == "agent":
        for agent in topology.agents:
            if agent.name == member.node and agent.link is not None:
                return agent.link
    return topology.links.site if segment == "site" else topology.links.backbone


def shaping_spec(topology: Topology, member: Member, available: set[str]) -> dict[str, Any]:
    interfaces = []
    for queue, attachment in enumerate(member.attachments):
        plan = plan_interface(profile_for(topology, member, attachment.segment), available,
                              queue)
        if plan.commands:
            interfaces.append({"address": attachment.address, "commands": plan.commands,
                               "delay_line": asdict(plan.delay_line) if plan.delay_line
                               else None})
    return {"interfaces": interfaces}


def check_shaping(topology: Topology) -> None:
    """Fail before anything starts if the kernel cannot impose the declared profiles."""
    if not is_shaped(topology):
        return
    available = set(available_mechanisms())
    for profile in (topology.links.site, topology.links.backbone,
                    *(a.link for a in topology.agents if a.link)):
        plan_interface(profile, available)


def start_shaper(run_id: str, member: Member, spec: dict[str, Any]) -> Container:
    name = f"{member.container}-shaper"
    docker = engines.client_for(member.container)  # the node that hosts it
    with suppress(DockerException):  # a shaper left from before a restart
        docker.container.remove(name, force=True)
    container = docker.run(
        TOOLS_IMAGE, ["/usr/local/bin/vnetbench-shape"], name=name, detach=True,
        networks=[f"container:{member.container}"], cap_add=["NET_ADMIN", "NET_RAW"],
        envs={"VNETBENCH_SHAPING": json.dumps(spec)}, init=True, pull="never",
        labels=run_labels(run_id, SHAPER_ROLE, member.node))
    assert isinstance(container, Container)
    wait_applied(container, member.container)
    return container


def wait_applied(container: Container, target: str) -> None:
    docker = engines.client_for(target)
    deadline = time.time() + APPLY_TIMEOUT_SECONDS
    while time.time() < deadline:
        logs = str(docker.container.logs(container))
        if "vnetbench-shape: applied" in logs:
            return
        if not docker.container.inspect(container.name).state.running:
            raise UserError(f"Shaping {container.name} failed: {logs.strip()[-600:]} "
                            "Check the link profile, or run 'vnetbench doctor'.")
        time.sleep(0.2)
    raise UserError(f"Shaping {container.name} did not finish in {APPLY_TIMEOUT_SECONDS:.0f} s.")


OVERHEAD_LINE = re.compile(r"vnetbench-shape: delay line overhead_us=(\d+)")


def delay_line_overhead_us(shaper_logs: str) -> int | None:
    """What the shaper measured its delay line to add at delay 0 (and subtracts)."""
    found = OVERHEAD_LINE.search(shaper_logs)
    return int(found.group(1)) if found else None


def read_back(container: str) -> dict[str, Any]:
    """The namespace's tc and iptables state as the kernel reports it, and the
    delay line's measured own latency (subtracted from its delays)."""
    docker = engines.client_for(container.removesuffix("-shaper"))
    overhead = delay_line_overhead_us(str(docker.container.logs(container)))
    qdiscs = str(docker.execute(container, ["tc", "-j", "qdisc", "show"]))
    rules = str(docker.execute(container, ["sh", "-c", "iptables-save 2>/dev/null"]))
    offloads = str(docker.execute(container, ["sh", "-c", OFFLOADS_SCRIPT]))
    return {"qdiscs": [q for q in json.loads(qdiscs or "[]")
                       if q.get("kind") not in ("noqueue", "mq")],
            "iptables": our_rules(rules),
            "offloads": offloads.splitlines(),
            **({"delay_line_overhead_us": overhead} if overhead is not None else {})}


OFFLOADS_SCRIPT = ("for i in $(ls /sys/class/net); do echo $i $(ethtool -k $i 2>/dev/null | "
                   "grep -E '^(tcp-segmentation|generic-segmentation|generic-receive)-offload'"
                   " | tr '\\n' ' '); done")


def our_rules(saved: str) -> list[str]:
    """iptables-save's rules that match an interface (ours), with their table."""
    table, rules = "", []
    for line in saved.splitlines():
        if line.startswith("*"):
            table = line[1:]
        elif line.startswith("-A") and " -i " in line:
            rules.append(f"{table}: {line}")
    return rules


def shape_run(run_id: str, topology: Topology) -> dict[str, Any]:
    """Impose the profiles on every container of a running topology (again, if it
    was shaped before: each helper is replaced); return what was applied."""
    if not is_shaped(topology):
        return {}
    available = set(available_mechanisms())
    applied: dict[str, Any] = {"mechanism": "netem" if "netem" in available
                               else "tbf + iptables statistic + NFQUEUE delay line"}
    shaped = [(m, spec) for m in members(run_id)
              if (spec := shaping_spec(topology, m, available))["interfaces"]]
    with waiting(f"shaping the links of {len(shaped)} container(s)", 0.7 * len(shaped)):
        for member, spec in shaped:
            shaper = start_shaper(run_id, member, spec)
            applied[member.node] = read_back(shaper.name)
    return applied


class ShapingKeeper:
    """Starts a container's shaper again when the container restarts."""

    def __init__(self, run_id: str, topology: Topology) -> None:
        self.run_id, self.topology = run_id, topology
        self.reapplied: list[str] = []
        self.process: subprocess.Popen[str] | None = None
        self.thread: threading.Thread | None = None

    def __enter__(self) -> ShapingKeeper:
        if is_shaped(self.topology):
            self.process = subprocess.Popen(
                ["docker", "events", "--format", "{{json .}}", "--filter",
                 f"label={labels.RUN}={self.run_id}", "--filter", "event=start"],
                stdout=subprocess.PIPE, text=True)
            self.thread = threading.Thread(target=self._watch, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=5)

    def _watch(self) -> None:
        assert self.process and self.process.stdout
        for line in self.process.stdout:
            attributes = json.loads(line).get("Actor", {}).get("Attributes", {})
            if attributes.get(labels.ROLE) in UNSHAPED_ROLES:
                continue
            self._reapply(str(attributes.get("name", "")))

    def _reapply(self, container: str) -> None:
        for member in members(self.run_id):
            if member.container != container:
                continue
            spec = shaping_spec(self.topology, member, set(available_mechanisms()))
            if spec["interfaces"]:
                try:
                    start_shaper(self.run_id, member, spec)
                    self.reapplied.append(member.node)
                    note(f"{member.node} restarted: its link shaping was applied again")
                except (UserError, DockerException) as error:
                    note(f"[red]{member.node} restarted, and shaping it again failed: "
                         f"{error}[/]")


def inspect_or_none(container_id: str, where: str = "") -> Container | None:
    try:
        return engines.client_at(where).container.inspect(container_id)
    except DockerException:
        return None
