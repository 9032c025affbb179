"""PNG plots of a results frame (matplotlib, no display needed): the headline bars,
each scenario's declared figures (vnetbench/declared/, the same list report.html
draws), sweeps, failover's timelines, a method's bytes over time."""

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
from vnetbench.declared.declaration import AgainstSetting, FigureSpec, PercentileCdf, PingCdf
from vnetbench.declared.failover import ANSWERED, FAULT_AT, FAULT_END
from vnetbench.declared.room import ROOM_LATENCY
from vnetbench.declared.transfer import INTERVAL_BYTES_SUFFIX
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
    draw, in catalogue order, each as NAME.png."""
    written = [scenario_plot(spec, frame[frame[SCENARIO] == declared.name],
                             summary, [s for s in samples if s.scenario == declared.name],
                             directory / f"{spec.name}.png")
               for declared in DECLARATIONS for spec in declared.figures]
    return [path for path in written if path]


def scenario_plot(spec: FigureSpec, frame: pd.DataFrame, summary: pd.DataFrame,
                  samples: list[PingSample], path: Path) -> Path | None:
    """One declared figure of a scenario's rows, summary and ping samples."""
    match spec:
        case AgainstSetting():
            return line_against(summary, spec.metric.name, setting_column(spec.setting),
                                spec.axis, path, spec.title)
        case PingCdf():
            return write_ping_cdf_plot(samples, spec.title, path)
        case PercentileCdf():
            return write_room_cdf_plot(frame, path, spec.title)


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


def write_series_plots(frame: pd.DataFrame, directory: Path, prefix: str) -> list[Path]:
    """Per step (variant): bytes moved against time, a line per overlay, direction
    and pass, from the rows of per-interval bytes (`*_interval_bytes`, interval_s)."""
    if INTERVAL_S not in frame.columns:
        return []
    points = frame[frame[INTERVAL_S].notna()
                   & frame[METRIC].astype(str).str.endswith(INTERVAL_BYTES_SUFFIX)]
    written = []
    for variant, of_step in points.groupby(VARIANT, sort=False):
        figure, axes = plt.subplots(figsize=(6, 3.8))
        colours = dict(zip(dict.fromkeys(of_step[OVERLAY]), plt.rcParams[
            "axes.prop_cycle"].by_key()["color"] * 4, strict=False))
        for (overlay, metric, pass_no), line in of_step.groupby(
                [OVERLAY, METRIC, PASS], sort=False):
            line = line.sort_values(INTERVAL_S)
            direction = str(metric).removesuffix(INTERVAL_BYTES_SUFFIX)
            axes.plot(line[INTERVAL_S], line[VALUE].cumsum() / 2**20,
                      color=colours[overlay], linestyle="-" if direction == "upload" else "--",
                      label=f"{overlay} {direction}" if pass_no == 1 else None)
        axes.set_xlabel("seconds since the direction began")
        axes.set_ylabel("MiB moved")
        axes.set_title(f"{prefix}, {variant}: bytes over time (a line per pass)", fontsize=9)
        axes.legend(fontsize=7)
        figure.tight_layout()
        path = directory / f"{prefix}-{slug(str(variant))}-bytes.png"
        save_figure(figure, path)
        written.append(path)
    return written


@dataclass(frozen=True)
class Timeline:
    """One pass of one fault: its answered-share rows in time order, and the instants
    the fault took effect and was lifted on every edge (seconds on the same axis; NaN
    where not recorded)."""

    line: pd.DataFrame
    start: float
    end: float


def timelines(frame: pd.DataFrame) -> dict[tuple[str, str], list[Timeline]]:
    """failover's timelines: (overlay, fault) -> one per pass."""
    if INTERVAL_S not in frame.columns:
        return {}
    points = frame[frame[INTERVAL_S].notna() & (frame[METRIC] == ANSWERED)]
    marks = frame[frame[INTERVAL_S].isna() & frame[METRIC].isin([FAULT_AT, FAULT_END])]
    found: dict[tuple[str, str], list[Timeline]] = {}
    for (overlay, fault, pass_no), line in points.groupby([OVERLAY, FAULT, PASS], sort=False):
        mine = marks[(marks[OVERLAY] == overlay) & (marks[PASS] == pass_no)
                     & (marks[FAULT] == fault)]
        at = {metric: float(mine[mine[METRIC] == metric][VALUE].iloc[0])
              if (mine[METRIC] == metric).any() else float("nan")
              for metric in (FAULT_AT, FAULT_END)}
        found.setdefault((str(overlay), str(fault)), []).append(
            Timeline(line.sort_values(INTERVAL_S), at[FAULT_AT], at[FAULT_END]))
    return found


def write_timeline_plots(frame: pd.DataFrame, directory: Path) -> list[Path]:
    """Per overlay, failover's probes answered over time (a line per fault and pass,
    each 0.1 s the share of the 10 ms probes answered), the instants each fault took
    effect and was lifted marked."""
    by_overlay: dict[str, list[tuple[str, Timeline]]] = {}
    for (overlay, fault), passes in timelines(frame).items():
        by_overlay.setdefault(overlay, []).extend((fault, one) for one in passes)
    written = []
    for overlay, lines in by_overlay.items():
        figure, axes = plt.subplots(len({f for f, _ in lines}), 1, squeeze=False,
                                    figsize=(6, 1.6 + 1.2 * len({f for f, _ in lines})),
                                    sharex=True)
        rows = {fault: axes[i][0] for i, fault in enumerate(dict.fromkeys(
            f for f, _ in lines))}
        for fault, one in lines:
            row = rows[fault]
            row.step(one.line[INTERVAL_S], one.line[VALUE], where="post", linewidth=0.9)
            for at, colour in ((one.start, "red"), (one.end, "green")):
                if at == at:  # not NaN: the instant was recorded
                    row.axvline(at, color=colour, linestyle="--", linewidth=0.8)
            row.set_ylim(-0.05, 1.05)
            row.set_ylabel(fault, fontsize=7)
        axes[-1][0].set_xlabel("seconds since the probe began (red: the fault in effect, "
                               "green: lifted)")
        figure.suptitle(f"failover on {overlay}: share of 10 ms probes answered", fontsize=9)
        figure.tight_layout()
        path = directory / f"failover-{slug(overlay)}-timeline.png"
        save_figure(figure, path)
        written.append(path)
    return written


def room_cdf_points(frame: pd.DataFrame) -> dict[str, pd.Series]:
    """room's latency CDF per overlay (and variant): percentile -> ms, mean over passes."""
    rows = frame[frame[METRIC] == ROOM_LATENCY]
    found: dict[str, pd.Series] = {}
    for (overlay, variant), group in rows.groupby([OVERLAY, VARIANT], sort=False):
        points = group.assign(point=group[QUANTILE].astype(float))
        label = str(overlay) if variant == "default" else f"{overlay} {variant}"
        found[label] = points.groupby("point")[VALUE].mean().sort_index()
    return found


def write_room_cdf_plot(frame: pd.DataFrame, path: Path, title: str) -> Path | None:
    """The room's request latency as a CDF, a line per overlay, log time axis."""
    lines = room_cdf_points(frame)
    if not lines:
        return None
    figure, axes = plt.subplots(figsize=(6, 3.8))
    for label, points in lines.items():
        axes.plot(points.to_numpy(), points.index / 100, marker=".", label=label)
    matplotlib_log_axis(axes, "x", [v for points in lines.values() for v in points.to_numpy()])
    axes.set_xlabel("request latency (ms, log scale)")
    axes.set_ylabel("share of requests answered within")
    axes.set_title(title, fontsize=9)
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
