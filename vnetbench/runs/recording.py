"""What a single run writes into its run.json as it goes: its start (addresses,
networks, topology, links), a block the engine refused, each stack's place and
shaping, and each stack's seconds (`StackClock`). The record is runrecord's."""

from __future__ import annotations

import time
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from vnetbench.analysis.runrecord import TIMING_PARTS, Links, RunRecord, new_record
from vnetbench.deploy.lifecycle import Prepared
from vnetbench.engines.allocation import BlockClaim
from vnetbench.engines.stack import Stack
from vnetbench.model.addressing import AddressPlan, plan_addresses
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.scenarios import Scenario


def start_record(directory: Path, run_id: str, plan: AddressPlan, topology: Topology,
                 overlay: Overlay, scenarios: list[Scenario]) -> RunRecord:
    record = new_record(
        "run", [overlay],
        run_id=run_id,
        scenarios=[s.name for s in scenarios],
        address_block=str(plan.block),
        networks=network_record(plan),
        topology=topology.model_dump(mode="json"),
        links=link_record(topology),
    )
    record.save(directory)
    return record


def up_record(run_id: str, directory: Path, prepared: Prepared,
              claim: BlockClaim) -> RunRecord:
    """run.json for a topology left running by `vnetbench up` (read by `shape`)."""
    plan = plan_addresses(prepared.topology, run_id, claim.block)
    record = start_record(directory, run_id, plan, prepared.topology, prepared.overlay, [])
    record.status = "up"
    if claim.refused:  # blocks refused before this run (by an earlier stack)
        record.address_blocks_refused = [str(b) for b in claim.refused]
    record.save(directory)
    return record


def link_record(topology: Topology) -> Links:
    """run.json's links: the declared profiles; `applied` is filled per stack from
    what the kernel reports back (shaping.apply.read_back)."""
    declared = {name: profile.model_dump(mode="json")
                for name, profile in (("site", topology.links.site),
                                      ("backbone", topology.links.backbone))
                if profile.is_shaped or not profile.offloads or profile.mtu}
    declared |= {f"agent {a.name}": a.link.model_dump(mode="json")
                 for a in topology.agents if a.link}
    return Links(declared=declared, applied={})


def network_record(plan: AddressPlan) -> dict[str, dict[str, str]]:
    return {n.key: {"subnet": str(n.subnet), "bridge": n.bridge} for n in plan.networks}


def record_moved_block(record: RunRecord, directory: Path, refused: IPv4Network,
                       claimed: IPv4Network, topology: Topology) -> None:
    """run.json says which block the engine refused and which the run moved to."""
    record.address_blocks_refused = [*(record.address_blocks_refused or []), str(refused)]
    record.address_block = str(claimed)
    record.networks = network_record(plan_addresses(topology, str(record.run_id), claimed))
    record.save(directory)


def record_stack(record: RunRecord, directory: Path, name: str, stack: Stack,
                 applied: dict[str, Any]) -> None:
    """run.json: where the stack ran, the shaping read back and a list for its checks."""
    where = stack.where_record()
    if where:
        record.hosts[name] = where
    if applied:
        record.links.applied[name] = applied
        record.links.checks.setdefault(name, [])
    record.save(directory)


class StackClock:
    """Seconds of one stack: bring-up (with shaping), restarts between passes, measurement,
    teardown (with logs); and the cells measured on it, each with its own measuring
    seconds (`cells`: a matrix's cells of one shape share a stack, runs/cells.py)."""

    def __init__(self, scenario: str, passes: list[int], between_passes: str) -> None:
        self.scenario, self.passes, self.between_passes = scenario, passes, between_passes
        self.marks = [time.monotonic()]
        self.restart_s = 0.0  # of the measurement's span: the testbed's, between passes
        self.cells: dict[str, float] = {}  # scenario/overlay/variant -> its seconds measuring

    def mark(self) -> None:
        """The end of the current part (up, then measured, then torn down)."""
        self.marks.append(time.monotonic())

    def record(self) -> dict[str, Any]:
        """The spans measured so far (a stack that failed has fewer), with the restarts
        between passes taken out of the measurement."""
        measured = [round(b - a, 2) for a, b in zip(self.marks, self.marks[1:], strict=False)]
        spans = dict(zip(("bring_up_s", "measure_s", "teardown_s"), measured, strict=False))
        if "measure_s" in spans:
            spans["measure_s"] = round(spans["measure_s"] - self.restart_s, 2)
            spans["restart_s"] = round(self.restart_s, 2)
        spans = {part: spans[part] for part in TIMING_PARTS if part in spans}
        fresh = {f"pass {p}": "containers and programs" if i == 0 else self.between_passes
                 for i, p in enumerate(self.passes)}
        cells = {"cells": dict(self.cells)} if self.cells else {}
        return {"scenario": self.scenario, "passes": self.passes, **spans, "fresh": fresh,
                **cells}
