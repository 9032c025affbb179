"""What a metric is (unit, which way is better, headline, plot, noisy) and the
catalogue of them: every value a scenario emits is declared once, with the
scenario (vnetbench/declared/), and read by the stats, tables, plots and
regression verdicts instead of tables kept by hand. The declarations are apart
from the code that measures, so reading results never loads it.

A metric may carry dimensions (vnetbench/core/schema.py: `fault`, `role`, ...): its rows
then say which fault, role... in columns of those names, and one series of it is a
metric and its dimensions' values. Its `display` names such a series in one word,
its `{dimension}` fields filled (`outage_ms` of fault `switch-restart` is
`outage_ms_switch-restart`): the name tables show, and the name results written
before dimensions were columns gave it (a reader splits those back: `split`).

A metric is *judged* (given a better/worse verdict by `compare` and `ab`) when it
says which way is better and is not declared noisy: counters that move a lot
between identical runs on a shared machine (retransmits, ping mdev and max, CPU
shares, the testbed's own gate timings) are shown beside the verdicts, and judged
only when asked (`--all`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

BOOL = "bool"  # the unit of a yes/no metric: 1 yes, 0 no
# Units of a rate, a size, a count or a share of a core: never below zero. A time
# ("ms", "s", "µs") may be a difference (latency added under load) and "%" may be
# iperf3's UDP loss (below zero when datagrams arrive out of order).
MAGNITUDE_UNITS = frozenset({
    "Mbit/s", "bytes", "MiB", "count", BOOL, "share", "index", "requests/s",
    "transactions/s", "packets/s", "% of a core", "% of all cores", "cores"})


class Better(StrEnum):
    HIGHER = "higher"
    LOWER = "lower"
    NEITHER = "neither"  # a count or a setting: a change is reported, never judged


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    better: Better = Better.NEITHER
    headline: str | None = None  # the label in headline tables; None: not a headline
    plot: str | None = None  # file stem of its bar chart per overlay (report plots)
    label: str | None = None  # how a method's table names it when it is no headline
    noisy: bool = False  # shown, not judged, by compare and ab unless asked (--all)
    lead: bool = False  # one of its scenario's figures in the report's summary (a headline)
    # one series' name, `{dimension}` fields filled (None: no dimension, its name alone)
    display: str | None = None
    # a difference of two figures (latency added under load: a loaded figure less the
    # idle one): its zero is no absence of anything and a baseline's sits near it, so it
    # is set against a baseline by its difference, never by a ratio (report/tables.py)
    difference: bool = False
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = re.split(r"\{\w+\}", self.display or self.name)
        fields = [rf"(?P<{d}>[\w.-]+)" for d in self.dimensions]
        regex = "".join(re.escape(p) + f for p, f in zip(parts, [*fields, ""], strict=True))
        object.__setattr__(self, "pattern", re.compile(f"^{regex}$"))
        if self.lead and not self.headline:
            raise ValueError(f"{self.name}: a lead metric is a headline (it needs its label)")
        if "{" in self.name:
            raise ValueError(f"{self.name}: a name holds no field (its display does)")

    @property
    def dimensions(self) -> tuple[str, ...]:
        """The dimensions its rows carry, in the order its display names them."""
        return tuple(re.findall(r"\{(\w+)\}", self.display or ""))

    @property
    def judged(self) -> bool:
        """Does a change of it get a verdict (by default)?"""
        return self.better is not Better.NEITHER and not self.noisy

    def matches(self, name: str) -> bool:
        """Is this one of its series' display names?"""
        return bool(self.pattern.match(name))

    def values_in(self, name: str) -> dict[str, str]:
        """The dimensions' values a display name of it holds ({} when it holds none)."""
        found = self.pattern.match(name)
        return dict(found.groupdict()) if found else {}

    def series_name(self, dimensions: Mapping[str, str]) -> str:
        """One series' name: its display with the dimensions' values filled in."""
        return (self.display or self.name).format_map(
            {d: dimensions.get(d, "") for d in self.dimensions})

    def label_for(self, name: str) -> str:
        """The headline label of one series (its display name; {fields} filled, left
        as they are for the metric's own name)."""
        label = self.headline or self.label or name
        values = self.values_in(name)
        return label.format_map(values) if values else label


SKIPPED = Metric("skipped", "", headline=None)  # the row of a pass that did not run
# Every pass's: what the host spent outside the testbed meanwhile (measure/cpu.py)
OUTSIDE_LOAD = Metric("host_outside_cores", "cores",
                      label="CPU busy outside the testbed during the pass (cores)")


class Catalogue:
    """Every declared metric, in declaration order (the order headline tables use)."""

    def __init__(self, metrics: Iterable[Metric]) -> None:
        self.metrics = [SKIPPED, OUTSIDE_LOAD, *metrics]
        names = [m.name for m in self.metrics]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            raise ValueError(f"metrics declared twice: {', '.join(sorted(duplicates))}")

    def __iter__(self) -> Iterator[Metric]:
        return iter(self.metrics)

    def find(self, name: str) -> Metric | None:
        """A metric by its name, or by one series' display name (`outage_ms_switch-restart`)."""
        exact = next((m for m in self.metrics if m.name == name), None)
        return exact or next((m for m in self.metrics if m.matches(name)), None)

    def split(self, name: str) -> tuple[str, dict[str, str]]:
        """A series' display name -> its metric and dimensions (a name it does not
        know, or of a metric without dimensions: itself, none)."""
        metric = self.find(name)
        if metric is None or not metric.dimensions:
            return name, {}
        return metric.name, metric.values_in(name)

    def series_name(self, metric: str, dimensions: Mapping[str, str]) -> str:
        """The one name of a metric's series (the name alone for a metric it does not
        know or that has no dimensions)."""
        declared = next((m for m in self.metrics if m.name == metric and m.dimensions), None)
        return declared.series_name(dimensions) if declared else metric

    def better(self, name: str) -> Better:
        metric = self.find(name)
        return metric.better if metric else Better.NEITHER

    def judged(self, name: str) -> bool:
        metric = self.find(name)
        return metric.judged if metric else False

    def headline(self, name: str) -> str | None:
        metric = self.find(name)
        return metric.label_for(name) if metric and metric.headline else None

    def label(self, name: str) -> str:
        """Its headline, else its label, else the name itself (a method's rows)."""
        metric = self.find(name)
        return metric.label_for(name) if metric else name

    def order(self, name: str) -> int:
        metric = self.find(name)
        return self.metrics.index(metric) if metric else len(self.metrics)
