"""Running a tool in a container that shares an agent's network namespace.

The probe is our own `tools` image joined to the target container's network
(`--network container:<name>`), so the system under test's image is never
modified. Every probe carries the run's label, so teardown removes it too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from vnetbench.engines.base import Mount, RunOnEngine, ToolOutput, ToolSpec

__all__ = ["HELD_OUTPUT", "Began", "ProbeOutput", "RunOnEngine", "ToolRun", "at_instant",
           "held", "parsed", "run_probe", "save_raw", "split_began", "start_probe",
           "stop_probe", "stop_probes", "timeout_argument"]
from vnetbench.files import write_text_atomic
from vnetbench.runtime.labels import TOOL, run_labels

ProbeOutput = ToolOutput


def _labels(run_id: str, target: str, tool: str) -> dict[str, str]:
    return run_labels(run_id, "probe", target, **{TOOL: tool})


def timeout_argument(seconds: float) -> str:
    """timeout(1)'s duration, whole seconds rounded up: rounded to the nearest, a bound
    under half a second would read 0, which to timeout(1) means no bound at all."""
    return str(max(1, math.ceil(seconds)))


# A probe's stdout is the engine's attach stream: each line the tool prints wakes the
# container's shim, the daemon and the CLI reading it, while the tool measures. Pings
# printing every reply that way read 0.043-0.046 ms over the two-router baseline path,
# the same pings written to a file 0.026-0.030 ms (one stack, interleaved; docs/cost.md).
# So the tool writes to files in the probe, printed once it has ended, its status kept.
HELD_OUTPUT = ('out=$(mktemp) err=$(mktemp); "$@" >"$out" 2>"$err"; status=$?; '
               'cat "$out"; cat "$err" >&2; exit $status')


def held(argv: list[str]) -> list[str]:
    """argv, its output held in the probe until it ends (HELD_OUTPUT)."""
    return ["sh", "-c", HELD_OUTPUT, "held", *argv]


# The tools image's vnetbench-at: a tool started at one instant of the host's clock,
# whenever the engine started its container before it; its first line says when it began.
AT_MARK = "vnetbench-at "


def at_instant(instant: float, argv: list[str]) -> list[str]:
    """argv, started at `instant` (seconds since the epoch, the host's clock)."""
    return ["vnetbench-at", f"{instant:.6f}", *argv]


@dataclass(frozen=True)
class Began:
    """When a tool started at an instant began, and how long after the instant."""

    at: float  # seconds since the epoch
    late_s: float  # positive: its container was started after the instant
    # how long it slept for the instant (0: it started after it; None: a stamp from
    # before vnetbench-at printed it)
    waited_s: float | None = None


def split_began(output: str) -> tuple[Began | None, str]:
    """vnetbench-at's stamp line, and the tool's own output after it (None and the
    output as it is when the first line is no stamp: the tool never started)."""
    first, _, rest = output.partition("\n")
    if not first.startswith(AT_MARK):
        return None, output
    fields = dict(part.split("=", 1) for part in first[len(AT_MARK):].split() if "=" in part)
    try:
        waited = float(fields["waited_s"]) if "waited_s" in fields else None
        return Began(float(fields["began"]), float(fields["late_s"]), waited), rest
    except (KeyError, ValueError):
        return None, output


def tool_of(argv: list[str]) -> str:
    """The tool a probe runs, for its label: the command vnetbench-at starts, not the
    wrapper (a probe is found by its tool, e.g. every iperf3 client)."""
    if argv[0] == "vnetbench-at" and len(argv) > 2:
        return argv[2]
    return argv[0]


def run_probe(run: RunOnEngine, target: str, argv: list[str],
              timeout_seconds: float) -> ProbeOutput:
    """Run argv to completion in target's namespace, bounded by timeout_seconds, its
    output returned when it ends (not streamed while it measures)."""
    bounded = ["timeout", "-k", "2", timeout_argument(timeout_seconds), *argv]
    return run.engine.run_tool(target, ToolSpec(
        tuple(held(bounded)), _labels(run.run_id, target, tool_of(argv))))


def start_probe(run: RunOnEngine, target: str, argv: list[str], name: str,
                remove: bool = True, mounts: tuple[Mount, ...] = (),
                enters_namespaces: bool = False, cpu_shares: int | None = None) -> str:
    """Start a long-running tool (e.g. an iperf3 server) in target's namespace;
    `remove=False` keeps it (and its log) after it ends, until stop_probe; `mounts`:
    directories of this machine it reads (the room server's TLS key);
    `enters_namespaces`: it also opens sockets in other containers' network namespaces
    of its host (a room's shared generator): it sees the host's PIDs, has
    CAP_SYS_ADMIN for setns(2) and CAP_SYS_PTRACE to open another process's
    /proc/PID/ns/net (an agent with capabilities the probe lacks is otherwise out of
    reach: ptrace's access check), and no AppArmor profile (docker-default confines
    ptrace to its own profile); `cpu_shares`: its CPU weight (ToolSpec's)."""
    return run.engine.start_tool(target, ToolSpec(
        tuple(argv), _labels(run.run_id, target, tool_of(argv)), name=name, keep=not remove,
        mounts=mounts, host_pids=enters_namespaces,
        capabilities=("SYS_ADMIN", "SYS_PTRACE") if enters_namespaces else (),
        security_options=("apparmor=unconfined",) if enters_namespaces else (),
        cpu_shares=cpu_shares))


def stop_probe(run: RunOnEngine, name: str) -> None:
    run.engine.remove(name)  # already gone is fine: a one-off server that exited


def stop_probes(run: RunOnEngine, names: list[str]) -> None:
    """Several probes at once (Engine.remove_all), not one engine call after another."""
    run.engine.remove_all(names)


T = TypeVar("T")


@dataclass(frozen=True)
class ToolRun(Generic[T]):
    """One run of a tool: its raw output, and its parsed result or why there is none."""

    raw: str
    result: T | None
    error: str | None


def parsed(raw: str, parse: Callable[[str], T], failure: type[Exception]) -> ToolRun[T]:
    """raw through its parser; the parser's own `failure` becomes the run's error text."""
    try:
        return ToolRun(raw, parse(raw), None)
    except failure as error:
        return ToolRun(raw, None, str(error))


def save_raw(path: Path, text: str) -> None:
    """Keep a tool's raw output (the run's raw directory), creating the directory."""
    write_text_atomic(path, text)
