"""The scenarios. Each declares itself in vnetbench/declared/<name>.py (its
settings, metrics, matrix variants and help line: what the topology, results,
reports and the CLI read) and measures in <name>.py here, or in the package <name>/
with what only it uses (room/). The interface (base.py)
and the registry (`SCENARIOS`, `get_scenario`, `scenario_playing`: registry.py) are
loaded on first use of their names here."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vnetbench.scenarios.base import PassResult, Scenario, ScenarioContext
    from vnetbench.scenarios.registry import SCENARIOS, get_scenario, scenario_playing

HOMES = {"SCENARIOS": "vnetbench.scenarios.registry",
         "get_scenario": "vnetbench.scenarios.registry",
         "scenario_playing": "vnetbench.scenarios.registry",
         "PassResult": "vnetbench.scenarios.base", "Scenario": "vnetbench.scenarios.base",
         "ScenarioContext": "vnetbench.scenarios.base"}


def __getattr__(name: str) -> Any:
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = ["SCENARIOS", "PassResult", "Scenario", "ScenarioContext", "get_scenario",
           "scenario_playing"]
