"""A single run's run.json as its writers leave it: the keys the results docs list,
the stack's place and shaping under its name, a refused block, the checks the
shaping keeper appends to, and how the run ended."""

import json
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest

from vnetbench.analysis.runrecord import RUN_FILE, read_record, recorded
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import load_topology
from vnetbench.overlays.baseline import Baseline
from vnetbench.runs.recording import StackClock, record_moved_block, record_stack, start_record
from vnetbench.runtime.paths import TOPOLOGIES
from vnetbench.scenarios import get_scenario


class PlacedStack:
    """A stack that ran on a swarm's nodes (all recording asks of it)."""

    def where_record(self) -> dict[str, Any]:
        return {"manager": "node1", "nodes": ["node1", "node2"]}


def test_a_single_runs_record_as_its_writers_leave_it(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vnetbench.analysis.metadata.host_facts", lambda image: {
        "machine": {"cores": 2}, "engine": {}, "images": {"tools": {"name": image}}})
    topology = load_topology(TOPOLOGIES / "two-sites.yml").model_copy(
        update={"overlay": "baseline"})
    first, moved = IPv4Network("10.77.0.0/16"), IPv4Network("10.78.0.0/16")
    record = start_record(tmp_path, "r1", plan_addresses(topology, "r1", first), topology,
                          Baseline(), [get_scenario("throughput")])
    with recorded(tmp_path, record):
        record_moved_block(record, tmp_path, first, moved, topology)
        record_stack(record, tmp_path, "throughput", PlacedStack(),  # type: ignore[arg-type]
                     {"agent1": {"qdisc": "netem"}})
        record.links.checks["throughput"].append({"pass 1": "as planned"})  # the keeper's
        record.timings.append(StackClock("throughput", [1], "nothing").record())
    written = json.loads((tmp_path / RUN_FILE).read_text())
    assert list(written) == [
        "format_version", "kind", "started", "ended", "status", "machine", "engine",
        "images", "overlays", "run_id", "scenarios", "address_block", "networks",
        "topology", "links", "address_blocks_refused", "hosts", "timings"]
    assert written["status"] == "completed" and written["ended"]
    assert written["address_block"] == "10.78.0.0/16"
    assert written["address_blocks_refused"] == ["10.77.0.0/16"]
    assert all(n["subnet"].startswith("10.78.") for n in written["networks"].values())
    assert written["hosts"] == {"throughput": PlacedStack().where_record()}
    assert written["links"]["applied"] == {"throughput": {"agent1": {"qdisc": "netem"}}}
    assert written["links"]["checks"] == {"throughput": [{"pass 1": "as planned"}]}
    assert read_record(tmp_path).recorded_topology(tmp_path) == topology
