"""The scenario registry: name -> scenario, each made from its declaration (the
code that measures named there, loaded here)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from vnetbench.declared import DECLARATIONS, playing
from vnetbench.declared.declaration import Declaration, Role
from vnetbench.errors import UserError
from vnetbench.scenarios.base import Scenario


def load_scenario(declaration: Declaration) -> Scenario:
    """The scenario whose code its declaration names ("module:Class")."""
    module, _, name = declaration.runtime.partition(":")
    kind = getattr(importlib.import_module(module), name)
    if not (isinstance(kind, type) and issubclass(kind, Scenario)):
        raise TypeError(f"{declaration.runtime} is not a Scenario")
    scenario = kind()
    if scenario.declaration is not declaration:
        raise TypeError(f"{declaration.runtime} declares itself otherwise than "
                        f"scenario {declaration.name}'s declaration")
    return scenario


def scenarios_of(declarations: Iterable[Declaration]) -> dict[str, Scenario]:
    return {d.name: load_scenario(d) for d in declarations}


SCENARIOS: dict[str, Scenario] = scenarios_of(DECLARATIONS)


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UserError(
            f"There is no scenario called '{name}'. Available: {', '.join(sorted(SCENARIOS))}."
        ) from None


def scenario_playing(role: Role) -> Scenario:
    """The scenario that plays a role (vnetbench/declared/declaration.py's ROLES)."""
    return SCENARIOS[playing(role).name]
