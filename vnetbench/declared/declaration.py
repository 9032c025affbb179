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
    """The percentiles a pass's rows hold of one distribution (a metric with a row per
    quantile) as a CDF, the mean over passes, a line per overlay and variant, log
    axis."""

    name: str
    title: str
    metric: str  # its rows, one per quantile (the `quantile` column)
    axis: str  # the values' axis label
    share: str  # the shares' axis label
    items: str  # what the shares count, in the hover ("requests")


@dataclass(frozen=True)
class Timeline:
    """A metric's rows per interval (`interval_s`) against time, a line per pass, the
    instants faults took effect (red) and were lifted (green) marked on the same axis.
    `per_fault`: the metric's rows carry the fault (one probe per fault: a timeline per
    overlay and fault, each pass its own marks); else one timeline per overlay under
    the pass's whole schedule of faults, each event's start named."""

    name: str  # report.html's NAME-OVERLAY(-FAULT), report.md's NAME-OVERLAY-timeline.png
    metric: str  # the rows with interval_s
    start: str  # the fault in effect, seconds on the same axis (a row per fault)
    end: str  # the fault lifted
    title: str  # "{overlay}" stands for the overlay
    axis: str  # the metric's axis label
    time_axis: str
    per_fault: bool = False


@dataclass(frozen=True)
class Cumulative:
    """Per variant, the running sum of per-interval rows against time (a transfer's
    bytes moved), a line per overlay, series and pass; the first series solid, the
    others dashed. In a method's section, the method's steps."""

    name: str  # outside a method: report.html's NAME-VARIANT, report.md's -bytes.png
    series: tuple[tuple[str, str], ...]  # (metric, its label: "upload"), rows with interval_s
    title: str  # "{of}" the method (or the name), "{variant}" the step
    axis: str
    time_axis: str
    scale: float = 1.0  # each value divided by it (bytes to MiB: 2**20)
    unit: str = ""  # the scaled unit, before the label in the hover ("MiB uploaded")


FigureSpec = AgainstSetting | PingCdf | PercentileCdf | Timeline | Cumulative


def figure_metrics(spec: FigureSpec) -> tuple[str, ...]:
    """The metrics a figure reads (its scenario must declare each)."""
    match spec:
        case AgainstSetting():
            return (spec.metric.name,)
        case PingCdf():
            return ()
        case PercentileCdf():
            return (spec.metric,)
        case Timeline():
            return (spec.metric, spec.start, spec.end)
        case Cumulative():
            return tuple(metric for metric, _ in spec.series)


@dataclass(frozen=True)
class Role:
    """A part a command asks of whichever scenario plays it, by what it measures, never
    by its name (calibrate's path, capacity's steps, report.md's overlay / baseline
    table). Its player declares every metric the role names, which the readers take
    in the order given here."""

    name: str
    description: str
    metrics: tuple[str, ...]


# measuring a path between two agents: one TCP stream's rate, then the mean ping round
# trip (calibrate's path, report.md's overlay / baseline and raw veth tables)
PATH_ROLE = Role("path", "one TCP stream's rate and the ping round trip between two agents",
                 ("tcp_mbit", "rtt_mean_ms"))
# joining machines to an overlay: the join's seconds, the machines joined, a pass on kept
# containers started again (calibrate --scale)
JOIN_ROLE = Role("join", "machines joining an overlay: its time, how many joined, a restart",
                 ("join_seconds", "joined", "restart_seconds"))
# a room of machines loading one server: capacity's steps (its targets name these)
LOAD_ROLE = Role("load", "a room of machines loading one server: latency, failures, fairness",
                 ("room_p50_ms", "room_p95_ms", "room_p99_ms", "room_max_ms", "room_failed",
                  "room_fairness"))
ROLES = (PATH_ROLE, JOIN_ROLE, LOAD_ROLE)
# what a LOAD_ROLE pass's status says when its own load generators ran late: capacity
# reads it as the host, not the overlay, being the limit
GENERATOR_BEHIND = "the generator fell behind its schedule"


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
    # the parts it plays for other commands (ROLES), found by role, never by its name
    roles: tuple[Role, ...] = ()

    def __post_init__(self) -> None:
        for needed in [*(m for f in self.figures for m in figure_metrics(f)),
                       *(m for r in self.roles for m in r.metrics)]:
            self.metric(needed)  # KeyError: a figure or a role reads what it never emits

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
