"""docs/extending.md's toy: a scenario (its declaration, with settings, matrix variants
and a figure of its own, and its code) and an overlay (its adapter and its services
template), written as a package of their own outside vnetbench, and the lines that
register them, which a fresh interpreter runs before anything reads the registries.

The unit test (tests/unit/scenarios/test_registry_toy.py) and the integration test
(tests/integration/test_toy_matrix.py) use it; `GUIDE` is what docs/extending.md's
tables list, and a unit test holds the two equal."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
PACKAGE = "toy_bench"

DECLARED = '''
from pydantic import Field

from vnetbench.declared.declaration import EVERY, AgainstSetting, Declaration
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
    runtime="toy_bench.scenario:Toy", settings=ToySettings,
    # every overlay's cells: each weight a cell (a variant overrides a setting by its
    # flat name)
    variants={EVERY: {"light": {"toy_weight": 1}, "heavy": {"toy_weight": 3}}},
    figures=(AgainstSetting("toy-by-weight", TOY_AGENTS, "toy_weight", "weight",
                            "Toy: agents counted against the weight"),))
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
    # an overlay without agent pools gets rows saying so (none in the matrix)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.AGENT_POOLS})
    shares_stack = True  # it leaves the stack as it found it: its cells share one

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
    capabilities = frozenset({Capability.AGENT_POOLS})  # a pool shares its container
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

# docs/extending.md's tables, section -> each file it lists -> the toy's file that
# stands for it (in PACKAGE), or the registry a registration line adds to (REGISTER)
GUIDE: dict[str, dict[str, str]] = {
    "A new overlay": {
        "vnetbench/overlays/<name>.py": "overlay.py",
        "templates/overlays/<name>/services.yml.j2": "services.yml.j2",
        "vnetbench/overlays/__init__.py": "OVERLAY_TYPES",
    },
    "A new scenario": {
        "vnetbench/declared/<name>.py": "declared.py",
        "vnetbench/scenarios/<name>.py": "scenario.py",
        "vnetbench/declared/__init__.py": "DECLARATIONS",
    },
}
FILES = {"declared.py": DECLARED, "scenario.py": SCENARIO, "overlay.py": OVERLAY,
         "services.yml.j2": TEMPLATE}

# The two registration lines, each made where the registry is built (what the registry
# derives from it at import, as it would with the line in its file): run first, before
# anything reads a registry (vnetbench builds its settings model from the registered
# declarations as it is imported, the CLI its options).
REGISTER = '''
from vnetbench import declared as registered
from toy_bench.declared import DECLARATION

registered.DECLARATIONS = (*registered.DECLARATIONS, DECLARATION)
registered.DECLARED = {d.name: d for d in registered.DECLARATIONS}
registered.CATALOGUE = registered.catalogue_of(registered.DECLARATIONS)

from vnetbench import overlays as overlay_registry
from toy_bench.overlay import ToyOverlay

overlay_registry.OVERLAY_TYPES["toy"] = ToyOverlay
overlay_registry.OVERLAY_NAMES = tuple(overlay_registry.OVERLAY_TYPES)
'''


def write_toy(folder: Path) -> list[Path]:
    """The toy's package in folder (importable with folder on the path): its files."""
    package = folder / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    written = [package / "__init__.py"]
    for name, text in FILES.items():
        (package / name).write_text(textwrap.dedent(text) if name.endswith(".py") else text)
        written.append(package / name)
    return written


def toy_env(folder: Path) -> dict[str, str]:
    """The environment of a fresh interpreter that imports the toy from folder and
    vnetbench from this checkout."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join((str(folder), str(PROJECT))),
            "MPLBACKEND": "Agg", "COLUMNS": "200"}
