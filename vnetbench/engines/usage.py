"""What this machine's kernel counts of a container and of the host: a container's
CPU seconds and memory from its cgroup (v1 or v2), the host's busy cores, and the
wait for a quiet host. Read by the engines (Engine.cpu_seconds, Engine.memory, the
start gate's release) and by measure/ (per role, the host's outside load).

Memory: `current_bytes` is what `docker stats` shows: the cgroup's usage less the
page cache the kernel can take back at once (v1: `memory.usage_in_bytes` minus
`memory.stat`'s `total_inactive_file`; v2: `memory.current` minus `inactive_file`).
`peak_bytes` is the cgroup's own high-water mark since the container started (v1:
`memory.max_usage_in_bytes`; v2: `memory.peak`, None on kernels before 5.19): it
includes start-up, and page cache too, since the kernel keeps no high-water mark of
the figure less cache; so peak >= current, and a program that wrote or read files
may show a peak far above what it holds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def cpu_jiffies(stat: str | None = None) -> int:
    """Busy time of all cores since boot: /proc/stat's first line, all but idle and
    iowait (user nice system idle iowait irq softirq steal; guest is inside user)."""
    fields = proc_stat_cpu(stat)
    return sum(fields[:8]) - fields[3] - fields[4]


def proc_stat_cpu(stat: str | None = None) -> list[int]:
    """/proc/stat's first line, all cores: user nice system idle iowait irq softirq
    steal guest guest_nice, in clock ticks."""
    text = stat if stat is not None else Path("/proc/stat").read_text()
    return [int(v) for v in text.split("\n", 1)[0].split()[1:]]


def host_busy_cores(seconds: float) -> float:
    """Cores' worth of host CPU in use over the next `seconds` (all cores summed)."""
    before, started = cpu_jiffies(), time.monotonic()
    time.sleep(seconds)
    busy, elapsed = cpu_jiffies() - before, time.monotonic() - started
    return busy / os.sysconf("SC_CLK_TCK") / elapsed


def wait_until_quiet(busy_cores: float = 0.5, window_s: float = 0.1,
                     timeout_s: float = 5.0) -> tuple[float, bool]:
    """Wait until the host uses less than `busy_cores` of CPU over a window (bounded);
    the seconds waited, and whether it got there. Containers and programs that have
    just started (a bring-up, a restart) are busy for a moment, and what they take,
    the agents released next would lack: their release stamps would spread with it."""
    begun = time.monotonic()
    while time.monotonic() - begun < timeout_s:
        if host_busy_cores(window_s) < busy_cores:
            return time.monotonic() - begun, True
    return time.monotonic() - begun, False


def cpu_seconds(container_id: str) -> float | None:
    """Total CPU time the container has used, or None where no counter is readable: a
    container that ended after it was listed (a probe's server) loses its cgroup while
    it is read, which raised ENODEV mid-pass."""
    try:
        return _cgroup_cpu_seconds(container_id)
    except (OSError, ValueError):
        return None


def _cgroup_cpu_seconds(container_id: str) -> float | None:
    for path in cpu_counter_paths(container_id, CGROUP):  # read now: tests move it
        if path.exists():
            return counter_seconds(path.read_text(), path)
    return None


def cpu_counter_paths(container_id: str, root: Path = CGROUP) -> list[Path]:
    """Where a container's CPU counter may be: cgroup v1 (cpuacct.usage), v2 under
    systemd's driver or cgroupfs (cpu.stat)."""
    return [*(root / part / "docker" / container_id / "cpuacct.usage"
              for part in ("cpuacct", "cpu,cpuacct")),
            root / "system.slice" / f"docker-{container_id}.scope" / "cpu.stat",
            root / "docker" / container_id / "cpu.stat"]


def container_counters(root: Path = CGROUP) -> dict[str, Path]:
    """Every container's CPU counter on this machine (as cpu_counter_paths), by id."""
    found: dict[str, Path] = {}
    for parent in (root / "cpuacct" / "docker", root / "cpu,cpuacct" / "docker",
                   root / "docker"):
        if parent.is_dir():
            name = "cpu.stat" if parent == root / "docker" else "cpuacct.usage"
            found |= {d.name: d / name for d in parent.iterdir() if d.is_dir()}
    scopes = root / "system.slice"
    if scopes.is_dir():
        found |= {d.name.removeprefix("docker-").removesuffix(".scope"): d / "cpu.stat"
                  for d in scopes.glob("docker-*.scope") if d.is_dir()}
    return found


def counter_seconds(text: str, path: Path) -> float | None:
    """A CPU counter's text in seconds: v1's cpuacct.usage (ns), v2's cpu.stat
    (usage_usec); None when cpu.stat has no usage."""
    if path.name == "cpuacct.usage":
        return int(text) / 1e9
    usage = [v for k, _, v in (line.partition(" ") for line in text.splitlines())
             if k == "usage_usec"]
    return int(usage[0]) / 1e6 if usage else None


@dataclass(frozen=True)
class MemoryReading:
    current_bytes: int  # in use, reclaimable page cache left out (as docker stats)
    peak_bytes: int | None  # the cgroup's high-water mark since start (cache included)


def stat_fields(stat: str) -> dict[str, int]:
    """memory.stat's `key value` lines."""
    fields = {}
    for line in stat.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            fields[key] = int(value)
    return fields


def without_cache(usage: int, stat: dict[str, int], key: str) -> int:
    """Usage less the inactive page cache, as docker stats computes it (never < 0)."""
    inactive = stat.get(key, 0)
    return usage - inactive if inactive < usage else usage


def v1_reading(usage: str, max_usage: str, stat: str) -> MemoryReading:
    """From cgroup v1's memory.usage_in_bytes, memory.max_usage_in_bytes, memory.stat."""
    fields = stat_fields(stat)
    key = "total_inactive_file" if "total_inactive_file" in fields else "inactive_file"
    return MemoryReading(without_cache(int(usage), fields, key), int(max_usage))


def v2_reading(current: str, peak: str | None, stat: str) -> MemoryReading:
    """From cgroup v2's memory.current, memory.peak (None: absent) and memory.stat."""
    return MemoryReading(without_cache(int(current), stat_fields(stat), "inactive_file"),
                         int(peak) if peak is not None else None)


def memory_reading(container_id: str, root: Path = CGROUP) -> MemoryReading | None:
    """The container's memory now, or None where its cgroup is not found (or it ended
    while being read)."""
    try:
        v1 = root / "memory" / "docker" / container_id
        if (v1 / "memory.usage_in_bytes").exists():
            return v1_reading(*read_all(v1, ("memory.usage_in_bytes",
                                             "memory.max_usage_in_bytes", "memory.stat")))
        for v2 in v2_directories(container_id, root):
            if (v2 / "memory.current").exists():
                current, stat = read_all(v2, ("memory.current", "memory.stat"))
                peak = v2 / "memory.peak"
                return v2_reading(current, peak.read_text() if peak.exists() else None, stat)
    except (OSError, ValueError):
        return None
    return None


def v2_directories(container_id: str, root: Path) -> list[Path]:
    """Where cgroup v2 keeps a container: the systemd driver's scope, or cgroupfs's."""
    return [root / "system.slice" / f"docker-{container_id}.scope",
            root / "docker" / container_id]


def read_all(directory: Path, names: Iterable[str]) -> list[str]:
    return [(directory / name).read_text() for name in names]
