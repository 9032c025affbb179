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
After every pass it checks (verify) that each helper is the one that was there
(still running, not started again: nothing else starts one, so a death or a
restart at any moment of the pass leaves its trace) and that its namespace
applies what was planned (shaping/verify.py).
"""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

from vnetbench.engines.base import NETWORK_NAME, EngineError, EventStream, RunOnEngine, ToolSpec
from vnetbench.errors import UserError
from vnetbench.model.topology import LinkProfile, Topology
from vnetbench.runtime import labels
from vnetbench.runtime.labels import role_filter, run_filter, run_labels
from vnetbench.shaping.capabilities import detect_capabilities
from vnetbench.shaping.plan import plan_interface
from vnetbench.shaping.verify import (
    DEFAULT_QDISCS,
    READ_SCRIPT,
    Comparison,
    ReadBackError,
    Seen,
    compare,
    parse_seen,
)
from vnetbench.terminal.ui import note, waiting

SHAPER_ROLE = "shaper"
UNSHAPED_ROLES = {"fabric", "probe", SHAPER_ROLE, "gatekeeper", "node-files"}
APPLY_TIMEOUT_SECONDS = 30.0
READERS = 8  # shapers read back at once after a pass
SHAPERS = 4  # shapers started at once: the engine starts containers side by side


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
    from vnetbench.engines import local  # the kernel of this machine's engine

    return frozenset(c.name for c in detect_capabilities(local()) if c.available)


def is_shaped(topology: Topology) -> bool:
    profiles = [topology.links.site, topology.links.backbone,
                *(a.link for a in topology.agents if a.link)]
    return any(p.is_shaped or not p.offloads for p in profiles)


def members(run: RunOnEngine) -> list[Member]:
    segments = {n[NETWORK_NAME]: n.get(labels.SEGMENT, "")
                for n in run.engine.network_labels(run_filter(run.run_id))}
    shaped = []
    running = [c for c in run.engine.containers(run_filter(run.run_id))
               if c.state == "running" and c.labels.get(labels.ROLE) not in UNSHAPED_ROLES]
    for container in run.engine.inspect(running):  # a probe's --rm may have removed it
        attachments = tuple(Attachment(address, segments[name], name)
                            for name, address in container.addresses.items()
                            if name in segments)
        shaped.append(Member(container.name, container.labels.get(labels.ROLE, ""),
                             container.labels.get(labels.NODE, container.name), attachments))
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


def shaper_name(member: Member) -> str:
    return f"{member.container}-shaper"


def start_shaper(run: RunOnEngine, member: Member, spec: dict[str, Any]) -> str:
    name = shaper_name(member)
    run.engine.remove(name)  # a shaper left from before a restart
    run.engine.start_tool(member.container, ToolSpec(
        ("/usr/local/bin/vnetbench-shape",), run_labels(run.run_id, SHAPER_ROLE, member.node),
        name=name, keep=True, capabilities=("NET_ADMIN", "NET_RAW"),
        environment={"VNETBENCH_SHAPING": json.dumps(spec)}, init=True))
    wait_applied(run, name)
    return name


def wait_applied(run: RunOnEngine, name: str) -> None:
    deadline = time.time() + APPLY_TIMEOUT_SECONDS
    while time.time() < deadline:
        logs = run.engine.logs(name)
        if "vnetbench-shape: applied" in logs:
            return
        listed = run.engine.containers([("name", f"^{name}$")])
        if not listed or listed[0].state != "running":
            raise UserError(f"Shaping {name} failed: {logs.strip()[-600:]} "
                            "Check the link profile, or run 'vnetbench doctor'.")
        time.sleep(0.2)
    raise UserError(f"Shaping {name} did not finish in {APPLY_TIMEOUT_SECONDS:.0f} s.")


OVERHEAD_LINE = re.compile(r"vnetbench-shape: delay line overhead_us=(\d+)")


def delay_line_overhead_us(shaper_logs: str) -> int | None:
    """What the shaper measured its delay line to add at delay 0 (and subtracts)."""
    found = OVERHEAD_LINE.search(shaper_logs)
    return int(found.group(1)) if found else None


READ_BACK_TRIES = 3  # a read-back whose output did not come back whole is read again


def observe(run: RunOnEngine, shaper: str) -> Seen:
    """What the shaper's namespace applies, in one call (verify.READ_SCRIPT); read
    again when its output did not come back whole (it only reads), and EngineError
    naming it when that happened READ_BACK_TRIES times."""
    argv = ["sh", "-c", READ_SCRIPT]
    for _ in range(READ_BACK_TRIES):
        done = run.engine.execute(shaper, argv)
        if done.exit_code != 0:
            raise EngineError.of_command(["exec", shaper, *argv[:2]], done)
        try:
            return parse_seen(done.stdout)
        except ReadBackError as error:
            lost = error
    raise EngineError(f"reading back {shaper}'s shaping: its output did not come back whole "
                      f"{READ_BACK_TRIES} times ({lost})")


def read_back(run: RunOnEngine, container: str) -> dict[str, Any]:
    """The namespace's tc and iptables state as the kernel reports it, and the
    delay line's measured own latency (subtracted from its delays)."""
    overhead = delay_line_overhead_us(run.engine.logs(container))
    seen = observe(run, container)
    return {"qdiscs": [q for q in seen.qdiscs if q.get("kind") not in DEFAULT_QDISCS],
            "iptables": seen.rules,
            "offloads": seen.offloads,
            **({"delay_line_overhead_us": overhead} if overhead is not None else {})}


def shape_run(run: RunOnEngine, topology: Topology,
              segment: str | None = None) -> dict[str, Any]:
    """Impose the profiles on every container of a running topology (again, if it
    was shaped before: each helper is replaced); return what was applied. `segment`:
    only the containers attached to it (all their links shaped anew)."""
    if not is_shaped(topology):
        return {}
    available = set(available_mechanisms())
    applied: dict[str, Any] = {"mechanism": "netem" if "netem" in available
                               else "tbf + iptables statistic + NFQUEUE delay line"}
    shaped = [(m, spec) for m in members(run)
              if segment is None or any(a.segment == segment for a in m.attachments)
              if (spec := shaping_spec(topology, m, available))["interfaces"]]
    def shape(item: tuple[Member, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        member, spec = item
        return member.node, read_back(run, start_shaper(run, member, spec))

    with waiting(f"shaping the links of {len(shaped)} container(s)",
                 0.7 * len(shaped) / SHAPERS), ThreadPoolExecutor(SHAPERS) as shapers:
        applied |= dict(shapers.map(shape, shaped))
    return applied


def unshape_segment(run: RunOnEngine, segment: str) -> list[str]:
    """Clear what a shaper left on every interface of one segment (qdiscs, loss and
    delay rules): a shaper with nothing to apply clears each interface it is given
    (vnetbench-shape), then goes. For a topology planned unshaped, after a fault
    shaped it; the containers cleared."""
    cleared = []
    for member in members(run):
        interfaces: list[dict[str, Any]] = [
            {"address": a.address, "commands": [], "delay_line": None}
            for a in member.attachments if a.segment == segment]
        if interfaces:
            shaper = start_shaper(run, member, {"interfaces": interfaces})
            run.engine.remove(shaper)
            cleared.append(member.container)
    return cleared


@dataclass(frozen=True)
class ShaperState:
    """A shaper container as one inspection showed it (Engine.inspect's record)."""

    name: str
    id: str
    running: bool
    paused: bool
    exit_code: int
    started: datetime | None
    finished: datetime | None


@dataclass
class Watched:
    """A shaper the keeper answers for: its member, its plan, how it was last seen."""

    member: Member
    interfaces: list[dict[str, Any]]
    id: str = ""
    started: datetime | None = None
    dropped: dict[int, int] = field(default_factory=dict)  # each line's drops, last check

    @property
    def name(self) -> str:
        return shaper_name(self.member)


def shaper_states(run: RunOnEngine) -> dict[str, ShaperState]:
    """Every shaper of the run, one inspection per host (one removed meanwhile counts
    as gone)."""
    listed = run.engine.containers([*run_filter(run.run_id), role_filter(SHAPER_ROLE)])
    found: dict[str, ShaperState] = {}
    for c in run.engine.inspect(listed):
        found[c.name] = ShaperState(c.name, c.id, c.running, c.paused, c.exit_code, c.started,
                                    c.finished)
    return found


def not_serving(name: str, state: ShaperState | None) -> str:
    """Why a shaper cannot be shaping ('' if it can)."""
    if state is None:
        return f"{name} is gone (removed)"
    if not state.running:
        return f"{name} exited ({state.exit_code}) at {at(state.finished)}"
    if state.paused:
        return f"{name} is paused (its delay lines hold what they queue)"
    return ""


def at(moment: datetime | None) -> str:
    return f"{moment:%H:%M:%S} UTC" if moment else "an unknown time"


def topology_node(name: str) -> str:
    """A node as the topology names it: a switch's service ('router-switch2', an
    overlay's 'hub-switch2') is its switch. A restart is named by its service and the
    shaping by its node label: compared as services, no restart was ever found shaped
    again, and each waited out settle's whole bound (30 s)."""
    return name.removeprefix("router-").removeprefix("hub-")


class ShapingKeeper:
    """Starts a container's shaper again when the container restarts, and checks after
    each pass that the shaping held (verify)."""

    def __init__(self, run: RunOnEngine, topology: Topology,
                 checks: list[dict[str, Any]] | None = None) -> None:
        self.run, self.topology = run, topology
        self.reapplied: list[str] = []
        self.checks = checks if checks is not None else []  # one entry per verify()
        self.watched: dict[str, Watched] = {}
        self.lock = threading.Lock()  # a restart's re-shaping and a check, one at a time
        self.starts: EventStream | None = None
        self.thread: threading.Thread | None = None

    def __enter__(self) -> ShapingKeeper:
        if is_shaped(self.topology):
            self._watch_shapers()
            self.starts = self.run.engine.watch_starts(self.run.run_id)
            self.thread = threading.Thread(target=self._watch, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.starts:
            self.starts.close()

    def _watch_shapers(self) -> None:
        """The shapers as they are now (shape_run has just started them)."""
        available = set(available_mechanisms())
        for member in members(self.run):
            interfaces = shaping_spec(self.topology, member, available)["interfaces"]
            if interfaces:
                self.watched[shaper_name(member)] = Watched(member, interfaces)
        states = shaper_states(self.run)
        for name, watched in self.watched.items():
            if name in states and states[name].running:
                watched.id, watched.started = states[name].id, states[name].started

    def watch_again(self) -> None:
        """The shapers as they are now are the planned ones: a scenario that shaped the
        links anew on purpose (failover's link faults, shaped back) says so, and the
        next verify compares with these."""
        if not is_shaped(self.topology):
            return
        with self.lock:
            self.watched = {}
            self._watch_shapers()

    def settle(self, nodes: set[str], timeout_s: float = 30.0) -> None:
        """Containers of `nodes` were started again on purpose (a fault's restart): once
        this keeper has shaped each anew (bounded), its shapers are the planned ones."""
        if not is_shaped(self.topology):
            return
        deadline = time.time() + timeout_s
        while time.time() < deadline and not set(map(topology_node, nodes)) <= set(
                map(topology_node, self.reapplied)):
            time.sleep(0.3)
        self.watch_again()

    def verify(self, label: str) -> list[str]:
        """After a pass (`label`, e.g. "pass 2"): what changed in the shaping since the
        last check, as sentences naming the shaper or the interface (none: it held).
        Each check goes into `checks` with what was found as planned."""
        if not self.watched:
            return []
        with self.lock:
            states = shaper_states(self.run)
            with ThreadPoolExecutor(READERS) as readers:
                found = list(readers.map(lambda w: self._check(w, states.get(w.name)),
                                         self.watched.values()))
        result = Comparison()
        for comparison in found:
            result.add(comparison)
        self.checks.append({"pass": label, "checked_at": datetime.now(UTC).isoformat(),
                            "as_planned": not result.changed, "changed": result.changed,
                            "held": result.held})
        return result.changed

    def _check(self, watched: Watched, state: ShaperState | None) -> Comparison:
        stopped = not_serving(watched.name, state)
        if stopped or state is None:
            return Comparison(changed=[stopped])
        result = Comparison()
        if (state.id, state.started) != (watched.id, watched.started):
            result.changed.append(
                f"{watched.name} was started again at {at(state.started)} "
                f"({watched.member.container} restarted or was shaped anew: its links "
                "were not shaped as planned in between)")
            watched.id, watched.started, watched.dropped = state.id, state.started, {}
        try:
            seen = observe(self.run, watched.name)
        except EngineError as error:
            result.changed.append(f"{watched.name}: reading back its namespace failed: "
                                  f"{str(error).strip()[-300:]}")
            return result
        result.add(compare(watched.interfaces, seen, watched.member.container,
                           watched.dropped))
        watched.dropped = {n: q.dropped for n, q in seen.queues.items()}
        return result

    def _watch(self) -> None:
        assert self.starts is not None
        for started in self.starts:
            if started.labels.get(labels.ROLE) in UNSHAPED_ROLES:
                continue
            with self.lock:
                self._reapply(started.name)

    def _reapply(self, container: str) -> None:
        for member in members(self.run):
            if member.container != container:
                continue
            spec = shaping_spec(self.topology, member, set(available_mechanisms()))
            if spec["interfaces"]:
                try:
                    start_shaper(self.run, member, spec)
                    self.reapplied.append(member.node)
                    note(f"{member.node} restarted: its link shaping was applied again")
                except (UserError, EngineError) as error:
                    note(f"{member.node} restarted, and shaping it again failed: "
                         f"{error}", style="red")

