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

A plan without a delay line needs no process once applied: those are applied, and
read back, by one helper a host from inside each namespace (shaping/namespaces.py),
so only a delay line costs a container.

A container that restarts gets a fresh namespace; ShapingKeeper watches the
engine's start events for the run and shapes that container again.
After every pass it checks (verify) that each helper is the one that was there
(still running, not started again: nothing else starts one, so a death or a
restart at any moment of the pass leaves its trace), that each container shaped
from its host is the one that was shaped (not started again), and that its namespace
applies what was planned (shaping/verify.py).
"""

from __future__ import annotations

import contextlib
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
from vnetbench.shaping.namespaces import (
    HOST_SHAPER_ROLE,
    Placed,
    apply_in_namespaces,
    ensure_host_shapers,
    needs_own_shaper,
    read_namespaces,
)
from vnetbench.shaping.plan import plan_interface
from vnetbench.shaping.verify import (
    DEFAULT_QDISCS,
    READ_BACK_TRIES,
    READ_SCRIPT,
    Comparison,
    ReadBackError,
    Seen,
    compare,
    parse_seen,
)
from vnetbench.terminal.ui import note, waiting

SHAPER_ROLE = "shaper"
UNSHAPED_ROLES = {"fabric", "probe", SHAPER_ROLE, HOST_SHAPER_ROLE, "gatekeeper", "node-files"}
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
    host: str = ""  # the engine's node that runs it ('' on one host)
    id: str = ""
    started: datetime | None = None  # a restart changes it (and the id, for a new one)
    pid: int | None = None  # its first process on its host

    @property
    def placed(self) -> Placed:
        return Placed(self.container, self.host, self.pid or 0)


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
    host_of = {c.name: c.where for c in running}
    for container in run.engine.inspect(running):  # a probe's --rm may have removed it
        attachments = tuple(Attachment(address, segments[name], name)
                            for name, address in container.addresses.items()
                            if name in segments)
        shaped.append(Member(container.name, container.labels.get(labels.ROLE, ""),
                             container.labels.get(labels.NODE, container.name), attachments,
                             host_of.get(container.name, ""), container.id, container.started,
                             container.pid))
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
    if run.engine.containers([*run_filter(run.run_id), role_filter(SHAPER_ROLE),
                              ("name", f"^{name}$")]):
        run.engine.remove(name)  # the run's shaper left from before a restart (its labels)
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
    delay line's measured own latency (subtracted from its delays), read by its
    shaper `container`."""
    overhead = delay_line_overhead_us(run.engine.logs(container))
    return {**record_of(observe(run, container)),
            **({"delay_line_overhead_us": overhead} if overhead is not None else {})}


def record_of(seen: Seen) -> dict[str, Any]:
    """What run.json records of a namespace's shaping."""
    return {"qdiscs": [q for q in seen.qdiscs if q.get("kind") not in DEFAULT_QDISCS],
            "iptables": seen.rules,
            "offloads": seen.offloads}


def read_back_from_host(run: RunOnEngine, members: list[Member]) -> dict[str, Any]:
    """read_back's record of each container shaped from its host, by node; EngineError
    naming the first that could not be read."""
    found = read_namespaces(run, [m.placed for m in members])
    records = {}
    for member in members:
        seen = found.get(member.container, "not read")
        if isinstance(seen, str):
            raise EngineError(f"reading back {member.container}'s shaping: {seen}")
        records[member.node] = record_of(seen)
    return records


def shaping_of(run: RunOnEngine, container: str) -> dict[str, Any]:
    """read_back's record of one running container, read by its own shaper if it has
    one, else from its host."""
    for member in members(run):
        if member.container == container:
            if shaper_name(member) in shaper_states(run):
                return read_back(run, shaper_name(member))
            record: dict[str, Any] = read_back_from_host(run, [member])[member.node]
            return record
    raise EngineError(f"reading back {container}'s shaping: it is not running")


def retire_own_shapers(run: RunOnEngine, shaped_from_host: list[Member]) -> None:
    """The own shapers (delay lines) of containers now shaped from their host: an earlier
    plan's, whose rules the new one has cleared."""
    existing = set(shaper_states(run))
    run.engine.remove_all([shaper_name(m) for m in shaped_from_host
                           if shaper_name(m) in existing])


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
    own = [(m, spec) for m, spec in shaped if needs_own_shaper(spec)]
    from_host = [(m, spec) for m, spec in shaped if not needs_own_shaper(spec)]

    def shape(item: tuple[Member, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        member, spec = item
        return member.node, read_back(run, start_shaper(run, member,
                                                        clearing_the_rest(member, spec)))

    with waiting(f"shaping the links of {len(shaped)} container(s)",
                 0.7 * len(own) / SHAPERS + 0.05 * len(from_host)):
        apply_in_namespaces(run, [(m.placed, clearing_the_rest(m, spec))
                                  for m, spec in from_host])
        retire_own_shapers(run, [m for m, _ in from_host])
        applied |= read_back_from_host(run, [m for m, _ in from_host])
        with ThreadPoolExecutor(SHAPERS) as shapers:
            applied |= dict(shapers.map(shape, own))
    return applied


def clearing_the_rest(member: Member, spec: dict[str, Any]) -> dict[str, Any]:
    """The plan, and each of the member's other interfaces cleared: shaped anew, an
    interface may have lost every command (its segment's profile now plain), and what
    an earlier plan left there must go with the shaper that served it (a delay line's
    NFQUEUE rule without its listener drops everything)."""
    planned = {interface["address"] for interface in spec["interfaces"]}
    return {"interfaces": [*spec["interfaces"], *(
        {"address": a.address, "commands": [], "delay_line": None}
        for a in member.attachments if a.address not in planned)]}


def unshape_segment(run: RunOnEngine, segment: str) -> list[str]:
    """Clear what shaping left on every interface of one segment (qdiscs, loss and
    delay rules): the host's shaper applies an empty plan there (vnetbench-shape clears
    each interface it is given), and the own shapers of those containers go. For a
    topology planned unshaped, after a fault shaped it; the containers cleared."""
    plans = []
    for member in members(run):
        interfaces: list[dict[str, Any]] = [
            {"address": a.address, "commands": [], "delay_line": None}
            for a in member.attachments if a.segment == segment]
        if interfaces:
            plans.append((member, {"interfaces": interfaces}))
    apply_in_namespaces(run, [(m.placed, spec) for m, spec in plans])
    retire_own_shapers(run, [m for m, _ in plans])
    return [m.container for m, _ in plans]


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
    """A shaping the keeper answers for: its member, its plan, and how what holds it was
    last seen (its own shaper; or, shaped from its host, the member itself)."""

    member: Member
    interfaces: list[dict[str, Any]]
    from_host: bool = False
    id: str = ""
    started: datetime | None = None
    dropped: dict[int, int] = field(default_factory=dict)  # each line's drops, last check

    @property
    def name(self) -> str:
        return self.member.container if self.from_host else shaper_name(self.member)


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
            spec = shaping_spec(self.topology, member, available)
            if spec["interfaces"]:
                watched = Watched(member, spec["interfaces"], not needs_own_shaper(spec),
                                  member.id, member.started)
                self.watched[watched.name] = watched
        states = shaper_states(self.run)
        for name, watched in self.watched.items():
            if watched.from_host:
                continue
            watched.id, watched.started = "", None
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
            now = {m.container: m for m in members(self.run)}
            hosted = [w for w in self.watched.values()
                      if w.from_host and w.member.container in now]
            placed = [now[w.member.container].placed for w in hosted]
            with contextlib.suppress(EngineError):  # a host shaper gone: started again to
                ensure_host_shapers(self.run, placed)  # read (the namespaces hold the plan)
            seen = read_namespaces(self.run, placed)
            with ThreadPoolExecutor(READERS) as readers:
                found = list(readers.map(lambda w: self._check(w, states.get(w.name)),
                                         [w for w in self.watched.values() if not w.from_host]))
            found += [self._check_from_host(w, now[w.member.container],
                                            seen.get(w.member.container, "not read"))
                      for w in hosted]
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

    def _check_from_host(self, watched: Watched, member: Member,
                         seen: Seen | str) -> Comparison:
        """A container shaped from its host, running now (one that is not carries
        nothing; the stack's own check names a stop it did not plan)."""
        result = Comparison()
        if (member.id, member.started) != (watched.id, watched.started):
            result.changed.append(
                f"{member.container} was started again at {at(member.started)} (a new "
                "namespace: its links were not shaped as planned until shaped again)")
            watched.id, watched.started, watched.dropped = member.id, member.started, {}
        if isinstance(seen, str):
            result.changed.append(f"{member.container}: reading back its namespace failed: "
                                  f"{seen}")
            return result
        result.add(compare(watched.interfaces, seen, member.container, watched.dropped))
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
                    if needs_own_shaper(spec):
                        start_shaper(self.run, member, spec)
                    else:
                        apply_in_namespaces(self.run, [(member.placed, spec)])
                    self.reapplied.append(member.node)
                    note(f"{member.node} restarted: its link shaping was applied again")
                except (UserError, EngineError) as error:
                    note(f"{member.node} restarted, and shaping it again failed: "
                         f"{error}", style="red")

