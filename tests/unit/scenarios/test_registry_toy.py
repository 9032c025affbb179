"""docs/extending.md, proven: a toy scenario (its declaration, with settings of its
own, and its code) and a toy overlay (its adapter and its services template), the
files the guide lists, written in a temporary package, go through the registries,
the settings (a field under its name, its flat name, its `run` option), validation,
render, the catalogue and the report with no other file of vnetbench touched.

Each registration is the one line the script stands in for, made in a fresh
interpreter before anything reads the registry: vnetbench builds its settings model
from the registered declarations as it is imported, as it would with the line in
vnetbench/declared/__init__.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]

DECLARED = '''
from pydantic import Field

from vnetbench.declared.declaration import DEFAULT, EVERY, Declaration
from vnetbench.core.metrics import Better, Metric
from vnetbench.core.model import Measured, ScenarioSettings


class ToySettings(ScenarioSettings):
    prefix = "toy_"
    weight: Measured[int] = Field(1, ge=1, le=10,
                                  description="toy: how many times each agent counts.")


TOY_AGENTS = Metric("toy_agents", "agents", Better.HIGHER, "Toy: agents counted",
                    plot="toy-agents", lead=True)
DECLARATION = Declaration(
    name="toy", description="counts the topology's agents, measures nothing",
    metrics=(TOY_AGENTS, Metric("toy_switches", "switches")),
    runtime="toy_bench.scenario:Toy", settings=ToySettings, variants={EVERY: DEFAULT})
'''
SCENARIO = '''
from typing import ClassVar

from vnetbench.model.capabilities import Capability
from vnetbench.errors import UserError
from vnetbench.scenarios.base import PassResult, Scenario, ScenarioContext
from vnetbench.model.topology import Topology
from toy_bench.declared import DECLARATION, ToySettings


class Toy(Scenario):
    declaration = DECLARATION
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.JOIN})

    def check(self, topology: Topology) -> None:
        if len(topology.agents) < 2:
            raise UserError("The toy scenario counts two agents at least; set 'agents: 2'.")

    def settings(self, topology: Topology) -> dict[str, object]:
        return {"agents": len(topology.agents),
                "toy_weight": topology.settings.of(ToySettings).weight}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        topology = context.topology
        weight = topology.settings.of(ToySettings).weight
        values = {"toy_agents": len(topology.agents) * weight + pass_no,
                  "toy_switches": len(topology.switches)}
        return PassResult(DECLARATION.emitted(values), self.settings(topology))
'''

OVERLAY = '''
from pathlib import Path

from vnetbench.model.addressing import AddressPlan
from vnetbench.model.capabilities import Capability
from vnetbench.overlays.base import Overlay
from vnetbench.model.topology import Topology


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

# Run in a fresh interpreter, in the temporary package's folder: each assertion names
# what it proves; the last line is what the test reads back.
THROUGH = '''
import json
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import yaml

from vnetbench import declared as registered
from toy_bench.declared import DECLARATION, ToySettings

# the scenario's registration: its declaration in DECLARATIONS (and what the registry
# derives from that tuple as it is imported: DECLARED, the catalogue)
registered.DECLARATIONS = (*registered.DECLARATIONS, DECLARATION)
registered.DECLARED = {d.name: d for d in registered.DECLARATIONS}
registered.CATALOGUE = registered.catalogue_of(registered.DECLARATIONS)

from typer.main import get_command
from typer.testing import CliRunner

from vnetbench.model.addressing import plan_addresses
from vnetbench.model.capabilities import Capability
from vnetbench.cli import app
from vnetbench.commands.options import settings_given
from vnetbench.errors import UserError
from vnetbench.runtime.images import ImageSet
from vnetbench.core.outcome import Applicable, NotApplicable
from vnetbench.overlays import OVERLAY_NAMES, OVERLAY_TYPES, overlay_for
from vnetbench.deploy.render import render_compose
from vnetbench.report.markdown import build_report
from vnetbench.analysis.results import ResultSet
from vnetbench.scenarios import ScenarioContext, get_scenario
from vnetbench.core.schema import CellKey
from vnetbench.model.topology import MEASUREMENT_SETTINGS, parse_topology
from toy_bench.overlay import ToyOverlay

# the overlay's registration: its class in OVERLAY_TYPES
OVERLAY_TYPES["toy"] = ToyOverlay
scenario = get_scenario("toy")  # through the registry, as `vnetbench run toy`
assert (scenario.name, scenario.metrics) == ("toy", DECLARATION.metrics)

# its settings: under its name, by its flat name (files written before), as an option
toys = {"name": "toys", "switches": 2, "agents": 3, "overlay": "toy"}
names = (*OVERLAY_NAMES, "toy")
nested = parse_topology({**toys, "settings": {"toy": {"weight": 2}}}, "toys.yml",
                        overlays=names)
flat = parse_topology({**toys, "settings": {"toy_weight": 3}}, "old.yml", overlays=names)
given = settings_given({"toy_weight": 4})
option = parse_topology(toys, "toys.yml", given, names, {"toy_weight": "--toy-weight"})
options = [o for p in get_command(app).commands["run"].params for o in p.opts if "toy" in o]
refused = CliRunner().invoke(app, ["run", "--toy-weight", "0", "toy"])

topology = nested
scenario.check(topology)
try:
    scenario.check(parse_topology({"name": "one", "switches": 1, "agents": 1}, "one"))
    raise AssertionError("check let one agent through")
except UserError as error:
    assert "counts two agents at least" in str(error)
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

counted = registered.catalogue().find("toy_agents")
assert counted is not None and counted.unit == "agents" and counted.lead

results = ResultSet(Path("results"))
no_stack: Any = None  # the toy measures nothing: no engine, no stack
context = ScenarioContext(stack=no_stack, topology=topology, overlay=overlay, plan=plan,
                          raw_dir=Path("."))
for pass_no in (1, 2):
    outcome = scenario.run_pass(context, pass_no)
    results.add(CellKey("toys", "toy", "toy"), pass_no, outcome.metrics,
                scenario.settings(topology))
results.write()
report, headline = build_report(Path("results"))
print(json.dumps({
    "weights": [t.settings.of(ToySettings).weight for t in (nested, flat, option)],
    "flat": nested.settings.flat()["toy_weight"], "given": given,
    "measured": "toy_weight" in MEASUREMENT_SETTINGS, "options": options,
    "refused": [refused.exit_code, " ".join(refused.output.split())],
    "headline": headline,
    "lines": [" ".join(line.split()) for line in report.read_text().splitlines()],
    "plotted": Path("results", "toy-agents.png").exists()}))
'''


# both tests read one fresh interpreter's findings (3 s): on one pytest-xdist worker it
# runs once, not once a worker
pytestmark = pytest.mark.xdist_group("registry-toy")


@pytest.fixture(scope="module")
def through(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The toy package written, and THROUGH's findings in a fresh interpreter."""
    tmp_path = tmp_path_factory.mktemp("toy")
    package = tmp_path / "toy_bench"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "declared.py").write_text(textwrap.dedent(DECLARED))
    (package / "scenario.py").write_text(textwrap.dedent(SCENARIO))
    (package / "overlay.py").write_text(textwrap.dedent(OVERLAY))
    (package / "services.yml.j2").write_text(TEMPLATE)
    done = subprocess.run(
        [sys.executable, "-c", THROUGH], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(PROJECT))),
             "DOCKER_HOST": "unix:///nonexistent", "MPLBACKEND": "Agg", "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_a_toy_scenario_and_overlay_go_through_validation_render_catalogue_report(
        through: dict[str, object]) -> None:
    lines = through["lines"]
    assert isinstance(lines, list)
    assert "Toy: agents counted" in str(through["headline"])  # its lead figure
    # 3 agents counted twice (weight 2), plus the pass's number: 7 and 8
    assert "| toy | Toy: agents counted | 7.5 agents ±9 % |" in lines
    assert "| toy | toy | default | toy_agents | agents | 2 | 9.4 % | 7 to 8 agents |" in lines
    assert "### toy" in lines  # its own table, its metrics in their declared units
    assert "| toy | toy | default | toy_switches | switches | 2 | 0.0 % | 2 switches |" in lines
    assert "![toy-agents](toy-agents.png)" in lines  # its declared plot, drawn
    assert through["plotted"] is True


def test_the_toy_scenario_s_settings_are_a_field_a_flat_name_and_an_option(
        through: dict[str, object]) -> None:
    """Nested in a topology, by the flat name older files hold, as `run`'s option:
    each reaches the scenario; a wrong value is refused naming the option."""
    assert through["weights"] == [2, 3, 4]
    assert (through["flat"], through["given"]) == (2, {"toy_weight": 4})
    assert through["measured"] is True  # a setting the measurement reads, not the stack
    assert through["options"] == ["--toy-weight"]
    refused = through["refused"]
    assert isinstance(refused, list)
    status, said = refused
    assert status == 2 and "--toy-weight (settings.toy_weight)" in said
    assert "greater than or equal to 1" in said and "Traceback" not in said
