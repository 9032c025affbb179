"""What a scenario may need of an overlay, as data on both sides.

An overlay adapter declares the capabilities it has (`Overlay.capabilities`) and
says which of them its build in use lacks (`Overlay.missing`); a scenario
declares what it needs (`Scenario.needs`), and a topology's settings may ask for
more. Whether a scenario can run on an overlay is decided here alone
(`applicability`), so no overlay names a scenario and no scenario an overlay.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Protocol

from vnetbench.core.outcome import APPLICABLE, Applicability, NotApplicable, Unsupported
from vnetbench.model.topology import Topology


class Capability(StrEnum):
    JOIN = "join"  # agents attach to it, and its logs say who joined where
    RELOAD = "reload"  # a central config that can be changed while it runs
    AGENT_POOLS = "agent pools"  # several agents' processes in one container
    TLS = "tls"  # its links over TLS (settings.tls)
    LIMITS = "limits"  # per-agent rate limits it enforces (settings.limits)
    # a role apart from the data path (Overlay.control_plane) that can fail on its own
    CONTROL_PLANE = "control plane"


# What the rows of an overlay without it say ("not applicable: tinc has no ...").
LACKING = {
    Capability.JOIN: "has no joins",
    Capability.RELOAD: "has no central config to change",
    Capability.AGENT_POOLS: "runs one client per container",
    Capability.CONTROL_PLANE: "has no control plane apart from its data path",
}
# Features a setting asks of the links: an overlay that has none measures as it is
# (WireGuard has no TLS to turn on); one that has it, on a build without, is refused.
LINK_FEATURES = frozenset({Capability.TLS, Capability.LIMITS})


class Capable(Protocol):
    """The overlay as the decision reads it (overlays.base.Overlay)."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> frozenset[Capability]: ...

    def missing(self, capability: Capability) -> str | None: ...


def settings_needs(topology: Topology) -> frozenset[Capability]:
    """What a topology's settings ask of any overlay, whatever the scenario."""
    needs = {Capability.AGENT_POOLS} if topology.agent_pool > 1 else set()
    return frozenset(needs | ({Capability.TLS} if topology.settings.tls else set()))


def applicability(needs: Iterable[Capability], overlay: Capable) -> Applicability:
    """Not applicable where the overlay lacks a need, unsupported where its build
    does; the first such need (in declaration order) says why."""
    asked = set(needs)
    for capability in (c for c in Capability if c in asked):
        if capability not in overlay.capabilities:
            if capability in LINK_FEATURES:
                continue
            return NotApplicable(f"{overlay.name} {LACKING[capability]}")
        reason = overlay.missing(capability)
        if reason:
            return Unsupported(reason)
    return APPLICABLE

