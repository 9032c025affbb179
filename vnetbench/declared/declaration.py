"""What a scenario declares, apart from the code that measures: its name and help
line, the metrics it emits (with their units), its matrix variants, its figures
and where its code lives. Light: the catalogue, the reports, `run`'s help and the
matrix's plan read declarations without loading anything that measures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vnetbench.core.metrics import Metric
from vnetbench.core.model import ScenarioSettings
from vnetbench.core.schema import MACHINES

Values = dict[str, float | None]  # a pass's values by metric name, before their units
Variants = Mapping[str, Mapping[str, Any]]  # variant name -> the settings it overrides
EVERY = "*"  # the variants of every overlay that has no row of its own
DEFAULT: Variants = {"default": {}}


def sizes(*machines: int) -> Variants:
    """A join's or a config change's variants by size: n20 runs 20 machines."""
    return {f"n{n}": {MACHINES: n} for n in machines}


@dataclass(frozen=True)
class AgainstSetting:
    """A metric's passes against a setting that varies between cells, a line per
    overlay through its means (join time against the machines joining at once)."""

    name: str  # the figure's name: report.md's NAME.png, report.html's element
    metric: Metric
    setting: str  # a setting's name, its result column `set_<setting>`
    axis: str  # the setting's axis label
    title: str


@dataclass(frozen=True)
class PingCdf:
    """Each pass's ping round trips, read back from its raw ping output
    (`ping-passN.txt` under its run directory), as a CDF."""

    name: str
    title: str


@dataclass(frozen=True)
class PercentileCdf:
    """The percentiles a pass's rows hold of one distribution (the room's request
    latency) as a CDF, the mean over passes, a line per overlay and variant."""

    name: str
    title: str


FigureSpec = AgainstSetting | PingCdf | PercentileCdf


@dataclass(frozen=True)
class Declaration:
    name: str
    description: str  # its line in `run`'s help
    metrics: tuple[Metric, ...]  # every metric its passes emit, in headline order
    runtime: str  # "module:Class", the code that measures (loaded only to run it)
    # its own settings, under its name in a topology's settings (none: only the shared)
    settings: type[ScenarioSettings] | None = None
    # the matrix's cells: overlay (or EVERY) -> its variants; empty: not in the matrix
    # (it runs by name, or in a method)
    variants: Mapping[str, Variants] = field(default_factory=dict)
    # its figures, drawn by both reports (report.md's PNGs, report.html's Plotly)
    figures: tuple[FigureSpec, ...] = ()

    def metric(self, name: str) -> Metric:
        """One of its declared metrics, by its name or one series' display name
        (`cpu_agent_percent` is `cpu_percent` of role `agent`)."""
        found = next((m for m in self.metrics if m.name == name), None) or next(
            (m for m in self.metrics if m.matches(name)), None)
        if found is None:
            raise KeyError(f"{self.name} declares no metric {name!r}")
        return found

    def series(self, metric: str, **dimensions: object) -> str:
        """The name a pass emits for one series of a declared metric (`outage_ms`,
        fault="switch-restart"); its rows carry the dimensions as columns."""
        declared = self.metric(metric)
        if set(dimensions) != set(declared.dimensions):
            raise KeyError(f"{self.name}'s {metric} has dimensions "
                           f"{', '.join(declared.dimensions) or 'none'}, not "
                           f"{', '.join(dimensions) or 'none'}")
        return declared.series_name({d: str(v) for d, v in dimensions.items()})

    def unit(self, name: str) -> str:
        """The unit of a declared metric (emitters read it here, never retype it)."""
        return self.metric(name).unit

    def emitted(self, values: Mapping[str, float | None]
                ) -> dict[str, tuple[float | None, str]]:
        """A pass's values by metric name, each with its declared unit (a name it does
        not declare raises KeyError: every emitted metric is in the catalogue)."""
        return {name: (value, self.unit(name)) for name, value in values.items()}
