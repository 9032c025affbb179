"""docs/extending.md, proven for a scenario: a toy scenario written in a temporary
package (its declaration and its code, the two files the guide lists) goes through
the registry, validation, render, the catalogue and the report with no other file
of vnetbench touched; its registration is the one line the test stands in for."""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Iterator
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
import yaml

from vnetbench.addressing import plan_addresses
from vnetbench.capabilities import Capability
from vnetbench.errors import UserError
from vnetbench.images import ImageSet
from vnetbench.outcome import NotApplicable
from vnetbench.overlays import overlay_for
from vnetbench.render import render_compose
from vnetbench.report.markdown import build_report
from vnetbench.results import ResultSet
from vnetbench.scenarios import ScenarioContext
from vnetbench.scenarios import declared as registered
from vnetbench.scenarios.declaration import Declaration
from vnetbench.scenarios.declared import DECLARATIONS, catalogue, catalogue_of
from vnetbench.scenarios.registry import scenarios_of
from vnetbench.topology import parse_topology

DECLARED = '''
from vnetbench.metrics import Better, Metric
from vnetbench.scenarios.declaration import DEFAULT, EVERY, Declaration

TOY_AGENTS = Metric("toy_agents", "agents", Better.HIGHER, "Toy: agents counted",
                    plot="toy-agents", lead=True)
DECLARATION = Declaration(
    name="toy", description="counts the topology's agents, measures nothing",
    metrics=(TOY_AGENTS, Metric("toy_switches", "switches")),
    runtime="toy_bench.scenario:Toy", variants={EVERY: DEFAULT})
'''
SCENARIO = '''
from typing import ClassVar

from vnetbench.capabilities import Capability
from vnetbench.errors import UserError
from vnetbench.errors import UserError
from vnetbench.scenarios.base import PassResult, Scenario, ScenarioContext
from vnetbench.topology import Topology
from toy_bench.declared import DECLARATION


class Toy(Scenario):
    declaration = DECLARATION
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.JOIN})

    def check(self, topology: Topology) -> None:
        if len(topology.agents) < 2:
            raise UserError("The toy scenario counts two agents at least; set 'agents: 2'.")

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        topology = context.topology
        values = {"toy_agents": len(topology.agents) + pass_no,
                  "toy_switches": len(topology.switches)}
        return PassResult(DECLARATION.emitted(values), {"agents": len(topology.agents)})
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Declaration]:
    package = tmp_path / "toy_bench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "declared.py").write_text(textwrap.dedent(DECLARED))
    (package / "scenario.py").write_text(textwrap.dedent(SCENARIO))
    monkeypatch.syspath_prepend(str(tmp_path))
    declaration: Declaration = importlib.import_module("toy_bench.declared").DECLARATION
    # its registration: DECLARATIONS holding it, so the catalogue does
    monkeypatch.setattr(registered, "CATALOGUE", catalogue_of((*DECLARATIONS, declaration)))
    yield declaration


def test_a_toy_scenario_runs_through_registry_validation_render_catalogue_and_report(
        toy: Declaration, tmp_path: Path) -> None:
    scenario = scenarios_of((*DECLARATIONS, toy))["toy"]
    assert (scenario.name, scenario.metrics) == ("toy", toy.metrics)

    topology = parse_topology({"name": "toys", "switches": 2, "agents": 3,
                               "overlay": "wireguard"}, "toys.yml")
    scenario.check(topology)
    with pytest.raises(UserError, match="counts two agents at least"):
        scenario.check(parse_topology({"name": "one", "switches": 1, "agents": 1}, "one"))
    assert isinstance(scenario.applicability(overlay_for(topology, "baseline")), NotApplicable)
    assert Capability.JOIN in scenario.needs_for(topology)

    overlay = overlay_for(topology)
    stack = scenario.stack_topology(topology, overlay)
    plan = plan_addresses(stack, "toy", IPv4Network("10.170.0.0/16"))
    compose = yaml.safe_load(render_compose(stack, overlay, "toy", plan, ImageSet()))
    assert {"agent1", "agent2", "agent3"} <= set(compose["services"])

    counted = catalogue().find("toy_agents")
    assert counted is not None and counted.unit == "agents" and counted.lead

    results = ResultSet("toys", tmp_path / "results")
    no_stack: Any = None  # the toy measures nothing: no engine, no stack
    context = ScenarioContext(stack=no_stack, topology=topology, overlay=overlay, plan=plan,
                              raw_dir=tmp_path)
    for pass_no in (1, 2):
        outcome = scenario.run_pass(context, pass_no)
        results.add("toy", "wireguard", pass_no, outcome.metrics, scenario.settings(topology))
    results.write()
    report, headline = build_report(tmp_path / "results")
    lines = [" ".join(line.split()) for line in report.read_text().splitlines()]
    assert "Toy: agents counted" in headline  # its lead figure in the summary
    assert "| toy | Toy: agents counted | 4.5 agents ±16 % |" in lines
    assert "### toy" in lines  # its own table, its metrics in their declared units
    assert ("| toy | wireguard | default | toy_switches | switches | 2 | 0.0 % | 2 switches |"
            in lines)
    assert "![toy-agents](toy-agents.png)" in lines  # its declared plot, drawn
    assert (tmp_path / "results" / "toy-agents.png").exists()
