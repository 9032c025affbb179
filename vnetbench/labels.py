"""The labels every object of a run carries, and the filters that find them.

A container, network or volume of a run carries RUN (its run id); containers
also ROLE (conductor, switch, agent, router, hub, fabric, probe, shaper...)
and NODE (the topology's name for it), networks SEGMENT (site or backbone).
Teardown and `vnetbench clean` find everything by RUN, so they can neither
miss an object of a run nor touch one that is not vnetbench's.
"""

from __future__ import annotations

from typing import Literal

RUN = "vnetbench.run"
ROLE = "vnetbench.role"
NODE = "vnetbench.node"
SEGMENT = "vnetbench.segment"
OVERLAY = "vnetbench.overlay"
TOOL = "vnetbench.tool"

LabelFilter = tuple[Literal["label"], str]


def run_filter(run_id: str | None) -> list[LabelFilter]:
    """Objects of one run, or of every run when run_id is None."""
    return [("label", f"{RUN}={run_id}" if run_id else RUN)]


def role_filter(role: str) -> LabelFilter:
    return ("label", f"{ROLE}={role}")


def run_labels(run_id: str, role: str, node: str, **extra: str) -> dict[str, str]:
    """The labels of a container vnetbench starts itself (probes, shapers)."""
    return {RUN: run_id, ROLE: role, NODE: node, **extra}


def names_for_templates() -> dict[str, str]:
    """The label keys, for the Jinja templates (`label.run`, `label.role`, ...)."""
    return {"run": RUN, "role": ROLE, "node": NODE, "segment": SEGMENT, "overlay": OVERLAY}
