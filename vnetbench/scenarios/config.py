"""config: how long does a rule change take to reach every switch?

As the seed: a config with one address and four rules per machine for
BENCH_MACHINES machines; one line is appended and the overlay's reload signal
sent; the time runs until every switch has confirmed the new config. The
overlay does the overlay-specific part (Overlay.reconfigure).
"""

from __future__ import annotations

from vnetbench.core.outcome import Kind, Outcome, State, single
from vnetbench.core.schema import MACHINES
from vnetbench.declared.config import DECLARATION
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import Reconfiguration
from vnetbench.scenarios.base import Metrics, PassResult, Scenario, ScenarioContext
from vnetbench.terminal.ui import waiting


class ConfigChange(Scenario):
    declaration = DECLARATION
    needs = frozenset({Capability.RELOAD})

    def settings(self, topology: Topology) -> dict[str, object]:
        return {MACHINES: topology.settings.machines}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        machines = context.topology.settings.machines
        with waiting(f"pass {pass_no}: config of {machines} machines, one line changed"):
            change = context.overlay.reconfigure(context.stack, context.topology, machines)
        metrics = config_metrics(change)
        summary: dict[str, float | int | str | None] = {
            "config_ms": round(change.seconds * 1000, 1) if change.seconds is not None else None,
            "lines": change.lines, "kbytes": round(change.bytes / 1000),
            "confirmed": f"{change.confirmed}/{change.expected}",
        }
        outcome = Outcome() if change.confirmed == change.expected else single(
            State.FAILED, Kind.FAILED, change.unconfirmed)
        return PassResult(metrics, summary, outcome)


def config_metrics(change: Reconfiguration) -> Metrics:
    return DECLARATION.emitted({
        "config_seconds": change.seconds,
        "config_lines": change.lines,
        "config_bytes": change.bytes,
        "switches_confirmed": change.confirmed,
    })
