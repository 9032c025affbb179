"""Shaping containers' namespaces from one helper a host, where no process must stay.

A profile without a delay line is only qdiscs and rules: once applied they stay with
the namespace, and the shaper that applied them has nothing left to do. So rather than
a container a shaped container (a 1,000-machine room: 1,000 more containers, started
four at a time, 441 s of its bring-up), one helper a host sees the host's PIDs
(`pid: host`, CAP_SYS_ADMIN, CAP_SYS_PTRACE) and applies every such plan inside each
container's own namespace (/proc/PID/ns/net, images/tools/vnetbench-shape's
`namespaces`), and reads each back the same way (nsenter, verify.READ_SCRIPT). A delay
line is a process that must run in its namespace: those keep a shaper of their own
(apply.py). The helper joins the first shaped container's namespace only so that the
engine places it on that container's host; it shapes nothing of its own.

Whether a container's links still hold is then read from the container itself: the
same one (its id and its start) and its namespace's kernel, where an own shaper is
also checked for being the one that was there (a restart of either leaves its trace).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from vnetbench.engines.base import EngineError, RunOnEngine, ToolSpec
from vnetbench.errors import UserError
from vnetbench.runtime.labels import role_filter, run_filter, run_labels
from vnetbench.shaping.verify import (
    READ_BACK_TRIES,
    READ_SCRIPT,
    ReadBackError,
    Seen,
    parse_seen,
)

HOST_SHAPER_ROLE = "host-shaper"
# Namespaces a call shapes or reads: each plan is one argument (a few hundred bytes,
# under the kernel's 128 KiB an argument) and the call's words stay far under its 2 MiB;
# a 1,000-machine room's host makes ten calls, two at a time (2 cores).
NAMESPACES_PER_CALL = 100
CALLS_AT_ONCE = 2
APPLIED_MARK = "vnetbench-shape@"
NAMESPACE_SECTION = "@@vnetbench-namespace@@"
# For each PID given: the section's mark, then READ_SCRIPT ($0) run inside its namespace
READ_LOOP = ('script="$0"; for p in "$@"; do echo "' + NAMESPACE_SECTION + ' $p"; '
             'nsenter --net=/proc/$p/ns/net sh -c "$script" || '
             'echo "' + NAMESPACE_SECTION + ' $p failed"; done')


@dataclass(frozen=True)
class Placed:
    """A running container as its host sees it: where, and its first process."""

    container: str
    host: str  # the engine's node ('' on one host)
    pid: int


def needs_own_shaper(spec: Mapping[str, Any]) -> bool:
    """Whether a shaping plan runs a delay line (a process that must stay)."""
    return any(interface.get("delay_line") for interface in spec["interfaces"])


def host_shaper_name(run_id: str, index: int) -> str:
    return f"{run_id}-host{index}-shaper"


def host_shapers(run: RunOnEngine) -> dict[str, str]:
    """The run's running host shapers, by host."""
    listed = run.engine.containers([*run_filter(run.run_id), role_filter(HOST_SHAPER_ROLE)])
    return {c.where: c.name for c in listed if c.state == "running"}


def ensure_host_shapers(run: RunOnEngine, placed: Sequence[Placed]) -> dict[str, str]:
    """A host shaper on every host of `placed`, by host: started beside the host's first
    container where none runs (one stopped there is replaced under its name)."""
    listed = run.engine.containers([*run_filter(run.run_id), role_filter(HOST_SHAPER_ROLE)])
    running = {c.where: c.name for c in listed if c.state == "running"}
    stopped = {c.where: c.name for c in listed if c.state != "running"}
    names = {c.name for c in listed}
    for target in placed:
        if target.host in running:
            continue
        if target.host in stopped:  # the run's own (its labels say so), replaced
            name = stopped[target.host]
            run.engine.remove(name)
        else:
            name = next(host_shaper_name(run.run_id, i) for i in range(1, len(names) + 2)
                        if host_shaper_name(run.run_id, i) not in names)
        names.add(name)
        run.engine.start_tool(target.container, ToolSpec(
            ("sleep", "infinity"), run_labels(run.run_id, HOST_SHAPER_ROLE,
                                              target.host or "local"),
            entrypoint="", name=name, keep=True, init=True, host_pids=True,
            capabilities=("NET_ADMIN", "NET_RAW", "SYS_ADMIN", "SYS_PTRACE"),
            security_options=("apparmor=unconfined",)))
        running[target.host] = name
    return running


def chunks(placed: Sequence[Placed], shapers: Mapping[str, str]) -> list[tuple[str, list[Placed]]]:
    """The containers by host shaper, NAMESPACES_PER_CALL to a call."""
    by_shaper: dict[str, list[Placed]] = {}
    for target in placed:
        by_shaper.setdefault(shapers[target.host], []).append(target)
    return [(shaper, group[i:i + NAMESPACES_PER_CALL]) for shaper, group in by_shaper.items()
            for i in range(0, len(group), NAMESPACES_PER_CALL)]


def applied_lines(stdout: str) -> dict[int, str]:
    """What `vnetbench-shape namespaces` said of each PID: '' applied, else why not."""
    said: dict[int, str] = {}
    for line in stdout.splitlines():
        if not line.startswith(APPLIED_MARK):
            continue
        pid, _, outcome = line.removeprefix(APPLIED_MARK).partition(" ")
        if pid.isdigit():
            said[int(pid)] = "" if outcome == "applied" else outcome.removeprefix("failed: ")
    return said


def apply_in_namespaces(run: RunOnEngine, plans: Sequence[tuple[Placed, Mapping[str, Any]]]
                        ) -> None:
    """Every plan applied inside its container's namespace by its host's shaper;
    UserError naming the first container whose plan failed."""
    if not plans:
        return
    spec_of = {target.container: spec for target, spec in plans}
    shapers = ensure_host_shapers(run, [target for target, _ in plans])

    def call(chunk: tuple[str, list[Placed]]) -> list[str]:
        shaper, group = chunk
        argv = ["/usr/local/bin/vnetbench-shape", "namespaces",
                *(f"{t.pid}={json.dumps(spec_of[t.container])}" for t in group)]
        done = run.engine.execute(shaper, argv)
        said = applied_lines(done.stdout)
        return [f"{t.container}: {said.get(t.pid) or done.stderr.strip()[-300:] or 'no answer'}"
                for t in group if said.get(t.pid) != ""]

    with ThreadPoolExecutor(CALLS_AT_ONCE) as calls:
        failed = [f for found in calls.map(call, chunks([t for t, _ in plans], shapers))
                  for f in found]
    if failed:
        raise UserError(f"Shaping failed: {'; '.join(failed[:5])}. Check the link profile, "
                        "or run 'vnetbench doctor'.")


def read_sections(stdout: str) -> dict[int, str]:
    """READ_LOOP's output by PID; a namespace it could not enter reads as '' (no text)."""
    sections: dict[int, str] = {}
    pid: int | None = None
    for line in stdout.splitlines(keepends=True):
        if line.startswith(NAMESPACE_SECTION):
            words = line.split()
            pid = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
            if pid is not None:
                sections[pid] = "" if words[2:] == ["failed"] else sections.get(pid, "")
            if words[2:] == ["failed"]:
                pid = None
            continue
        if pid is not None:
            sections[pid] += line
    return sections


GONE = "its namespace could not be entered (its process is gone)"


@dataclass(frozen=True)
class Output:
    """A script's output in one namespace, or why there is none."""

    text: str | None
    why: str = ""


def run_in_namespaces(run: RunOnEngine, placed: Sequence[Placed], script: str
                      ) -> dict[str, Output]:
    """`script`'s output inside each container's namespace, by container, run by its
    host's shaper (NAMESPACES_PER_CALL to a call, CALLS_AT_ONCE at once); a host without
    a shaper, a call that failed or a namespace that could not be entered says so for
    its own containers only."""
    shapers = host_shapers(run)
    found = {t.container: Output(None, f"no host shaper runs on {t.host or 'this host'}")
             for t in placed if t.host not in shapers}

    def call(chunk: tuple[str, list[Placed]]) -> dict[str, Output]:
        shaper, group = chunk
        argv = ["sh", "-c", READ_LOOP, script, *(str(t.pid) for t in group)]
        try:
            done = run.engine.execute(shaper, argv)
            if done.exit_code != 0:
                raise EngineError.of_command(["exec", shaper, "sh", "-c"], done)
        except EngineError as error:
            return {t.container: Output(None, str(error).strip()[-300:]) for t in group}
        sections = read_sections(done.stdout)
        return {t.container: Output(sections.get(t.pid) or None,
                                    "" if sections.get(t.pid) else GONE) for t in group}

    reachable = [t for t in placed if t.host in shapers]
    with ThreadPoolExecutor(CALLS_AT_ONCE) as calls:
        for part in calls.map(call, chunks(reachable, shapers)):
            found |= part
    return found


def read_namespaces(run: RunOnEngine, placed: Sequence[Placed]) -> dict[str, Seen | str]:
    """What each container's namespace applies (verify.Seen), or why it could not be
    read, by container; read again (it only reads) while an output did not come back
    whole, READ_BACK_TRIES times."""
    found: dict[str, Seen | str] = {}
    left = list(placed)
    for _ in range(READ_BACK_TRIES):
        if not left:
            break
        outputs = run_in_namespaces(run, left, READ_SCRIPT)
        found |= {name: seen_or_why(out.text) if out.text else out.why
                  for name, out in outputs.items()}
        left = [t for t in left if isinstance(found[t.container], str)
                and str(found[t.container]).startswith("its output")]
    return found


def seen_or_why(section: str | None) -> Seen | str:
    if not section:
        return GONE
    try:
        return parse_seen(section)
    except ReadBackError as error:
        return f"its output did not come back whole ({error})"
