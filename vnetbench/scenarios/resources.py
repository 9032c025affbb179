"""Resources per role, what throughput and the room both measure around their load: the
roles whose CPU and memory are metrics, and the memory of each idle and under load.
The mem_* metrics are throughput's declaration's (the room emits them as throughput
declares them: issue #59 leaves who declares a metric shared by two scenarios to its
dimensions part)."""

from __future__ import annotations

from dataclasses import dataclass

from vnetbench.declared.declaration import Values
from vnetbench.declared.throughput import DECLARATION
from vnetbench.measure.memory import MIB, RoleMemory
from vnetbench.scenarios.base import Metrics

CPU_ROLES = ("agent", "switch", "conductor")  # the roles whose CPU is a metric


@dataclass(frozen=True)
class MemoryFigures:
    """Memory per role (of CPU_ROLES) idle, before the stream, and under load."""

    idle: dict[str, RoleMemory]
    load: dict[str, RoleMemory]

    def metrics(self) -> Metrics:
        """Per container on average, idle and under load; the highest peak of any."""
        values: Values = {}
        for role in CPU_ROLES:
            idle, load = self.idle.get(role), self.load.get(role)
            if idle:
                values[DECLARATION.series("mem_idle_mib", role=role)] = idle.mean_bytes / MIB
            if load:
                values[DECLARATION.series("mem_load_mib", role=role)] = load.mean_bytes / MIB
            peaks = [m.max_peak_bytes for m in (idle, load)
                     if m is not None and m.max_peak_bytes is not None]
            if peaks:
                values[DECLARATION.series("mem_peak_mib", role=role)] = max(peaks) / MIB
        return DECLARATION.emitted(values)
