"""The scenarios. Each declares itself in declared/<name>.py (its metrics, matrix
variants and help line: what results, reports and the CLI read) and measures in
<name>.py. The interface (base.py) and the registry (`SCENARIOS`, `get_scenario`:
registry.py) are loaded on first use of their names here, so that reading a
declaration loads no code that measures."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vnetbench.scenarios.base import PassResult, Scenario, ScenarioContext
    from vnetbench.scenarios.registry import SCENARIOS, get_scenario

HOMES = {"SCENARIOS": "vnetbench.scenarios.registry",
         "get_scenario": "vnetbench.scenarios.registry",
         "PassResult": "vnetbench.scenarios.base", "Scenario": "vnetbench.scenarios.base",
         "ScenarioContext": "vnetbench.scenarios.base"}


def __getattr__(name: str) -> Any:
    home = HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = ["SCENARIOS", "PassResult", "Scenario", "ScenarioContext", "get_scenario"]
