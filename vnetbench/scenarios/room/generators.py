"""A switch's machines share one open-loop generator (`vnetbench-room many`).

A generator of its own in a probe container of its own cost each machine about
25 MiB and a container (issue #60: 912 containers and 11.2 GiB for 300 machines),
and the engine's start of every probe set the room's lead (0.3 s a machine). Here
the machines of one switch on one host share a probe: it joins the first one's
namespace (so the engine places it on that host), sees the host's PIDs, and opens
each machine's sockets inside that machine's own network namespace
(/proc/PID/ns/net, setns(2): CAP_SYS_ADMIN), so every request still leaves from
its machine's namespace and address, through its machine's shaped link.

The closed loop (wrk) keeps a probe per machine; so does a machine the schedule of
faults started again (runtime.py `resume`: its namespace is a new one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vnetbench.engines.base import ContainerRecord

TOOL = "vnetbench-room"
MACHINE_MARK = "@"  # before each machine's MACHINE:PID in `many`'s arguments
RECORD_MARK = f"{TOOL}@"  # `many` prints "vnetbench-room@MACHINE {json}" per machine
# At most this many machines a generator: more generators use both cores and keep each
# event loop's lag low; each costs an interpreter (~25 MiB) and a container.
MACHINES_PER_GENERATOR = 100
# Linux takes at most 2 MiB of arguments and environment together (a quarter of the
# 8 MiB stack); a generator's arguments stay well under it (one machine's schedule is
# at most 128 KiB: open_loop.py MAX_ARG_BYTES).
ARGV_BUDGET_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Generator:
    """One shared generator: its container's name, the machine container it is placed
    beside (joined to its namespace), its machines and its command."""

    name: str
    beside: str
    machines: tuple[str, ...]
    argv: tuple[str, ...]


@dataclass(frozen=True)
class Group:
    """Machines that may share a generator: one switch's, on one host."""

    host: str
    switch: str
    machines: tuple[str, ...]


def groups_of(machines: Sequence[str], switch_of: Mapping[str, str],
              host_of: Mapping[str, str]) -> list[Group]:
    """The machines by host and switch, in their order, at most MACHINES_PER_GENERATOR
    a group."""
    by_place: dict[tuple[str, str], list[str]] = {}
    for machine in machines:
        by_place.setdefault((host_of.get(machine, ""), switch_of[machine]), []).append(machine)
    return [Group(host, switch, tuple(members[i:i + MACHINES_PER_GENERATOR]))
            for (host, switch), members in by_place.items()
            for i in range(0, len(members), MACHINES_PER_GENERATOR)]


def is_open_loop(argv: Sequence[str]) -> bool:
    return TOOL in argv and "open" in argv[list(argv).index(TOOL) + 1:][:3]


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """A machine's probe command as (what runs the tool: timeout(1) and the tool, the
    gate's option, open's arguments after `open`)."""
    at = list(argv).index(TOOL) + 1
    rest = list(argv[at:])
    gate = rest[:2] if rest[:1] == ["--gate"] else []
    rest = rest[len(gate):]
    if rest[:1] != ["open"]:
        raise ValueError(f"not an open loop: {' '.join(argv[:at + 3])}")
    return list(argv[:at]), gate, rest[1:]


def generators(prefix: str, groups: Sequence[Group], argv: Mapping[str, Sequence[str]],
               pids: Mapping[str, int], container_of: Mapping[str, str]) -> list[Generator]:
    """A generator per group (more where its arguments would pass ARGV_BUDGET_BYTES),
    for the machines with a command and a process (`pids`); the others are left out."""
    made: list[Generator] = []
    for group in groups:
        members = [m for m in group.machines if m in argv and m in pids]
        chunk: list[str] = []
        size = 0
        for machine in members:
            words = [f"{MACHINE_MARK}{machine}:{pids[machine]}",
                     *split_command(argv[machine])[2]]
            cost = sum(len(word) + 1 for word in words)
            if chunk and size + cost > ARGV_BUDGET_BYTES:
                made.append(generator(f"{prefix}-generator-{len(made) + 1}", chunk, argv,
                                      pids, container_of))
                chunk, size = [], 0
            chunk.append(machine)
            size += cost
        if chunk:
            made.append(generator(f"{prefix}-generator-{len(made) + 1}", chunk, argv, pids,
                                  container_of))
    return made


def generator_prefix(probe: str, machine: str) -> str:
    """What a pass's generators are named after, from a machine's probe name as the
    pass gave it ("...-room-1-agent1") or as an earlier start of the pass made it its
    generator's ("...-room-1-generator-2": the room started again, runtime.py)."""
    return probe.rsplit("-generator-", 1)[0].removesuffix(f"-{machine}")


def generator(name: str, machines: list[str], argv: Mapping[str, Sequence[str]],
              pids: Mapping[str, int], container_of: Mapping[str, str]) -> Generator:
    """One generator of `machines`: the first one's command runs it (timeout(1)'s
    bound and the gate are the room's, the same for every machine)."""
    head, gate, _ = split_command(argv[machines[0]])
    words: list[str] = [*head, *gate, "many"]
    for machine in machines:
        words += [f"{MACHINE_MARK}{machine}:{pids[machine]}", *split_command(argv[machine])[2]]
    return Generator(name, container_of[machines[0]], tuple(machines), tuple(words))


def pids_of(records: Sequence[ContainerRecord],
            machine_of: Mapping[str, str]) -> dict[str, int]:
    """Each machine's process on its host (its container's, running), by machine;
    `machine_of`: machine by container name."""
    return {machine_of[r.name]: r.pid for r in records
            if r.name in machine_of and r.running and r.pid}


def machine_text(log: str, machine: str) -> str:
    """A machine's part of a probe's log: a shared generator's lines for it, its mark
    made the one of a machine's own probe ("vnetbench-room {json}"), with the lines
    no machine's (an error of the whole generator); another probe's log as it is."""
    if RECORD_MARK not in log:
        return log
    own = f"{RECORD_MARK}{machine} "
    kept = []
    for line in log.splitlines():
        if line.startswith(own):
            kept.append(f"{TOOL} {line[len(own):]}")
        elif not line.startswith(RECORD_MARK):
            kept.append(line)
    return "\n".join(kept) + ("\n" if kept else "")
