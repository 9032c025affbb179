"""The room's counters read around a pass: where each node is read, and the pass's
counters.json and notes (recorded outputs, no engine)."""

from __future__ import annotations

import json
from ipaddress import IPv4Network
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from vnetbench.engines.base import EngineError, ToolOutput
from vnetbench.measure.room import RoomFigures
from vnetbench.scenarios.room import snapshots
from vnetbench.scenarios.room.snapshots import RoomNodes, attributed, take, targets
from vnetbench.shaping.apply import Member
from vnetbench.shaping.namespaces import Placed

DATA = Path(__file__).parents[3] / "data" / "counters"
NODES = RoomNodes(["agent1", "agent2"], "server", "p-room-1-server")


class Stack:
    """Each container's exec answered from `outputs` (`phase` picks before/after)."""

    def __init__(self) -> None:
        self.phase = "before"
        self.engine = self
        self.run_id = "p"

    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        outputs = {"p-agent1-shaper": "machine", "p-server": "server",
                   "p-router-switch1-shaper": "machine"}
        if container not in outputs:
            raise EngineError(f"No such container: {container}")
        return ToolOutput(0, (DATA / f"{outputs[container]}-{self.phase}.txt").read_text(), "")

    def containers(self, filters: object) -> list[object]:
        return []  # no host shaper: every node read by an exec in its namespace

    def cpu_by_container(self, names: set[str]) -> dict[str, float]:
        return {"p-server": 1.0, "p-room-1-server": 0.5 if self.phase == "before" else 2.5}


def context(tmp_path: Path) -> Any:
    def watched(container: str, node: str, role: str) -> Any:
        return SimpleNamespace(member=SimpleNamespace(container=container, node=node, role=role))

    shaping = SimpleNamespace(watched={
        "p-agent1-shaper": watched("p-agent1", "agent1", "agent"),
        "p-router-switch1-shaper": watched("p-router-switch1", "switch1", "switch")})
    plan = SimpleNamespace(backbone=SimpleNamespace(subnet=IPv4Network("10.160.0.0/24")),
                           sites={"switch1": SimpleNamespace(subnet=IPv4Network("10.160.16.0/20"))})
    return SimpleNamespace(stack=Stack(), shaping=shaping, plan=plan, raw_dir=tmp_path,
                           container=lambda agent: f"p-{agent}")


def test_each_node_read_in_its_shaper_else_its_own_container(tmp_path: Path) -> None:
    where, roles = targets(context(tmp_path), NODES)
    assert where == {"agent1": "p-agent1-shaper", "agent2": "p-agent2", "server": "p-server",
                     "switch1": "p-router-switch1-shaper"}
    assert roles == {"agent1": "machine", "agent2": "machine", "server": "server",
                     "switch1": "switch"}


def test_the_pass_keeps_its_counters_and_says_where_the_time_went(tmp_path: Path) -> None:
    room_context = context(tmp_path)
    before = take(room_context, NODES, "before")
    room_context.stack.phase = "after"
    after = take(room_context, NODES, "after")
    room = RoomFigures(2, 1000, 0, dict.fromkeys(("connect", "timeout"), 0),
                       ((2000, 980), (250_000, 20)), (1.0, 1.0), 4.0, 0.0)
    notes = attributed(room_context, NODES, before, after, 4.0, 1, room, {}, 10.0, 40.0)
    kept = json.loads((tmp_path / "room-pass1-counters.json").read_text())
    assert kept["nginx_cpu_percent"] == 50.0  # 2 s over a load of 4 s
    assert {(link["node"], link["link"], link["loss_drops"]) for link in kept["links"]} == {
        ("agent1", "site switch1", 67), ("switch1", "site switch1", 67)}
    assert kept["unread"] == {"agent2": "p-agent2: No such container: p-agent2"}
    assert kept["attribution"] == notes
    [tail] = notes  # nothing failed: one sentence
    assert tail.startswith("Where the time went (p99 250.0 ms): the shapers of link site "
                           "switch1 dropped 148 packets (loss rule 134, tbf queue full 14;")
    assert "1 of 1 machines retransmitted 25 segments, 4 by timeout" in tail
    assert "the server's accept queue overflowed 3 times" in tail
    assert "server CPU 0.60 cores" in tail  # its agent's 10 % and nginx's 50 %


def test_a_node_is_read_from_its_host_only_where_a_host_shaper_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # agent1 shaped from host h1 (a shaper there), agent2 running on h2 (none there),
    # the server gone; a node named by its own shaper is read through its member
    running = [Member("p-agent1", "agent", "agent1", (), host="h1", pid=11),
               Member("p-agent2", "agent", "agent2", (), host="h2", pid=22),
               Member("p-router-switch1", "router", "switch1", (), host="h1", pid=33)]
    watched = {"switch1": SimpleNamespace(name="p-router-switch1-shaper",
                                          member=running[2])}
    monkeypatch.setattr(snapshots, "members", lambda stack: running)
    monkeypatch.setattr(snapshots, "host_shapers", lambda stack: {"h1": "p-host1-shaper"})
    context = SimpleNamespace(stack=object(), shaping=SimpleNamespace(watched=watched))
    where = {"agent1": "p-agent1", "agent2": "p-agent2", "server": "p-server",
             "switch1": "p-router-switch1-shaper"}
    assert snapshots.from_host(context, where) == {  # type: ignore[arg-type]
        "agent1": Placed("p-agent1", "h1", 11), "switch1": Placed("p-router-switch1", "h1", 33)}
    # no host shaper anywhere, or no shaping at all: every node is read by an exec
    monkeypatch.setattr(snapshots, "host_shapers", lambda stack: {})
    assert snapshots.from_host(context, where) == {}  # type: ignore[arg-type]
    monkeypatch.setattr(snapshots, "host_shapers", lambda stack: {"h1": "p-host1-shaper"})
    unshaped = SimpleNamespace(stack=object(), shaping=None)
    assert snapshots.from_host(unshaped, where) == {}  # type: ignore[arg-type]
