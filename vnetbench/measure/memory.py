"""Memory per role, from the containers' cgroups on the host (each container's
reading: engines/usage.py, which says what `current` and `peak` are)."""

from __future__ import annotations

from dataclasses import dataclass

from vnetbench.engines.usage import MemoryReading

MIB = 1024 * 1024


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
