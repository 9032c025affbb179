"""Log axes whose every label reads as the figure it marks, in report.html (plotly)
and the PNGs (matplotlib). Left to themselves, plotly labels a log axis's ticks
between decades with their first digit alone (30 ms reads "3") and matplotlib
with powers of ten; here each label is the whole number (30, 0.02), at 1, 2 and
5 of each decade when the axis spans few decades, at each decade when it spans
more, and the ticks between go unlabelled."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

LOG_SPAN = 20  # a log axis when the values span more than this factor
STEPS = (1.0, 2.0, 5.0)  # the labelled ticks of each decade on a short axis
FEW_DECADES = 3  # beyond this many decades only each decade is labelled (1, 10, 100)


def tick_text(value: float) -> str:
    """A tick's label in full: 30, 1000, 0.02 (never 3, 1e3 or 2e-2)."""
    decimals = max(0, -math.floor(math.log10(value) + 1e-9))
    return f"{value:.{decimals}f}"


def decade_steps(low: float, high: float) -> tuple[float, ...]:
    """Which ticks of each decade get a label between `low` and `high` (both > 0)."""
    return STEPS if math.log10(high / low) <= FEW_DECADES else (1.0,)


def log_ticks(values: Iterable[float]) -> tuple[list[float], list[str]]:
    """The labelled ticks of a log axis over `values` (positive ones), from the decade
    below the lowest to the one above the highest, and their labels."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return [], []
    low, high = min(positive), max(positive)
    steps = decade_steps(low, high)
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    ticks = [step * 10.0 ** k for k in range(first, last + 1) for step in steps]
    return ticks, [tick_text(t) for t in ticks]


def plotly_log_axis(values: Iterable[float]) -> dict[str, Any]:
    """A plotly axis update: log, labelled ticks in full, unlabelled minor ticks."""
    ticks, texts = log_ticks(values)
    axis: dict[str, Any] = {"type": "log", "minor": {"ticks": "outside", "ticklen": 3}}
    if ticks:
        axis |= {"tickmode": "array", "tickvals": ticks, "ticktext": texts}
    return axis


def matplotlib_log_axis(axes: Axes, which: str, values: Iterable[float]) -> None:
    """`which` ("x" or "y") of `axes` in log scale, labelled as plotly_log_axis's."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    axis = axes.xaxis if which == "x" else axes.yaxis
    (axes.set_xscale if which == "x" else axes.set_yscale)("log")
    if not positive:
        return
    steps = decade_steps(min(positive), max(positive))
    axis.set_major_locator(LogLocator(base=10, subs=steps))
    axis.set_major_formatter(FuncFormatter(lambda value, _: tick_text(value)))
    axis.set_minor_formatter(NullFormatter())
