"""Targets on any metric of any scenario (`run --slo`, `matrix --slo`), as a CI job
states them: `throughput.tcp_mbit>=500,room.p99_ms<=50`. Each is checked per cell
(scenario, overlay, variant) on the median of the cell's measured passes, the way
capacity judges a step; a cell that measured no value misses it. A cell whose
scenario does not apply to its overlay (or its build lacks a feature) was never meant
to run and is not judged."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import computed_field
from pydantic.dataclasses import dataclass

from vnetbench.core.outcome import State
from vnetbench.core.schema import (
    INTERVAL_S,
    METHOD,
    METRIC,
    OVERLAY,
    SCENARIO,
    STATE,
    VALUE,
    VARIANT,
)
from vnetbench.declared import DECLARED
from vnetbench.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

EXAMPLE = "throughput.tcp_mbit>=500,room.p99_ms<=50"
CLAUSE = re.compile(r"^\s*([A-Za-z_]+)\.([A-Za-z0-9_\-]+)\s*(>=|<=)\s*(\S+)\s*$")
NOT_RUN = (State.NOT_APPLICABLE.value, State.UNSUPPORTED.value)


@dataclass(frozen=True)
class Target:
    """One target (pydantic's dataclass: it is part of run --json's document)."""

    scenario: str
    metric: str  # the metric's name, or one series' (cpu_agent_percent)
    at_least: bool  # >= (else <=)
    bound: float
    unit: str

    @computed_field  # type: ignore[prop-decorator]
    @property
    def text(self) -> str:
        operator = ">=" if self.at_least else "<="
        return f"{self.scenario}.{self.metric}{operator}{self.bound:.10g}"

    def met(self, value: float) -> bool:
        return value >= self.bound if self.at_least else value <= self.bound


def parse_targets(text: str, option: str = "--slo") -> list[Target]:
    """'throughput.tcp_mbit>=500,room.p99_ms<=50' -> its targets; a scenario, metric or
    bound vnetbench does not have is refused naming the clause."""
    targets: list[Target] = []
    for part in (p for p in text.split(",") if p.strip()):
        target = parse_clause(part, f"{option} {text}")
        if any((t.scenario, t.metric, t.at_least) == (target.scenario, target.metric,
                                                       target.at_least) for t in targets):
            raise UserError(f"{option} {text}: {part.strip()} gives "
                            f"{target.scenario}.{target.metric} a second bound the same "
                            "way; give each once.")
        targets.append(target)
    if not targets:
        raise UserError(f"{option} is empty: give targets such as {option} {EXAMPLE}.")
    return targets


def parse_clause(part: str, source: str) -> Target:
    found = CLAUSE.match(part)
    if not found:
        raise UserError(f"{source}: '{part.strip()}' is not SCENARIO.METRIC>=VALUE or "
                        f"SCENARIO.METRIC<=VALUE. Give e.g. {EXAMPLE}.")
    scenario, name, operator, value = found.groups()
    if scenario not in DECLARED:
        raise UserError(f"{source}: there is no scenario '{scenario}' (scenarios: "
                        f"{', '.join(DECLARED)}).")
    declaration = DECLARED[scenario]
    metric = next((m for m in (name, f"{scenario}_{name}") if has_metric(scenario, m)), None)
    if metric is None:
        names = [m.name for m in declaration.metrics]
        raise UserError(f"{source}: {scenario} has no metric '{name}' (its metrics: "
                        f"{', '.join(names)}).")
    unit = declaration.metric(metric).unit
    number = value.removesuffix(unit) if unit else value
    try:
        bound = float(number)
    except ValueError:
        bound = math.nan
    if not math.isfinite(bound):
        raise UserError(f"{source}: '{value}' is not a number for {scenario}.{metric} (in "
                        f"{unit or 'its unit'}, e.g. {scenario}.{metric}{operator}10).")
    target = Target(scenario, metric, operator == ">=", bound, unit)
    check_decides(target, declaration.metric(metric).difference, source)
    return target


def check_decides(target: Target, signed: bool, source: str) -> None:
    """A measured figure that is not a difference is never below zero: `>= 0` (or
    below) can never be missed and `<= -1` never met, so the target would decide
    nothing (a CI gate that always passes, or always fails)."""
    if signed or (target.at_least and target.bound > 0) or (
            not target.at_least and target.bound >= 0):
        return
    never = "missed" if target.at_least else "met"
    raise UserError(f"{source}: {target.text} can never be {never}: "
                    f"{target.scenario}.{target.metric} is never below 0, so the target "
                    "decides nothing. Give a bound the figure can fall on either side of "
                    f"(e.g. {target.scenario}.{target.metric}"
                    f"{'>=' if target.at_least else '<='}10).")


def has_metric(scenario: str, name: str) -> bool:
    try:
        DECLARED[scenario].metric(name)
    except KeyError:
        return False
    return True


def check_scenarios(targets: Sequence[Target], running: Sequence[str], option: str,
                    what: str) -> None:
    """Every target names a scenario the command runs: one it does not would never be
    judged."""
    idle = sorted({t.scenario for t in targets if t.scenario not in running})
    if idle:
        raise UserError(f"{option}: {', '.join(idle)} is not among what {what} runs "
                        f"({', '.join(running) or 'none'}), so its target would never be "
                        "checked. Run it too, or drop its target.")


@dataclass(frozen=True)
class Checked:
    """One target on one cell: the median of its measured passes (None: none measured)."""

    target: Target
    overlay: str
    variant: str
    value: float | None
    passes: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def met(self) -> bool:
        return self.value is not None and self.target.met(self.value)

    def describe(self) -> str:
        said = "no measured value" if self.value is None else f"{self.value:.4g}"
        where = self.overlay + (f" ({self.variant})" if self.variant != "default" else "")
        return f"{self.target.text} on {where}: {said}"

    def line(self) -> str:
        """The terminal's line: 'met     throughput.tcp_mbit>=1 on baseline: 3.314e+04
        Mbit/s, the median of 1 pass' (a line, unlike a table's cell, is never cut
        to the 80 columns a CI log's pipe gets)."""
        verdict = "met" if self.met else "MISSED"
        unit = f" {self.target.unit}" if self.value is not None and self.target.unit else ""
        passes = f", the median of {self.passes} pass{'es' if self.passes != 1 else ''}"
        return f"{verdict:<7} {self.describe()}{unit}{passes if self.passes else ''}"


def check_targets(frame: pd.DataFrame, targets: Sequence[Target]) -> list[Checked]:
    """Each target on every cell of its scenario that was meant to run (a reference
    method's rows are its own, and not judged here)."""
    from vnetbench.analysis.results import named

    rows = named(frame)
    if METHOD in rows.columns:
        rows = rows[rows[METHOD].fillna("") == ""]
    if INTERVAL_S in rows.columns:
        rows = rows[rows[INTERVAL_S].isna()]
    checked = []
    for target in targets:
        own = rows[(rows[SCENARIO] == target.scenario) & ~rows[STATE].isin(NOT_RUN)]
        measured = own[(own[METRIC] == target.metric) & own[VALUE].notna()
                       & own[STATE].isin([s.value for s in State if s.measured])]
        for (overlay, variant), _ in own.groupby([OVERLAY, VARIANT], sort=False):
            values = measured[(measured[OVERLAY] == overlay)
                              & (measured[VARIANT] == variant)][VALUE]
            checked.append(Checked(target, str(overlay), str(variant),
                                   float(values.median()) if len(values) else None,
                                   len(values)))
    return checked


def targets_table(checked: Sequence[Checked]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([{
        "target": c.target.text, "overlay": c.overlay, "variant": c.variant,
        "median": "-" if c.value is None else f"{c.value:.4g}", "unit": c.target.unit,
        "passes": c.passes, "verdict": "met" if c.met else "MISSED"} for c in checked])


def misses_summary(missed: Sequence[Checked]) -> str:
    """One line for stderr: each missed target and the cell's median."""
    return (f"{len(missed)} target(s) missed: "
            + "; ".join(c.describe() for c in missed) + "; exit 1")
