"""Shaping reads the engine's records through the interface's own values: the members
to shape from ContainerRecords, the shapers' states from them, restarts from
EngineEvents (no client's object, no engine's JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from vnetbench.engines.base import NETWORK_NAME, ContainerRecord, EngineEvent, Listed, RunRef
from vnetbench.model.topology import parse_topology
from vnetbench.runtime import labels
from vnetbench.shaping.apply import (
    Attachment,
    Member,
    ShaperState,
    ShapingKeeper,
    clearing_the_rest,
    members,
    shaper_states,
)

STARTED = datetime(2026, 12, 1, 12, 12, 1, tzinfo=UTC)


def record(name: str, role: str, addresses: dict[str, str], running: bool = True
           ) -> ContainerRecord:
    return ContainerRecord(f"id-{name}", name, {labels.ROLE: role, labels.NODE: name[2:]},
                           addresses, running, False, 0 if running else 137, STARTED,
                           None if running else STARTED)


class Engine:
    """What members() and shaper_states() ask of an engine, with records of its own."""

    def __init__(self, records: list[ContainerRecord]) -> None:
        self.records = {r.name: r for r in records}
        self.inspected: list[str] = []

    def network_labels(self, filters: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
        return [{NETWORK_NAME: "p_site1", labels.SEGMENT: "site"},
                {NETWORK_NAME: "p_backbone", labels.SEGMENT: "backbone"}]

    def containers(self, filters: Sequence[tuple[str, str]]) -> list[Listed]:
        return [Listed(r.id, r.name, "running" if r.running else "exited", None,
                       dict(r.labels)) for r in self.records.values()]

    def inspect(self, containers: Sequence[Listed]) -> list[ContainerRecord]:
        self.inspected += [c.name for c in containers]
        return [self.records[c.name] for c in containers]


def run_on(records: list[ContainerRecord]) -> Any:
    return RunRef(Engine(records), "p")  # type: ignore[arg-type]


def test_members_are_attached_on_the_run_s_segments_only() -> None:
    run = run_on([record("p-agent1", "agent", {"p_site1": "10.1.0.2", "bridge": "172.17.0.2"}),
                  record("p-router-switch1", "switch", {"p_site1": "10.1.0.1",
                                                         "p_backbone": "10.0.0.1"}),
                  record("p-fabric", "fabric", {"p_site1": "10.1.0.9"})])
    found = {m.container: m for m in members(run)}
    assert found["p-agent1"] == Member("p-agent1", "agent", "agent1",
                                       (Attachment("10.1.0.2", "site", "p_site1"),),
                                       "", "id-p-agent1", STARTED, None)
    assert [a.segment for a in found["p-router-switch1"].attachments] == ["site", "backbone"]
    assert "p-fabric" not in found and "p-fabric" not in run.engine.inspected


def test_a_shaper_s_state_is_its_record_s() -> None:
    run = run_on([record("p-agent1-shaper", "shaper", {}, running=False)])
    assert shaper_states(run) == {"p-agent1-shaper": ShaperState(
        "p-agent1-shaper", "id-p-agent1-shaper", False, False, 137, STARTED, STARTED)}


def test_each_start_of_a_shaped_container_is_shaped_again_and_helpers_are_not() -> None:
    topology = parse_topology({"name": "t", "overlay": "baseline", "switches": 1, "agents": 1},
                              "test")
    keeper = ShapingKeeper(run_on([]), topology)
    keeper.starts = iter([  # type: ignore[assignment]
        EngineEvent(1.0, "container", "start", "", "p-agent1", {labels.ROLE: "agent"}),
        EngineEvent(2.0, "container", "start", "", "p-agent1-shaper", {labels.ROLE: "shaper"}),
        EngineEvent(3.0, "container", "start", "", "p-fabric", {labels.ROLE: "fabric"}),
        EngineEvent(4.0, "container", "start", "", "p-router-switch1", {labels.ROLE: "switch"})])
    shaped: list[str] = []
    keeper._reapply = shaped.append  # type: ignore[method-assign]
    keeper._watch()
    assert shaped == ["p-agent1", "p-router-switch1"]


def test_a_restarted_switch_shaped_again_settles_at_once() -> None:
    """A restart is named by its service (router-switch2), its re-shaping by the
    container's node label (switch2): the keeper's settle took them for two nodes, and
    every fault's restart on a shaped stack waited out its whole bound (30 s; found on
    the swarm's failover). Both are the topology's switch2."""
    import time

    topology = parse_topology({"name": "t", "overlay": "baseline", "switches": 2, "agents": 2,
                               "links": {"backbone": {"rate": "500mbit"}}}, "test")
    keeper = ShapingKeeper(run_on([]), topology)
    keeper.watch_again = lambda: None  # type: ignore[method-assign]
    keeper.reapplied = ["switch2", "agent1"]
    began = time.monotonic()
    keeper.settle({"router-switch2", "agent1"}, timeout_s=5.0)
    keeper.settle({"hub-switch2"}, timeout_s=5.0)
    assert time.monotonic() - began < 1.0
    keeper.settle({"router-switch1"}, timeout_s=0.5)  # not shaped again: the bound
    assert time.monotonic() - began >= 0.5


def test_shaped_anew_every_other_interface_is_cleared() -> None:
    """A router whose backbone is plain now (its delay line's shaper retired): its
    backbone interface is cleared too, or its NFQUEUE rule would drop everything."""
    router = Member("p-router-switch1", "switch", "switch1",
                    (Attachment("10.1.0.1", "site", "p_site1"),
                     Attachment("10.0.0.1", "backbone", "p_backbone")))
    site = {"address": "10.1.0.1", "commands": [["tc", "qdisc", "add"]], "delay_line": None}
    assert clearing_the_rest(router, {"interfaces": [site]}) == {"interfaces": [
        site, {"address": "10.0.0.1", "commands": [], "delay_line": None}]}
    both = {"interfaces": [site, {**site, "address": "10.0.0.1"}]}
    assert clearing_the_rest(router, both) == both
