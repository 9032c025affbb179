"""The room's counters: the kernel's, in every namespace of the room and of each
shaper, read once before the load and once after it (scenarios/room/counters.py), their
deltas kept in the pass's raw directory (room-passN-counters.json) and attributed
(scenarios/room/attribution.py) in the pass's notes, beside its tail and its failures."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from ipaddress import IPv4Network

from vnetbench.files import write_text_atomic
from vnetbench.measure.room import MachineLoad, RoomFigures
from vnetbench.scenarios.base import ScenarioContext
from vnetbench.scenarios.room.attribution import MACHINE, SERVER, PassFigures, attribute
from vnetbench.scenarios.room.counters import READERS, Snapshot, pass_counters, read_snapshots
from vnetbench.shaping.apply import members
from vnetbench.shaping.namespaces import Placed, host_shapers
from vnetbench.terminal.ui import waiting

READ_S = 0.5  # a namespace's read (an exec), READERS at once: for the progress line


@dataclass(frozen=True)
class RoomNodes:
    """The room's machines (agents), its server agent, and the server's nginx probe."""

    machines: list[str]
    server: str
    server_probe: str


@dataclass(frozen=True)
class Taken:
    """One snapshot of the room: every node's counters, those unread, and the server's
    CPU seconds (its agent's and its nginx probe's) at that moment."""

    snapshots: dict[str, Snapshot]
    unread: dict[str, str]
    server_cpu_s: dict[str, float]


def targets(context: ScenarioContext, room: RoomNodes) -> tuple[dict[str, str],
                                                               dict[str, str]]:
    """Where each node's counters are read (its own shaper when it has one: NET_ADMIN
    reads the loss rules; else its own container, in its namespace), and its role.
    Every shaped node is read too: a switch drops on its side of a link."""
    shapers = {w.member.container: (name, w.member.node, w.member.role) for name, w in
               (context.shaping.watched.items() if context.shaping else [])}
    found, roles = {}, {}
    for agent in [*room.machines, room.server]:
        container = context.container(agent)
        found[agent] = shapers.pop(container, (container, "", ""))[0]
        roles[agent] = SERVER if agent == room.server else MACHINE
    for name, node, role in shapers.values():
        found[node], roles[node] = name, role
    return found, roles


def from_host(context: ScenarioContext, where: dict[str, str]) -> dict[str, Placed]:
    """The nodes whose namespace a host shaper can read (shaping/namespaces.py: with
    NET_ADMIN, in a few calls a host rather than an exec a namespace), by node."""
    hosts = set(host_shapers(context.stack)) if context.shaping is not None else set()
    if not hosts or context.shaping is None:
        return {}
    holder = {w.name: w.member.container for w in context.shaping.watched.values()}
    running = {m.container: m for m in members(context.stack)}
    return {node: running[c].placed for node, target in where.items()
            if (c := holder.get(target, target)) in running and running[c].host in hosts}


def networks(context: ScenarioContext) -> list[tuple[IPv4Network, str]]:
    """The stack's subnets, named as a link: 'backbone', 'site switch2'."""
    plan = context.plan
    return [(plan.backbone.subnet, "backbone"),
            *((network.subnet, f"site {switch}") for switch, network in plan.sites.items())]


def take(context: ScenarioContext, room: RoomNodes, when: str) -> Taken:
    """Every node's counters now (`when`: 'before'/'after' the load, for the
    progress line)."""
    where, _ = targets(context, room)
    with waiting(f"reading the kernel's counters in {len(where)} namespaces {when} the "
                 "load", READ_S * len(where) / READERS):
        snapshots, unread = read_snapshots(context.stack, where,
                                           from_host(context, where))
        cpu = context.stack.cpu_by_container({context.container(room.server),
                                              room.server_probe})
    return Taken(snapshots, unread, cpu)


def figures(room: RoomFigures, loads: dict[str, MachineLoad], server_cpu: float | None,
            nginx_cpu: float | None, host_percent: float | None,
            faults: tuple[str, ...] = ()) -> PassFigures:
    """The pass's figures the attribution reads; the server's CPU its agent's and its
    nginx's together (percent of a core)."""
    failing = sorted({*(m for m, load in loads.items() if load.failed), *room.without_record})
    server = None if server_cpu is None and nginx_cpu is None else (
        (server_cpu or 0.0) + (nginx_cpu or 0.0))
    return PassFigures(room.percentile_ms(50), room.percentile_ms(99), room.requests,
                       room.failed, dict(room.errors), tuple(failing),
                       room.machines + len(room.without_record), server, host_percent,
                       os.cpu_count() or 1, faults)


def attributed(context: ScenarioContext, nodes: RoomNodes, before: Taken, after: Taken,
               load_s: float, pass_no: int, room: RoomFigures, loads: dict[str, MachineLoad],
               server_cpu: float | None, host_percent: float | None,
               faults: tuple[str, ...] = ()) -> list[str]:
    """The pass's deltas kept (room-passN-counters.json) and its attribution's
    sentences. nginx idles outside the load, so its CPU between the snapshots is its
    CPU during the load (`load_s`)."""
    _, roles = targets(context, nodes)
    counters = pass_counters(before.snapshots, after.snapshots, roles, networks(context),
                             {**before.unread, **after.unread})
    probe = nodes.server_probe
    used = after.server_cpu_s.get(probe, 0.0) - before.server_cpu_s.get(probe, 0.0)
    nginx = 100 * used / load_s if probe in after.server_cpu_s and load_s > 0 else None
    found = attribute(counters, figures(room, loads, server_cpu, nginx, host_percent, faults))
    write_text_atomic(context.raw_dir / f"room-pass{pass_no}-counters.json", json.dumps(
        {**counters.record(), "nginx_cpu_percent": nginx, "attribution": found.notes()},
        indent=1) + "\n")
    return found.notes()
