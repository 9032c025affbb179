"""What each machine of a room costs, per overlay and role, from room passes of several
sizes (capacity's steps, or `vnetbench cost` over results directories): the table a
venue sizes from.

- **CPU per request**: a role's CPU (cores, summed over its containers, between the
  room's instant and the load's end) against the requests answered per second; the
  slope of a straight-line fit is the role's CPU seconds per request, the intercept
  what it spends with no request (keep-alives, timers).
- **Memory**: a role's memory under load (MiB, the mean of its containers) against the
  room's machines; the slope is what each machine adds to one container of the role,
  the intercept one container's memory with none.

A fit is offered as the cost only where the points lie on a line: at least
`LEAST_SIZES` distinct room sizes and R² of at least `LEAST_R2`; otherwise the table
says so and gives the points' range (a role whose cost is not linear in the load, or
a noisy one, is not summarised by a slope).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from vnetbench.core.outcome import State
from vnetbench.core.schema import METRIC, OVERLAY, PASS, ROLE, RUN_ID, STATE, VALUE
from vnetbench.files import write_text_atomic
from vnetbench.report.cost_check import Checked, check, check_section, pipe_table
from vnetbench.report.plots import save_figure

LEAST_SIZES = 3  # distinct room sizes: two points always lie on a line
LEAST_R2 = 0.9  # below: the role's cost is not linear in the load, or too noisy to say
CPU = "room_cpu_percent"  # per role, percent of one core
MEMORY = "mem_load_mib"  # per role, the mean of its containers
RATE = "room_requests_per_s"
MACHINES = "room_machines"
POINT_COLUMNS = [OVERLAY, ROLE, "machines", "rate", "cores", "mib"]


@dataclass(frozen=True)
class Line:
    """A least-squares straight line through (x, y) points."""

    slope: float
    slope_error: float  # its standard error (nan with two points)
    intercept: float
    r2: float
    sizes: int  # distinct room sizes
    lowest: float  # of y
    highest: float
    mean: float

    @property
    def on_line(self) -> bool:
        return self.sizes >= LEAST_SIZES and self.r2 >= LEAST_R2

    @property
    def flat(self) -> bool:
        """Enough sizes, and a slope within two standard errors of none: y does not
        grow with x (a low R² then says nothing against the mean)."""
        return (self.sizes >= LEAST_SIZES and not math.isnan(self.slope_error)
                and abs(self.slope) <= 2 * self.slope_error)


@dataclass(frozen=True)
class RoleCost:
    overlay: str
    role: str
    cpu: Line  # cores against requests/s: slope in CPU seconds per request
    memory: Line  # MiB per container against machines: slope in MiB per machine
    machines: tuple[int, ...]  # the room sizes measured


def fit(x: pd.Series, y: pd.Series, sizes: int) -> Line:
    """The straight line through the points, with the slope's standard error and R²;
    `sizes`: the distinct room sizes behind them (passes of one size at rates a little
    apart are one point, not a line)."""
    xs, ys = np.asarray(x, float), np.asarray(y, float)
    if sizes < 2:
        return Line(math.nan, math.nan, math.nan, math.nan, sizes, float(ys.min()),
                    float(ys.max()), float(ys.mean()))
    slope, intercept = np.polyfit(xs, ys, 1)
    residual = ys - (slope * xs + intercept)
    total = float(((ys - ys.mean()) ** 2).sum())
    r2 = 1 - float((residual ** 2).sum()) / total if total > 0 else 1.0
    spread = float(((xs - xs.mean()) ** 2).sum())
    error = (math.sqrt(float((residual ** 2).sum()) / (len(xs) - 2) / spread)
             if len(xs) > 2 else math.nan)
    return Line(float(slope), error, float(intercept), r2, sizes, float(ys.min()),
                float(ys.max()), float(ys.mean()))


def cost_points(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per measured room pass and role: overlay, role, machines, requests/s,
    cores and MiB. Passes that did not measure are left out."""
    rows = frame[frame[METRIC].isin([CPU, MEMORY, RATE, MACHINES])]
    if STATE in rows.columns:
        rows = rows[rows[STATE].isin([s.value for s in State if s.measured])]
    if rows.empty or ROLE not in rows.columns:
        return pd.DataFrame(columns=POINT_COLUMNS)
    keys = [RUN_ID, OVERLAY, PASS]
    per_pass = rows[rows[METRIC].isin([RATE, MACHINES])].pivot_table(
        index=keys, columns=METRIC, values=VALUE, aggfunc="first")
    per_role = rows[rows[METRIC].isin([CPU, MEMORY]) & (rows[ROLE] != "")].pivot_table(
        index=[*keys, ROLE], columns=METRIC, values=VALUE, aggfunc="first")
    joined = per_role.join(per_pass, on=keys, how="inner").reset_index()
    if joined.empty or not {RATE, MACHINES} <= set(joined.columns):
        return pd.DataFrame(columns=POINT_COLUMNS)
    return pd.DataFrame({
        OVERLAY: joined[OVERLAY], ROLE: joined[ROLE],
        "machines": joined[MACHINES].astype(int), "rate": joined[RATE],
        "cores": joined[CPU] / 100 if CPU in joined else math.nan,
        "mib": joined.get(MEMORY, math.nan)})


def role_costs(points: pd.DataFrame) -> list[RoleCost]:
    """Each overlay's and role's two fits, in the order the points came."""
    costs = []
    for (overlay, role), group in points.groupby([OVERLAY, ROLE], sort=False):
        cpu = group.dropna(subset=["cores", "rate"])
        memory = group.dropna(subset=["mib"])
        if cpu.empty or memory.empty:
            continue
        costs.append(RoleCost(str(overlay), str(role),
                              fit(cpu["rate"], cpu["cores"], cpu["machines"].nunique()),
                              fit(memory["machines"], memory["mib"],
                                  memory["machines"].nunique()),
                              tuple(sorted(set(group["machines"].tolist())))))
    return costs


def cost_table(costs: Sequence[RoleCost]) -> str:
    """The costs as Markdown: a fit where the points lie on a line, else their range."""
    return "\n".join(pipe_table(
        ("overlay", "role", "CPU ms per request", "CPU with no request", "MiB per container",
         "MiB per machine", "room sizes"),
        ((cost.overlay, cost.role, cpu_cell(cost.cpu), idle_cell(cost.cpu),
          memory_cell(cost.memory), per_machine_cell(cost.memory),
          ", ".join(str(n) for n in cost.machines)) for cost in costs)))


def cpu_cell(line: Line) -> str:
    if line.flat:  # e.g. a lighthouse the requests do not pass through
        return f"none per request (flat: {line.mean:.3f} cores)"
    if not line.on_line:
        return f"not on a line ({off_line(line)}; {line.lowest:.3f}-{line.highest:.3f} cores)"
    return f"{plus_minus(line.slope * 1000, line.slope_error * 1000)} (R² {line.r2:.2f})"


def idle_cell(line: Line) -> str:
    return f"{line.intercept:.2f} cores" if line.on_line else "-"


def memory_cell(line: Line) -> str:
    if line.flat:
        return f"{line.mean:.1f} ({line.lowest:.1f}-{line.highest:.1f})"
    if not line.on_line:
        return f"{line.lowest:.1f}-{line.highest:.1f}"
    return f"{line.intercept:.1f} at 0 machines"


def per_machine_cell(line: Line) -> str:
    if line.flat:
        return f"none measured ({line.slope:.2g} ± {line.slope_error:.2g}: flat)"
    if not line.on_line:
        return f"not on a line ({off_line(line)})"
    return f"{plus_minus(line.slope, line.slope_error)} (R² {line.r2:.2f})"


def plus_minus(value: float, error: float) -> str:
    """3 significant digits, the error 2 (0 below a thousandth of the value)."""
    shown = 0.0 if abs(error) < abs(value) * 1e-3 else error
    return f"{value:.3g} ± {shown:.2g}"


def off_line(line: Line) -> str:
    if line.sizes < LEAST_SIZES:
        return f"{line.sizes} room size(s), {LEAST_SIZES} needed"
    return f"R² {line.r2:.2f} < {LEAST_R2}"


def cost_figure(points: pd.DataFrame, costs: Sequence[RoleCost]) -> Figure | None:
    """Two panels, a line per overlay and role: cores against requests/s, and MiB per
    container against machines; the fit dashed where the points lie on a line."""
    if points.empty or not costs:
        return None
    figure, (cpu_axes, memory_axes) = plt.subplots(1, 2, figsize=(10, 4))
    for index, cost in enumerate(costs):
        own = points[(points[OVERLAY] == cost.overlay) & (points[ROLE] == cost.role)]
        colour = f"C{index % 10}"
        label = f"{cost.overlay} {cost.role}"
        for axes, x, y, line in ((cpu_axes, "rate", "cores", cost.cpu),
                                 (memory_axes, "machines", "mib", cost.memory)):
            axes.plot(own[x], own[y], "o", color=colour, label=label, alpha=0.7)
            if line.on_line:
                ends = np.array([0.0, float(own[x].max())])
                axes.plot(ends, line.slope * ends + line.intercept, "--", color=colour)
    cpu_axes.set(xlabel="requests answered per second", ylabel="CPU (cores)",
                 title="CPU per role against the load")
    memory_axes.set(xlabel="machines in the room", ylabel="MiB per container",
                    title="memory per container against the room")
    cpu_axes.legend(fontsize=7)
    figure.tight_layout()
    return figure


@dataclass(frozen=True)
class Written:
    """What cost.md holds: the costs' table, and with --check-at its rows."""

    table: str
    checked: list[Checked]


def write_cost(frame: pd.DataFrame, directory: Callable[[], Path],
               check_at: int | None = None) -> Written | None:
    """cost.md and cost.png in `directory()` (called only when there is something to
    write) from a frame's room passes, or None: no room pass to read. With `check_at`
    the fit is made from the sizes below it and checked at it (cost_check.py)."""
    points = cost_points(frame)
    fitted = points if check_at is None else points[points["machines"] < check_at]
    costs = role_costs(fitted)
    checked = [] if check_at is None else check(points, check_at)
    if not costs and not checked:
        return None
    table = cost_table(costs)
    text = "# What each machine costs\n\n" + table + "\n"
    if check_at is not None:
        text += "\n" + check_section(checked, check_at) + "\n"
    where = directory()
    write_text_atomic(where / "cost.md", text)
    figure = cost_figure(points, costs)  # the points at check_at beside the lines
    if figure is not None:
        save_figure(figure, where / "cost.png")
    return Written(table, checked)
