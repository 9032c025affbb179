"""baseline: the overlay replaced by plain kernel routing (the seed's
"same path without vNet"). Routers stand where the switches would."""

from __future__ import annotations

import platform
from pathlib import Path

from vnetbench.model.addressing import AddressPlan
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import Adjusted, Overlay
from vnetbench.runtime.gate import prepare_gate


class Baseline(Overlay):
    name = "baseline"
    summary = "kernel routing through one router per switch position, no overlay"
    data_path = "agent → router → backbone → router → agent (kernel forwarding)"
    services = ("router-{switch}",)
    # No joins and no config: kernel routing. A pool's agents share its container's
    # site address and route.
    capabilities = frozenset({Capability.AGENT_POOLS})

    def target_address(self, topology: Topology, plan: AddressPlan, agent: str) -> str:
        return str(plan.agent_site[agent])

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        """The marks directory its agents say they are ready in (no health check)."""
        return [prepare_gate(run_dir)]

    def version(self) -> str:
        return f"Linux {platform.release()} kernel forwarding"

    def adjust_settings(self, topology: Topology) -> Adjusted:
        """No tunnel and no encryption: a tunnel MTU and encryption: false do not
        apply; the native path is measured (a method's reference column)."""
        asked = {k: v for k, v in (("tunnel_mtu", topology.settings.tunnel_mtu),
                                   ("encryption", topology.settings.encryption))
                 if v is not None}
        if not asked:
            return Adjusted(topology)
        settings = topology.settings.model_copy(update=dict.fromkeys(asked))
        return Adjusted(topology.model_copy(update={"settings": settings}),
                        f"the native path: no tunnel ({' and '.join(asked)} "
                        f"{'do' if len(asked) > 1 else 'does'} not apply)")
