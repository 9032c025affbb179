"""The results frame, declared once: its columns and the row one measured value makes.

vnetbench.analysis.results writes it (results.parquet and .csv); the report, `compare` and
`ab` read it by these names. The names are the files' format, which recorded
results depend on: a column is never renamed. Besides the fixed columns, a row
carries one column per setting that shaped its numbers (`set_<setting>`) and one
per parameter of its variant (`var_<parameter>`: a matrix cell's overrides, a
sweep's value, an A/B's round).

A row's dimensions say what, of its metric, its value measured: metric `outage_ms`
of fault `switch-restart`, `cpu_percent` of role `agent`. Every row has every
dimension's column, empty where its metric has none; a metric and its dimensions'
values are one series. The catalogue (vnetbench/core/metrics.py) declares which metrics
carry which, and names a series in one word for tables (`outage_ms_switch-restart`),
the name results written before dimensions were columns gave it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from vnetbench.core.outcome import State

RUN_ID: Final = "run_id"
SCENARIO: Final = "scenario"
OVERLAY: Final = "overlay"
VARIANT: Final = "variant"  # the matrix cell's settings variant, a method's step, an A/B arm
METHOD: Final = "method"  # the reference method the row belongs to; empty outside one
PASS: Final = "pass"
METRIC: Final = "metric"
VALUE: Final = "value"
UNIT: Final = "unit"
STATE: Final = "state"  # what code reads (outcome.State)
STATUS: Final = "status"  # the sentence people read ("path dead: 0 of 200 pings ...")
# what code reads of the status: its problems' kinds (outcome.Kind), comma-separated in
# the order said ("partial,outside load"; empty: none)
KINDS: Final = "kinds"
REMARK: Final = "remark"  # how the overlay adjusted the settings ("measured plain")
# The dimensions, a small set: a new one is a column every reader carries.
FAULT: Final = "fault"  # failover: the fault's kind (switch-restart, backbone-down-2...)
ROLE: Final = "role"  # CPU and memory per container role (agent, switch, hub, server...)
QUANTILE: Final = "quantile"  # room's latency CDF: the point, in percent (50, 99.9)
SWITCH: Final = "switch"  # join: the switch agents joined on (switch1...)
SIZE: Final = "size"  # throughput's pings of an extra payload size: the payload, bytes
INSTANCES: Final = "instances"  # transactions' parallel round: netperf instances at once
PHASE: Final = "phase"  # room under a workload: the phase (statement, steady...)
EVENT: Final = "event"  # room under a workload: the at-once event (statement...)
DIMENSIONS: Final = (FAULT, ROLE, QUANTILE, SWITCH, SIZE, INSTANCES, PHASE, EVENT)

# A time series' point: the end of its interval, seconds since the measurement
# began; the column exists only where a scenario kept a series.
INTERVAL_S: Final = "interval_s"

COLUMNS: Final = (RUN_ID, SCENARIO, OVERLAY, VARIANT, METHOD, PASS, METRIC, *DIMENSIONS,
                  VALUE, UNIT, STATE, STATUS, KINDS, REMARK)
CELL: Final = (SCENARIO, OVERLAY, VARIANT)  # the rows of one matrix cell
# the rows of one measured quantity, over passes: in the files, and (METRIC holding the
# series' one name, vnetbench.analysis.results.named) as the report, compare and ab read them
SERIES: Final = (*CELL, METRIC, UNIT)

SETTING_PREFIX: Final = "set_"
PARAMETER_PREFIX: Final = "var_"

# Settings and parameters the readers pick out by name (written by the scenarios,
# runs/passes.py's link_settings, a swarm's placement_settings, runs/ab.py):
MACHINES: Final = "machines"  # a join's or a config change's size (Settings.machines)
HOSTS: Final = "hosts"  # where each role ran, on several hosts
SITE_LINKS: Final = "site"  # the site links' profile, as the topology describes it
BACKBONE_LINKS: Final = "backbone"  # the backbone's
ROUND: Final = "round"  # an A/B's round

NATIVE: Final = "baseline"  # the overlay every ratio is against: the path without one


def setting_column(name: str) -> str:
    return f"{SETTING_PREFIX}{name}"


def parameter_column(name: str) -> str:
    return f"{PARAMETER_PREFIX}{name}"


def is_parameter_column(column: object) -> bool:
    return str(column).startswith(PARAMETER_PREFIX)


def parameter_of(column: str) -> str:
    """var_backbone_delay_ms -> backbone_delay_ms."""
    return column.removeprefix(PARAMETER_PREFIX)


DEFAULT_VARIANT: Final = "default"


@dataclass(frozen=True)
class Variant:
    """The settings a cell's rows were measured in, as the run that asked for them names
    them: the variant (a matrix cell's, a sweep's value, an A/B arm, a capacity step),
    the reference method (empty outside one) and the parameters placing the variant
    (var_* columns)."""

    name: str = DEFAULT_VARIANT
    method: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def step(self, name: str | None) -> Variant:
        """The variant of one of a method's steps (named by its label), else this one."""
        return replace(self, name=name) if name else self


@dataclass(frozen=True)
class CellKey:
    """What identifies a result row's cell: the run that measured it, the scenario, the
    overlay and the variant. Passed with each result."""

    run_id: str
    scenario: str
    overlay: str
    variant: Variant = field(default_factory=Variant)

    @property
    def name(self) -> str:
        """scenario/overlay/variant: the cell's key in a matrix's record."""
        return f"{self.scenario}/{self.overlay}/{self.variant.name}"


@dataclass(frozen=True)
class ResultRow:
    """One measured value of one pass, as the results file holds it."""

    run_id: str
    scenario: str
    overlay: str
    variant: str
    method: str
    pass_no: int
    metric: str
    value: float | None
    unit: str
    state: State
    status: str
    remark: str
    settings: Mapping[str, Any] = field(default_factory=dict)  # -> set_* columns
    parameters: Mapping[str, Any] = field(default_factory=dict)  # -> var_* columns
    interval_s: float | None = None  # a time series' point (None: the pass's own value)
    dimensions: Mapping[str, str] = field(default_factory=dict)  # -> DIMENSIONS' columns
    kinds: tuple[str, ...] = ()  # the status's problems' kinds, in the order said

    def record(self) -> dict[str, Any]:
        """The row under its column names, in the files' column order."""
        record = {RUN_ID: self.run_id, SCENARIO: self.scenario, OVERLAY: self.overlay,
                  VARIANT: self.variant, METHOD: self.method, PASS: self.pass_no,
                  METRIC: self.metric, **{d: self.dimensions.get(d, "") for d in DIMENSIONS},
                  VALUE: self.value, UNIT: self.unit,
                  STATE: self.state.value, STATUS: self.status,
                  KINDS: ",".join(self.kinds), REMARK: self.remark}
        record |= {setting_column(k): v for k, v in self.settings.items()}
        record |= {parameter_column(k): v for k, v in self.parameters.items()}
        return record | ({INTERVAL_S: self.interval_s} if self.interval_s is not None else {})
