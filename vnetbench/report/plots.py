"""PNG plots of a results frame (matplotlib, no display needed): the headline bars,
each scenario's declared figures (vnetbench/declared/, the same list report.html
draws: timelines under faults, running sums over time, CDFs, a metric against a
setting), sweeps, a method's declared running sums per step. No scenario is named
here: what is drawn, of which metric, is its declaration's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from vnetbench.analysis.results import named
from vnetbench.core.metrics import Better
from vnetbench.core.schema import (
    FAULT,
    INTERVAL_S,
    MACHINES,
    METRIC,
    OVERLAY,
    PASS,
    QUANTILE,
    SCENARIO,
    UNIT,
    VALUE,
    VARIANT,
    is_parameter_column,
    parameter_column,
    parameter_of,
    setting_column,
)
from vnetbench.declared import DECLARATIONS, catalogue
from vnetbench.declared.declaration import (
    AgainstSetting,
    Cumulative,
    FigureSpec,
    PercentileCdf,
    PingCdf,
    Timeline,
)
from vnetbench.files import write_atomic
from vnetbench.report.log_axes import LOG_SPAN, matplotlib_log_axis
from vnetbench.report.raw import PingSample
from vnetbench.runtime.rundir import slug


def save_figure(figure: Figure, path: Path) -> None:
    """The figure as a PNG, written whole or not at all (vnetbench/files.py), closed."""
    try:
        write_atomic(path, lambda temp: figure.savefig(temp, dpi=110, format="png"))
    finally:
        plt.close(figure)


def bar_with_ranges(summary: pd.DataFrame, metric: str, path: Path, title: str,
                    unit: str) -> Path | None:
    """Mean per overlay/variant as bars, lowest-to-highest pass as the error range."""
    rows = summary[summary[METRIC] == metric]
    if rows.empty:
        return None
    labels = [o if v == "default" else f"{o}\n{v}"
              for o, v in zip(rows[OVERLAY], rows[VARIANT], strict=True)]
    errors = [(rows["mean"] - rows["low"]).to_numpy(), (rows["high"] - rows["mean"]).to_numpy()]
    figure, axes = plt.subplots(figsize=(max(5.0, 1.3 * len(rows)), 3.8))
    axes.bar(labels, rows["mean"], yerr=errors, capsize=6, color="#4c72b0")
    axes.set_ylabel(unit)
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("bar: mean over passes; whiskers: lowest to highest pass", fontsize=8)
    positive = rows["low"][rows["low"] > 0]
    if len(positive) > 1 and rows["high"].max() / positive.min() > LOG_SPAN:
        # overlays and the bare path differ by orders of magnitude
        matplotlib_log_axis(axes, "y", [*positive, rows["high"].max()])
    figure.tight_layout()
    save_figure(figure, path)
    return path


def line_against(summary: pd.DataFrame, metric: str, x_column: str, x_label: str,
                 path: Path, title: str = "") -> Path | None:
    """A metric against a numeric setting column (join time against N, sweeps)."""
    if x_column not in summary.columns:
        return None
    rows = summary[(summary[METRIC] == metric) & summary[x_column].notna()]
    if rows[x_column].nunique() < 2:
        return None
    figure, axes = plt.subplots(figsize=(5, 3.5))
    axes.set_title(f"{title or metric}: mean over passes, band lowest to highest", fontsize=9)
    for overlay, group in rows.groupby(OVERLAY):
        group = group.assign(x=group[x_column].astype(float)).sort_values("x")
        axes.plot(group["x"], group["mean"], marker="o", label=str(overlay))
        axes.fill_between(group["x"], group["low"], group["high"], alpha=0.2)
    axes.set_xlabel(x_label)
    axes.set_ylabel(str(rows[UNIT].iloc[0]))
    positive = rows["low"][rows["low"] > 0]
    if len(positive) > 1 and rows["high"].max() / positive.min() > LOG_SPAN:
        matplotlib_log_axis(axes, "y", [*positive, rows["high"].max()])
    axes.legend()
    figure.tight_layout()
    save_figure(figure, path)
    return path


def write_plots(summary: pd.DataFrame, directory: Path) -> list[Path]:
    """Bars per overlay for the catalogue's plotted metrics; every judged headline
    metric against each swept parameter (var_* columns)."""
    return write_bar_plots(summary, directory) + write_line_plots(summary, directory)


def write_scenario_plots(frame: pd.DataFrame, summary: pd.DataFrame,
                         samples: list[PingSample], directory: Path) -> list[Path]:
    """Each registered scenario's declared figures that its rows (or raw files) can
    draw, in catalogue order, each as NAME.png (a timeline NAME-OVERLAY-timeline.png,
    a running sum NAME-VARIANT-....png)."""
    return [path for declared in DECLARATIONS for spec in declared.figures
            for path in scenario_plot(spec, declared.name,
                                      frame[frame[SCENARIO] == declared.name], summary,
                                      [s for s in samples if s.scenario == declared.name],
                                      directory)]


def scenario_plot(spec: FigureSpec, scenario: str, frame: pd.DataFrame, summary: pd.DataFrame,
                  samples: list[PingSample], directory: Path) -> list[Path]:
    """One declared figure of a scenario's rows, summary and ping samples: its PNGs."""
    path = directory / f"{spec.name}.png"
    match spec:
        case AgainstSetting():
            found = line_against(summary, spec.metric.name, setting_column(spec.setting),
                                 spec.axis, path, spec.title)
        case PingCdf():
            found = write_ping_cdf_plot(samples, spec.title, path)
        case PercentileCdf():
            found = write_percentile_cdf_plot(frame, spec, path)
        case Timeline():
            return write_timeline_plots(frame, spec, directory)
        case Cumulative():
            return write_cumulative_plots(frame, spec, directory, scenario)
    return [found] if found else []


def write_method_plots(frame: pd.DataFrame, directory: Path, method: str) -> list[Path]:
    """A method's section: the running sums its steps' scenarios declare, per step
    (METHOD-STEP-NAME.png)."""
    return [path for declared in DECLARATIONS for spec in declared.figures
            if isinstance(spec, Cumulative)
            for path in write_cumulative_plots(frame[frame[SCENARIO] == declared.name],
                                               spec, directory, method)]


def write_bar_plots(summary: pd.DataFrame, directory: Path) -> list[Path]:
    """Bars per overlay for the catalogue's plotted metrics (the headline plots)."""
    written = [bar_with_ranges(summary, m.name, directory / f"{m.plot}.png",
                               f"{m.headline} per overlay", m.unit)
               for m in catalogue() if m.plot]
    return [path for path in written if path]


def write_line_plots(summary: pd.DataFrame, directory: Path) -> list[Path]:
    """Every judged headline metric against each swept parameter (var_* columns)."""
    metrics = catalogue()
    written: list[Path | None] = []
    for column in swept_columns(summary):
        for metric in metrics:
            if metric.headline and metric.better is not Better.NEITHER:
                written.append(line_against(
                    summary, metric.name, column, axis_label(column),
                    directory / f"sweep-{parameter_of(column)}-{metric.name}.png"))
    return [path for path in written if path]


def swept_columns(summary: pd.DataFrame) -> list[str]:
    """var_* columns holding numbers that vary (a matrix's join size is drawn apart)."""
    return [c for c in summary.columns
            if is_parameter_column(c) and c != parameter_column(MACHINES)
            and pd.api.types.is_numeric_dtype(summary[c])
            and not pd.api.types.is_bool_dtype(summary[c]) and summary[c].nunique() > 1]


def axis_label(column: str) -> str:
    """var_backbone_delay_ms -> 'backbone delay (ms each way)'."""
    words = parameter_of(column).split("_")
    unit = {"mbit": "Mbit/s", "ms": "ms each way", "percent": "% each way"}.get(words[-1])
    return " ".join(words[:-1]) + f" ({unit})" if unit else " ".join(words)


def cumulative_points(frame: pd.DataFrame, spec: Cumulative) -> pd.DataFrame:
    """The rows of a running-sum figure: its series' rows per interval."""
    if INTERVAL_S not in frame.columns:
        return frame[:0]
    return frame[frame[INTERVAL_S].notna()
                 & frame[METRIC].isin([metric for metric, _ in spec.series])]


def write_cumulative_plots(frame: pd.DataFrame, spec: Cumulative, directory: Path,
                           of: str) -> list[Path]:
    """Per step (variant): the running sum against time, a line per overlay, series
    and pass (the first series solid, the others dashed)."""
    labels = dict(spec.series)
    written = []
    for variant, of_step in cumulative_points(frame, spec).groupby(VARIANT, sort=False):
        figure, axes = plt.subplots(figsize=(6, 3.8))
        colours = dict(zip(dict.fromkeys(of_step[OVERLAY]), plt.rcParams[
            "axes.prop_cycle"].by_key()["color"] * 4, strict=False))
        for (overlay, metric, pass_no), line in of_step.groupby(
                [OVERLAY, METRIC, PASS], sort=False):
            line = line.sort_values(INTERVAL_S)
            label = labels[str(metric)]
            axes.plot(line[INTERVAL_S], line[VALUE].cumsum() / spec.scale,
                      color=colours[overlay],
                      linestyle="-" if metric == spec.series[0][0] else "--",
                      label=f"{overlay} {label}" if pass_no == 1 else None)
        axes.set_xlabel(spec.time_axis)
        axes.set_ylabel(spec.axis)
        axes.set_title(spec.title.format(of=of, variant=variant) + " (a line per pass)",
                       fontsize=9)
        axes.legend(fontsize=7)
        figure.tight_layout()
        path = directory / f"{of}-{slug(str(variant))}-{spec.name}.png"
        save_figure(figure, path)
        written.append(path)
    return written


@dataclass(frozen=True)
class PassLine:
    """One pass of one fault: its rows in time order, and the instants the fault took
    effect and was lifted (seconds on the same axis; NaN where not recorded)."""

    line: pd.DataFrame
    start: float
    end: float


def fault_timelines(frame: pd.DataFrame, spec: Timeline) -> dict[tuple[str, str], list[PassLine]]:
    """A per-fault timeline's lines: (overlay, fault) -> one per pass."""
    if INTERVAL_S not in frame.columns or FAULT not in frame.columns:
        return {}
    points = frame[frame[INTERVAL_S].notna() & (frame[METRIC] == spec.metric)]
    marks = frame[frame[INTERVAL_S].isna() & frame[METRIC].isin([spec.start, spec.end])]
    found: dict[tuple[str, str], list[PassLine]] = {}
    for (overlay, fault, pass_no), line in points.groupby([OVERLAY, FAULT, PASS], sort=False):
        mine = marks[(marks[OVERLAY] == overlay) & (marks[PASS] == pass_no)
                     & (marks[FAULT] == fault)]
        at = {metric: float(mine[mine[METRIC] == metric][VALUE].iloc[0])
              if (mine[METRIC] == metric).any() else float("nan")
              for metric in (spec.start, spec.end)}
        found.setdefault((str(overlay), str(fault)), []).append(
            PassLine(line.sort_values(INTERVAL_S), at[spec.start], at[spec.end]))
    return found


@dataclass(frozen=True)
class Mark:
    """An event of a schedule on its timeline: where it took effect (named) or was
    lifted."""

    at: float
    fault: str
    lifted: bool


def schedule_timelines(frame: pd.DataFrame, spec: Timeline
                       ) -> dict[str, tuple[list[tuple[object, pd.DataFrame]], list[Mark]]]:
    """A whole-schedule timeline's lines: overlay -> (each pass's rows in time order,
    each event's start and end, once per overlay)."""
    if INTERVAL_S not in frame.columns or FAULT not in frame.columns:
        return {}
    points = frame[frame[INTERVAL_S].notna() & (frame[METRIC] == spec.metric)]
    marks = frame[frame[INTERVAL_S].isna() & frame[METRIC].isin([spec.start, spec.end])]
    found: dict[str, tuple[list[tuple[object, pd.DataFrame]], list[Mark]]] = {}
    for overlay, lines in points.groupby(OVERLAY, sort=False):
        mine = marks[marks[OVERLAY] == overlay].drop_duplicates([METRIC, FAULT])
        found[str(overlay)] = (
            [(pass_no, line.sort_values(INTERVAL_S))
             for pass_no, line in lines.groupby(PASS, sort=False)],
            [Mark(float(at), str(fault), metric != spec.start) for metric, fault, at
             in zip(mine[METRIC], mine[FAULT], mine[VALUE], strict=True)])
    return found


def write_timeline_plots(frame: pd.DataFrame, spec: Timeline, directory: Path) -> list[Path]:
    """A declared timeline, a PNG per overlay (NAME-OVERLAY-timeline.png): per fault a
    panel of its passes, or the passes under the whole schedule, each fault's start
    (red) and lift (green) dashed."""
    draw = draw_fault_timeline if spec.per_fault else draw_schedule_timeline
    written = []
    for overlay, figure in draw(frame, spec):
        figure.tight_layout()
        path = directory / f"{spec.name}-{slug(overlay)}-timeline.png"
        save_figure(figure, path)
        written.append(path)
    return written


def draw_fault_timeline(frame: pd.DataFrame, spec: Timeline) -> list[tuple[str, Figure]]:
    """Per overlay, a panel per fault: each pass's line, its own start and lift."""
    by_overlay: dict[str, list[tuple[str, PassLine]]] = {}
    for (overlay, fault), passes in fault_timelines(frame, spec).items():
        by_overlay.setdefault(overlay, []).extend((fault, one) for one in passes)
    drawn = []
    for overlay, lines in by_overlay.items():
        faults = list(dict.fromkeys(f for f, _ in lines))
        figure, axes = plt.subplots(len(faults), 1, squeeze=False,
                                    figsize=(6, 1.6 + 1.2 * len(faults)), sharex=True)
        rows = {fault: axes[i][0] for i, fault in enumerate(faults)}
        for fault, one in lines:
            row = rows[fault]
            row.step(one.line[INTERVAL_S], one.line[VALUE], where="post", linewidth=0.9)
            for at, colour in ((one.start, "red"), (one.end, "green")):
                if at == at:  # not NaN: the instant was recorded
                    row.axvline(at, color=colour, linestyle="--", linewidth=0.8)
            if (one.line[UNIT] == "share").all():
                row.set_ylim(-0.05, 1.05)
            row.set_ylabel(fault, fontsize=7)
        axes[-1][0].set_xlabel(f"{spec.time_axis} (red: the fault in effect, green: lifted)")
        figure.suptitle(spec.title.format(overlay=overlay), fontsize=9)
        drawn.append((overlay, figure))
    return drawn


def draw_schedule_timeline(frame: pd.DataFrame, spec: Timeline) -> list[tuple[str, Figure]]:
    """Per overlay, each pass's line under the whole schedule, each event's start
    (red, named) and lift (green)."""
    drawn = []
    for overlay, (passes, marks) in schedule_timelines(frame, spec).items():
        figure, axes = plt.subplots(figsize=(6, 3.8))
        for pass_no, line in passes:
            axes.step(line[INTERVAL_S], line[VALUE], where="post", linewidth=0.9,
                      label=f"pass {pass_no}")
        for mark in marks:
            axes.axvline(mark.at, color="green" if mark.lifted else "red", linestyle="--",
                         linewidth=0.8)
            if not mark.lifted:
                axes.annotate(mark.fault, (mark.at, 1.0), xycoords=("data", "axes fraction"),
                              fontsize=7, rotation=90, va="top", ha="right")
        axes.set_xlabel(f"{spec.time_axis} (red: the fault in effect, green: lifted)")
        axes.set_ylabel(spec.axis)
        axes.set_title(spec.title.format(overlay=overlay), fontsize=9)
        axes.legend(fontsize=7)
        drawn.append((overlay, figure))
    return drawn


def percentile_points(frame: pd.DataFrame, metric: str) -> dict[str, pd.Series]:
    """A distribution's CDF per overlay (and variant): percentile -> value, mean over
    passes (the metric's rows, a row per quantile)."""
    rows = frame[frame[METRIC] == metric]
    found: dict[str, pd.Series] = {}
    for (overlay, variant), group in rows.groupby([OVERLAY, VARIANT], sort=False):
        points = group.assign(point=group[QUANTILE].astype(float))
        label = str(overlay) if variant == "default" else f"{overlay} {variant}"
        found[label] = points.groupby("point")[VALUE].mean().sort_index()
    return found


def write_percentile_cdf_plot(frame: pd.DataFrame, spec: PercentileCdf,
                              path: Path) -> Path | None:
    """A declared distribution as a CDF, a line per overlay, log value axis."""
    lines = percentile_points(frame, spec.metric)
    if not lines:
        return None
    figure, axes = plt.subplots(figsize=(6, 3.8))
    for label, points in lines.items():
        axes.plot(points.to_numpy(), points.index / 100, marker=".", label=label)
    matplotlib_log_axis(axes, "x", [v for points in lines.values() for v in points.to_numpy()])
    axes.set_xlabel(spec.axis)
    axes.set_ylabel(spec.share)
    axes.set_title(spec.title, fontsize=9)
    axes.legend(fontsize=7)
    figure.tight_layout()
    save_figure(figure, path)
    return path


def write_ping_cdf_plot(samples: list[PingSample], title: str, path: Path) -> Path | None:
    """Each pass's ping round trips as a CDF, a line per pass in its overlay's colour."""
    if not samples:
        return None
    figure, axes = plt.subplots(figsize=(6, 3.8))
    colours = dict(zip(dict.fromkeys(s.overlay for s in samples), plt.rcParams[
        "axes.prop_cycle"].by_key()["color"] * 4, strict=False))
    shown: set[str] = set()
    for sample in samples:
        rtts = sorted(sample.rtts_ms)
        axes.step(rtts, [(i + 1) / len(rtts) for i in range(len(rtts))], where="post",
                  color=colours[sample.overlay], linewidth=0.9,
                  label=None if sample.overlay in shown else sample.overlay)
        shown.add(sample.overlay)
    rtts = [r for s in samples for r in s.rtts_ms if r > 0]
    if rtts and max(rtts) / min(rtts) > LOG_SPAN:
        matplotlib_log_axis(axes, "x", rtts)
    axes.set_xlabel("round trip (ms)")
    axes.set_ylabel("fraction of replies")
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=7)
    figure.tight_layout()
    save_figure(figure, path)
    return path


def capacity_plot(frame: pd.DataFrame, setting: str, clauses: Sequence[Any],
                  path: Path) -> Path | None:
    """capacity's steps drawn (capacity_figure) and saved; None: nothing to draw."""
    figure = capacity_figure(frame, setting, clauses)
    if figure is None:
        return None
    save_figure(figure, path)
    return path


def capacity_figure(frame: pd.DataFrame, setting: str,
                    clauses: Sequence[Any]) -> Figure | None:
    """Each latency clause's series against the size on a ms axis, its target as a
    dashed line, failed requests as bars on a second axis; a fairness clause (an index,
    0 to 1) on a panel of its own below."""
    column = parameter_column(setting)
    if frame.empty or column not in frame.columns:
        return None
    floors = [c for c in clauses if c.kind == "floor"]
    figure, panels = plt.subplots(2 if floors else 1, 1, sharex=True, squeeze=False,
                                  figsize=(6, 5.4 if floors else 3.8),
                                  height_ratios=[2, 1] if floors else [1])
    axes = panels[0][0]
    series = named(frame)  # a phase's clause names its series (room_phase_p99_ms_steady)
    draw_clauses(axes, series, column, [c for c in clauses if c.kind == "time"])
    failed = frame[frame[METRIC] == "room_failed"].sort_values(column)
    twin = axes.twinx()
    twin.bar(failed[column], failed[VALUE], alpha=0.3, color="red",
             width=max(0.5, float(failed[column].max() or 1) / 40) if len(failed) else 1)
    twin.set_ylim(0, max(1.0, float(failed[VALUE].max()) * 1.1 if len(failed) else 1.0))
    twin.set_ylabel("requests failed (bars)")
    axes.set_ylabel("ms (dashed: the target)")
    axes.set_title("capacity: each step, against the target", fontsize=9)
    bottom = axes
    if floors:
        bottom = panels[1][0]
        draw_clauses(bottom, series, column, floors)
        bottom.set_ylim(0, 1.05)
        bottom.set_ylabel("Jain's index (dashed: the floor)")
    bottom.set_xlabel(setting.replace("_", " "))
    figure.tight_layout()
    return figure


def draw_clauses(axes: Axes, series: pd.DataFrame, column: str,
                 clauses: Sequence[Any]) -> None:
    """Each clause's series against the size and its bound as a dashed line."""
    for clause in clauses:
        rows = series[series[METRIC] == clause.metric].sort_values(column)
        if not rows.empty:
            line = axes.plot(rows[column], rows[VALUE], marker="o", label=clause.key)
            axes.axhline(clause.bound, color=line[0].get_color(), linestyle="--",
                         linewidth=0.8)
    if clauses:
        axes.legend(fontsize=7)
