"""The topology's `engine:` knows no engine: the registry (vnetbench.engines) passes the
names it accepts, as vnetbench.overlays does for `overlay:`."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.commands.common import read_topology
from vnetbench.engines import ENGINE_NAMES, ENGINES, engine_for, every_engine, recorded_engine
from vnetbench.engines.compose import ComposeEngine
from vnetbench.errors import UserError
from vnetbench.model.topology import parse_topology

TOPOLOGY = {"name": "t", "switches": 2, "agents": 2}


def test_the_registry_s_names_are_what_a_topology_may_name() -> None:
    assert ENGINE_NAMES == tuple(ENGINES) == ("compose", "swarm")
    for name in ENGINE_NAMES:
        topology = parse_topology({**TOPOLOGY, "engine": name}, "t.yml", engines=ENGINE_NAMES)
        assert topology.engine == name


def test_a_name_the_registry_does_not_pass_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"unknown engine 'kubernetes' \(known: compose, swarm\)"):
        parse_topology({**TOPOLOGY, "engine": "kubernetes"}, "t.yml", engines=ENGINE_NAMES)


def test_the_model_alone_accepts_any_name_and_the_registry_refuses_it_before_a_start() -> None:
    """A topology validated without the names (a recorded one) still meets the registry
    before any engine is asked."""
    topology = parse_topology({**TOPOLOGY, "engine": "kubernetes"}, "t.yml")
    assert topology.engine == "kubernetes"
    with pytest.raises(UserError, match="names the engine 'kubernetes'"):
        engine_for(topology)


def test_a_topology_file_s_engine_is_checked_by_the_command(tmp_path: Path) -> None:
    path = tmp_path / "t.yml"
    path.write_text("name: t\nswitches: 2\nagents: 2\nengine: nomad\n")
    with pytest.raises(UserError, match="unknown engine 'nomad'"):
        read_topology(path)


def test_every_engine_and_the_recorded_one_come_from_the_registry(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No swarm known: this machine's engine alone; a run with no swarm in its record is
    on this machine's engine."""
    monkeypatch.setattr(ENGINES["swarm"], "known", classmethod(lambda cls, record: []))
    assert [type(e) for e in every_engine()] == [ComposeEngine]
    assert isinstance(recorded_engine({}), ComposeEngine)
