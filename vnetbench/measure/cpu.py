"""CPU time per role, from the containers' cgroup counters (as VpnCloud's report
gives CPU per side; the counters are read by engines/usage.py), and the host's
outside load around a pass."""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vnetbench.engines.usage import (
    CGROUP,
    container_counters,
    counter_seconds,
    proc_stat_cpu,
)


def cpu_percent(before: dict[str, float], after: dict[str, float],
                seconds: float) -> dict[str, float]:
    """Percent of one core per key over an interval (probes started inside it count
    from zero: their whole use fell in the interval). A counter that went backwards
    (its container restarted, so its count began again) gives no figure, rather than
    a negative one: what it used in the interval is unknown (went_backwards names it)."""
    return {key: 100 * (after[key] - before.get(key, 0.0)) / seconds
            for key in after if seconds > 0 and key not in went_backwards(before, after)}


def went_backwards(before: dict[str, float], after: dict[str, float]) -> list[str]:
    """Keys whose counter is lower after than before (the container restarted)."""
    return sorted(key for key in after if after[key] < before.get(key, 0.0))


def role_percent(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]],
                 seconds: float) -> tuple[dict[str, float], dict[str, str]]:
    """Percent of one core per role over an interval, summed over its containers; and
    the roles with no figure, with why: one of its containers restarted (its counter
    went backwards) or ended (what it used is unknown), which a sum would hide."""
    percents, unmeasured = {}, {}
    for role in sorted(set(before) | set(after)):
        earlier, later = before.get(role, {}), after.get(role, {})
        restarted, ended = went_backwards(earlier, later), set(earlier) - set(later)
        reasons = ([f"{len(restarted)} container(s) restarted (counter went backwards)"]
                   if restarted else []) + ([f"{len(ended)} ended"] if ended else [])
        if reasons:
            unmeasured[role] = " and ".join(reasons)
        elif later and seconds > 0:
            percents[role] = sum(cpu_percent(earlier, later, seconds).values())
    return percents, unmeasured


# --- CPU spent outside the testbed during a pass -----------------------------------
#
# On a shared machine a slow pass may be a busy machine, not a slow overlay. Host CPU
# outside the testbed = the host's task time (user, nice, system, steal: interrupt
# and softirq time is left out, since the traffic itself is processed there and is
# charged to no container) minus every container of the engine (their parent cgroup,
# whose counter keeps the time of containers already removed, such as a pass's probes)
# minus the engine's daemons and this process with the children it waited for, plus
# the containers on this machine that are not the run's (another run's, or anything
# else the engine runs): a neighbour's stream is outside load too. Those counted are
# the ones up at both samples; one started and removed within the pass is missed.

ENGINE_DAEMONS = ("dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2",
                  "docker-proxy", "runc", "docker-init")
CONTAINERS_CGROUPS = (CGROUP / "cpuacct" / "docker" / "cpuacct.usage",
                      CGROUP / "cpu,cpuacct" / "docker" / "cpuacct.usage",
                      CGROUP / "docker" / "cpu.stat", CGROUP / "system.slice" / "cpu.stat")


@dataclass(frozen=True)
class HostSample:
    at: float  # time.monotonic()
    tasks_s: float  # host task time, all cores
    containers_s: float | None  # every container of the engine (None: no counter found)
    testbed_s: float  # the engine's daemons, this process and its reaped children
    # the engine's daemons by pid: a process that ends between two samples (a removed
    # container's shim) takes its whole count out of a plain sum, which went negative
    daemons: Mapping[int, float] = field(default_factory=dict)
    # CPU seconds of each container on this machine that is not the run's, by id
    others: Mapping[str, float] = field(default_factory=dict)

    def others_since(self, before: HostSample) -> float:
        """CPU seconds of the containers not the run's, up at both samples."""
        return sum(seconds - before.others[key] for key, seconds in self.others.items()
                   if key in before.others and seconds >= before.others[key])

    def testbed_since(self, before: HostSample) -> float:
        """The testbed's own CPU seconds since `before`: this process's, and each
        engine daemon's own increase (one that ended meanwhile counts nothing, one
        that began counts all it used)."""
        if not self.daemons and not before.daemons:
            return self.testbed_s - before.testbed_s
        own = (self.testbed_s - sum(self.daemons.values())) - (
            before.testbed_s - sum(before.daemons.values()))
        return own + sum(seconds - before.daemons.get(pid, 0.0)
                         for pid, seconds in self.daemons.items())


def host_task_seconds(stat: str | None = None) -> float:
    """/proc/stat's user + nice + system + steal, in seconds (all cores)."""
    fields = proc_stat_cpu(stat)
    user, nice, system, steal = fields[0], fields[1], fields[2], fields[7]
    return (user + nice + system + steal) / os.sysconf("SC_CLK_TCK")


def containers_seconds() -> float | None:
    """CPU seconds of all the engine's containers so far (cgroup v1 or v2, cgroupfs)."""
    path = next((path for path in CONTAINERS_CGROUPS if path.exists()), None)
    return None if path is None else counter_seconds(path.read_text(), path)


def testbed_process_seconds() -> float:
    """CPU seconds of the engine's daemons (by name) and of this process with its
    waited-for children (the docker clients vnetbench runs)."""
    return sum(os.times()[:4]) + sum(daemon_seconds().values())


def daemon_seconds() -> dict[int, float]:
    """CPU seconds of each of the engine's daemons (by name), with the children each
    reaped (runc), by pid."""
    tick = os.sysconf("SC_CLK_TCK")
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or entry.name == str(os.getpid()):
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:]
        if name in ENGINE_DAEMONS:  # utime, stime, and the children it reaped (runc)
            fields = rest.split()
            found[int(entry.name)] = sum(int(v) for v in fields[11:15]) / tick
    return found


def host_sample(ours: Collection[str] | None = None, root: Path = CGROUP) -> HostSample:
    """The host's counters now; with `ours` (the run's container ids), every other
    container's CPU seconds too (None: none read, as calibrate's idle samples)."""
    daemons = daemon_seconds()
    others = {} if ours is None else others_seconds(set(ours), root)
    return HostSample(time.monotonic(), host_task_seconds(), containers_seconds(),
                      sum(os.times()[:4]) + sum(daemons.values()), daemons, others)


def others_seconds(ours: set[str], root: Path = CGROUP) -> dict[str, float]:
    """CPU seconds of every container on this machine whose id is not in `ours` (one
    gone while it is read gives nothing)."""
    found = {}
    for key, path in container_counters(root).items():
        try:
            seconds = None if key in ours else counter_seconds(path.read_text(), path)
        except (OSError, ValueError):
            continue
        if seconds is not None:
            found[key] = seconds
    return found


def outside_cores(before: HostSample, after: HostSample) -> float | None:
    """Cores' worth of CPU the host spent outside the testbed between two samples
    (None where the containers' counter cannot be read); never below 0."""
    elapsed = after.at - before.at
    if before.containers_s is None or after.containers_s is None or elapsed <= 0:
        return None
    outside = ((after.tasks_s - before.tasks_s) - (after.containers_s - before.containers_s)
               - after.testbed_since(before) + after.others_since(before))
    return max(0.0, outside / elapsed)
