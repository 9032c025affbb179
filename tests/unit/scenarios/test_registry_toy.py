"""docs/extending.md, proven: a toy scenario (its declaration and its code) and a toy
overlay (its adapter and its services template), the files the guide lists, written
in a temporary package, go through the registries, validation, render, the catalogue
and the report with no other file of vnetbench touched; each registration is the
one line the test stands in for."""

from __future__ import annotations

import importlib
import textwrap
from collections.abc import Iterator
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
import yaml

from vnetbench import declared as registered
from vnetbench.addressing import plan_addresses
from vnetbench.capabilities import Capability
from vnetbench.declared import DECLARATIONS, catalogue, catalogue_of
from vnetbench.declared.declaration import Declaration
from vnetbench.errors import UserError
from vnetbench.images import ImageSet
from vnetbench.outcome import Applicable, NotApplicable
from vnetbench.overlays import OVERLAY_NAMES, OVERLAY_TYPES, overlay_for
from vnetbench.render import render_compose
from vnetbench.report.markdown import build_report
from vnetbench.results import ResultSet
from vnetbench.scenarios import ScenarioContext
from vnetbench.scenarios.registry import scenarios_of
from vnetbench.schema import CellKey
from vnetbench.topology import parse_topology

DECLARED = '''
from vnetbench.metrics import Better, Metric
from vnetbench.declared.declaration import DEFAULT, EVERY, Declaration

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

OVERLAY = '''
from pathlib import Path

from vnetbench.addressing import AddressPlan
from vnetbench.capabilities import Capability
from vnetbench.overlays.base import Overlay
from vnetbench.topology import Topology


class ToyOverlay(Overlay):
    name = "toy"
    summary = "agents on their sites and nothing between them"
    data_path = "none: a toy"
    capabilities = frozenset({Capability.JOIN})
    templates = Path(__file__).parent

    def target_address(self, topology: Topology, plan: AddressPlan, agent: str) -> str:
        return str(plan.agent_site[agent])
'''
TEMPLATE = """\
{%- for agent in topology.agent_containers() %}

  {{ agent.name }}:
    image: {{ images.tools }}
    container_name: {{ project }}-{{ agent.name }}
    {{ m.labels("agent", agent.name) }}
    networks:
      {{ plan.sites[agent.switch].key }}:
        ipv4_address: {{ plan.container_site[agent.name] }}
{%- endfor %}
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Declaration]:
    package = tmp_path / "toy_bench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "declared.py").write_text(textwrap.dedent(DECLARED))
    (package / "scenario.py").write_text(textwrap.dedent(SCENARIO))
    (package / "overlay.py").write_text(textwrap.dedent(OVERLAY))
    (package / "services.yml.j2").write_text(TEMPLATE)
    monkeypatch.syspath_prepend(str(tmp_path))
    # the overlay's registration: its class in OVERLAY_TYPES
    monkeypatch.setitem(OVERLAY_TYPES, "toy",
                        importlib.import_module("toy_bench.overlay").ToyOverlay)
    declaration: Declaration = importlib.import_module("toy_bench.declared").DECLARATION
    # its registration: DECLARATIONS holding it, so the catalogue does
    monkeypatch.setattr(registered, "CATALOGUE", catalogue_of((*DECLARATIONS, declaration)))
    yield declaration


def test_a_toy_scenario_and_overlay_go_through_validation_render_catalogue_report(
        toy: Declaration, tmp_path: Path) -> None:
    scenario = scenarios_of((*DECLARATIONS, toy))["toy"]
    assert (scenario.name, scenario.metrics) == ("toy", toy.metrics)

    topology = parse_topology({"name": "toys", "switches": 2, "agents": 3, "overlay": "toy"},
                              "toys.yml", overlays=(*OVERLAY_NAMES, "toy"))
    scenario.check(topology)
    with pytest.raises(UserError, match="counts two agents at least"):
        scenario.check(parse_topology({"name": "one", "switches": 1, "agents": 1}, "one"))
    assert isinstance(scenario.applicability(overlay_for(topology, "baseline")), NotApplicable)
    assert Capability.JOIN in scenario.needs_for(topology)
    overlay = overlay_for(topology)
    assert overlay.name == "toy" and scenario.applicability(overlay) == Applicable()

    stack = scenario.stack_topology(topology, overlay)
    plan = plan_addresses(stack, "toy", IPv4Network("10.170.0.0/16"))
    compose = yaml.safe_load(render_compose(stack, overlay, "run1", plan, ImageSet()))
    assert {"agent1", "agent2", "agent3"} <= set(compose["services"])
    assert sorted(compose["services"]["agent1"]) == [  # the keys of its own template
        "container_name", "image", "labels", "networks"]

    counted = catalogue().find("toy_agents")
    assert counted is not None and counted.unit == "agents" and counted.lead

    results = ResultSet(tmp_path / "results")
    no_stack: Any = None  # the toy measures nothing: no engine, no stack
    context = ScenarioContext(stack=no_stack, topology=topology, overlay=overlay, plan=plan,
                              raw_dir=tmp_path)
    for pass_no in (1, 2):
        outcome = scenario.run_pass(context, pass_no)
        results.add(CellKey("toys", "toy", "toy"), pass_no, outcome.metrics,
                    scenario.settings(topology))
    results.write()
    report, headline = build_report(tmp_path / "results")
    lines = [" ".join(line.split()) for line in report.read_text().splitlines()]
    assert "Toy: agents counted" in headline  # its lead figure in the summary
    assert "| toy | Toy: agents counted | 4.5 agents ±16 % |" in lines
    assert "### toy" in lines  # its own table, its metrics in their declared units
    assert "| toy | toy | default | toy_switches | switches | 2 | 0.0 % | 2 switches |" in lines
    assert "![toy-agents](toy-agents.png)" in lines  # its declared plot, drawn
    assert (tmp_path / "results" / "toy-agents.png").exists()
