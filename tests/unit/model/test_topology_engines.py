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
        assert topology.engine.name == name


def test_a_name_the_registry_does_not_pass_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UserError, match=r"unknown engine 'kubernetes' \(known: compose, swarm\)"):
        parse_topology({**TOPOLOGY, "engine": "kubernetes"}, "t.yml", engines=ENGINE_NAMES)


def test_the_model_alone_accepts_any_name_and_the_registry_refuses_it_before_a_start() -> None:
    """A topology validated without the names (a recorded one) still meets the registry
    before any engine is asked."""
    topology = parse_topology({**TOPOLOGY, "engine": "kubernetes"}, "t.yml")
    assert topology.engine.name == "kubernetes"
    with pytest.raises(UserError, match="names the engine 'kubernetes'"):
        engine_for(topology)


def test_an_engine_s_options_are_its_section_and_older_files_still_read() -> None:
    """Issue #59: a swarm's manager and hosts are the engine's options, under `engine:`;
    a file from before the section, with them at the top, reads the same; both at once
    is refused, naming them."""
    swarm = {"manager": "test", "hosts": {"switch1": "node-a"}}
    section = parse_topology({**TOPOLOGY, "engine": {"name": "swarm", **swarm}}, "t.yml",
                             engines=ENGINE_NAMES)
    older = parse_topology({**TOPOLOGY, "engine": "swarm", **swarm}, "t.yml",
                           engines=ENGINE_NAMES)
    assert section.engine == older.engine
    assert (section.engine.name, section.engine.manager, section.engine.hosts) == (
        "swarm", "test", {"switch1": "node-a"})
    assert "hosts" not in section.model_dump() and "manager" not in section.model_dump()
    assert parse_topology(TOPOLOGY, "t.yml").engine.name == "compose"  # the default
    with pytest.raises(UserError, match="manager given both at the top and under engine"):
        parse_topology({**TOPOLOGY, "manager": "test", "engine": {"name": "swarm",
                                                                   "manager": "test"}}, "t.yml")
    with pytest.raises(UserError, match=r"engine\.hosts places switch9"):
        parse_topology({**TOPOLOGY, "engine": {"name": "swarm", "hosts": {"switch9": "a"}}},
                       "t.yml")


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
