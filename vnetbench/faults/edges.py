"""The backbone's edges, and what a helper staged on one needs: one helper per
backbone attachment (the tools image, in that container's namespace, NET_ADMIN)
finds the interface holding the address, and the executor (faults/executor.py, the
tools image's vnetbench-fault) has it put in and take out drop rules at its steps'
instants, each waited for in vnetbench-at. Staging starts STAGERS helpers at
once, about a second each on this 2-core host, so it begins staging_lead_s before
the first instant.
"""

from __future__ import annotations

from dataclasses import dataclass

from vnetbench.engines.base import EngineError, RunOnEngine
from vnetbench.runtime.labels import TOOL, run_labels
from vnetbench.shaping.apply import Member, members

MARK = "vnetbench-fault: "
SEGMENT = "backbone"
STAGERS = 4  # helpers started at once
# the engine's start of one helper on this 2-core host: about a second (docs/scenarios)
STAGE_S_PER_HELPER = 1.0
STAGE_MARGIN_S = 1.0
CAPABILITIES = ("NET_ADMIN", "NET_RAW")

@dataclass(frozen=True)
class Edge:
    """One backbone attachment and the helper staged for it."""

    container: str
    node: str
    address: str
    helper: str


def backbone_edges(run: RunOnEngine, prefix: str) -> list[Edge]:
    found = []
    for member in members(run):
        backbone = [a for a in member.attachments if a.segment == SEGMENT]
        found += [Edge(member.container, member.node, a.address,
                       helper_name(prefix, member, index, len(backbone)))
                  for index, a in enumerate(backbone)]
    return found


def helper_name(prefix: str, member: Member, index: int, count: int) -> str:
    return f"{prefix}-fault-{member.node}" + (f"-{index + 1}" if count > 1 else "")


def staging_lead_s(edges: int) -> float:
    """How long before the instant staging starts: STAGERS helpers at a time."""
    return STAGE_MARGIN_S + STAGE_S_PER_HELPER * -(-edges // STAGERS)


def helper_labels(run: RunOnEngine, edge: Edge) -> dict[str, str]:
    return run_labels(run.run_id, "probe", edge.node, **{TOOL: "vnetbench-fault"})


def helper_log(run: RunOnEngine, helper: str) -> str:
    try:
        return run.engine.logs(helper)
    except EngineError:
        return ""  # never started, or removed
