"""Memory per role, from the containers' cgroups on the host (cgroup v1 or v2).

`current_bytes` is what `docker stats` shows: the cgroup's usage less the page
cache the kernel can take back at once (v1: `memory.usage_in_bytes` minus
`memory.stat`'s `total_inactive_file`; v2: `memory.current` minus `inactive_file`).
`peak_bytes` is the cgroup's own high-water mark since the container started
(v1: `memory.max_usage_in_bytes`; v2: `memory.peak`, None on kernels before 5.19):
it includes start-up, and page cache too, since the kernel keeps no high-water
mark of the figure less cache; so peak >= current, and a program that wrote or
read files may show a peak far above what it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vnetbench.measure.cpu import CGROUP

MIB = 1024 * 1024


@dataclass(frozen=True)
class MemoryReading:
    current_bytes: int  # in use, reclaimable page cache left out (as docker stats)
    peak_bytes: int | None  # the cgroup's high-water mark since start (cache included)


@dataclass(frozen=True)
class RoleMemory:
    """One role's containers at one moment: how many, their current memory summed and
    per container on average, and the highest peak of any of them."""

    containers: int
    total_bytes: int
    mean_bytes: float
    max_peak_bytes: int | None

    @classmethod
    def of(cls, readings: list[MemoryReading]) -> RoleMemory:
        total = sum(r.current_bytes for r in readings)
        peaks = [r.peak_bytes for r in readings if r.peak_bytes is not None]
        return cls(len(readings), total, total / len(readings) if readings else 0.0,
                   max(peaks) if peaks else None)


def by_role(readings: dict[str, list[MemoryReading]]) -> dict[str, RoleMemory]:
    """Each role's readings aggregated (roles without a reading left out)."""
    return {role: RoleMemory.of(found) for role, found in readings.items() if found}


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
