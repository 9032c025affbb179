"""`vnetbench swarm down` removes what carries the test swarm's label and nothing else:
a user's volume named like the test swarm's objects stays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from vnetbench.engines.swarm import testbed
from vnetbench.engines.swarm.cluster import TEST_SWARM_LABEL


@dataclass
class Thing:
    name: str
    labels: dict[str, str] = field(default_factory=dict)


class Kind:
    """One kind of engine object (containers, volumes, networks) with label filters."""

    def __init__(self, things: list[Thing]) -> None:
        self.things = things
        self.removed: list[str] = []

    def list(self, filters: Any = (), all: bool = False) -> list[Thing]:
        wanted = [value for key, value in filters if key == "label"]
        return [t for t in self.things if all_labels_match(t, wanted)]

    def remove(self, things: Any, **options: Any) -> None:
        names = [t if isinstance(t, str) else t.name
                 for t in (things if isinstance(things, list) else [things])]
        self.removed += names
        self.things = [t for t in self.things if t.name not in names]


def all_labels_match(thing: Thing, wanted: list[str]) -> bool:
    return all(w.split("=")[0] in thing.labels and
               ("=" not in w or thing.labels[w.split("=")[0]] == w.split("=", 1)[1])
               for w in wanted)


class Engine:
    def __init__(self) -> None:
        node = testbed.test_swarm_labels("manager")
        self.container = Kind([Thing("vnetbench-swarm-node-a", node)])
        self.volume = Kind([Thing("vnetbench-swarm-node-a", testbed.test_swarm_labels("volume")),
                            Thing("vnetbench-swarm-userdata"),  # the user's
                            Thing("vnetbench-swarm-node-b")])  # unlabelled: not proven ours
        self.network = Kind([Thing("vnetbench-swarm", testbed.test_swarm_labels("network"))])


def test_swarm_down_removes_by_label_only(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Any) -> None:
    engine = Engine()
    said: list[str] = []
    monkeypatch.setattr(testbed, "quick", engine)
    monkeypatch.setattr(testbed, "SOCKETS", tmp_path / "sockets")
    monkeypatch.setattr(testbed, "note", lambda message, style=None: said.append(message))
    assert testbed.swarm_down() == 1
    assert engine.volume.removed == ["vnetbench-swarm-node-a"]
    assert {t.name for t in engine.volume.things} == {"vnetbench-swarm-userdata",
                                                      "vnetbench-swarm-node-b"}
    assert engine.container.removed == ["vnetbench-swarm-node-a"]
    assert engine.network.removed == ["vnetbench-swarm"]
    assert len(said) == 1 and "vnetbench-swarm-node-b" in said[0]  # said, kept
    assert "userdata" not in said[0]


def test_every_object_the_test_swarm_creates_carries_its_label() -> None:
    for kind in ("manager", "worker", "volume", "network"):
        assert TEST_SWARM_LABEL in testbed.test_swarm_labels(kind)
