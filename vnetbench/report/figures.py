"""Interactive Plotly figures of a results directory, for report.html: every pass a
point whose hover says its pass, run id and settings; a trace (legend entry) per
overlay, so a click on the legend hides or shows an overlay; each scenario's
declared figures (vnetbench/declared/, the same list report.md draws: a metric
against a setting, the CDF of each pass's raw ping output, a distribution's
percentiles as a CDF); each swept parameter; failover's timelines; a method's
bytes over time."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from vnetbench.core.metrics import Better, Metric
from vnetbench.core.schema import (
    FAULT,
    INTERVAL_S,
    METHOD,
    METRIC,
    OVERLAY,
    PARAMETER_PREFIX,
    PASS,
    RUN_ID,
    SCENARIO,
    SETTING_PREFIX,
    UNIT,
    VALUE,
    VARIANT,
    setting_column,
)
from vnetbench.declared import DECLARATIONS, catalogue
from vnetbench.declared.declaration import AgainstSetting, FigureSpec, PercentileCdf, PingCdf
from vnetbench.declared.room import ROOM_FAULT_AT, ROOM_FAULT_END, ROOM_FAULT_TIMELINE
from vnetbench.declared.throughput import STREAM_TIMELINE
from vnetbench.declared.transfer import INTERVAL_BYTES_SUFFIX
from vnetbench.report.log_axes import LOG_SPAN, plotly_log_axis
from vnetbench.report.plots import axis_label, room_cdf_points, swept_columns, timelines
from vnetbench.report.raw import PingSample
from vnetbench.report.tables import measured_pass_values

SETTING_PREFIXES = (SETTING_PREFIX, PARAMETER_PREFIX)
ROOM_TIMELINE_P99 = ROOM_FAULT_TIMELINE[3]
HOVER = ("%{fullData.name}<br>pass %{customdata[0]}<br>run %{customdata[1]}<br>"
         "%{customdata[2]}<br>%{y:.4~r} UNIT<extra></extra>")
SETTINGS_PER_LINE = 4
# One colour per overlay on every page (the known ones fixed, others by name)
KNOWN_OVERLAYS = ("baseline", "vnet", "wireguard", "openvpn", "tinc", "nebula")
PALETTE: list[str] = list(qualitative.D3)


@dataclass(frozen=True)
class Figure:
    """A figure, the name a page gives it (its element id), and whether it is a
    headline plot (a plotted metric per overlay, drawn before the tables)."""

    name: str
    figure: go.Figure
    headline: bool = False


def colour(overlay: str) -> str:
    """The overlay's colour, the same in every figure and page."""
    if overlay in KNOWN_OVERLAYS:
        return PALETTE[KNOWN_OVERLAYS.index(overlay)]
    spare = PALETTE[len(KNOWN_OVERLAYS):]
    return spare[zlib.crc32(overlay.encode()) % len(spare)]


def settings_text(row: pd.Series) -> str:
    """A pass's settings (set_*, var_* columns), a few per hover line."""
    said = [f"{str(k).split('_', 1)[1]}={v}" for k, v in row.items()
            if str(k).startswith(SETTING_PREFIXES) and not _empty(v)]
    lines = [", ".join(said[i:i + SETTINGS_PER_LINE])
             for i in range(0, len(said), SETTINGS_PER_LINE)]
    return "<br>".join(lines) or "no settings recorded"


def _empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, float) and pd.isna(value))


def customdata(rows: pd.DataFrame) -> list[list[Any]]:
    return [[int(r[PASS]), str(r[RUN_ID]), settings_text(r)] for _, r in rows.iterrows()]


def layout(figure: go.Figure, title: str, x_title: str, y_title: str,
           values: Iterable[float] = ()) -> go.Figure:
    """The common look; a log y axis when the values span orders of magnitude."""
    positive = [v for v in values if v > 0]
    log = len(positive) > 1 and max(positive) / min(positive) > LOG_SPAN
    figure.update_layout(title={"text": title, "font": {"size": 14}}, template="plotly_white",
                         xaxis_title=x_title, yaxis_title=y_title, height=420,
                         legend_title_text="overlay (click to hide)",
                         margin={"l": 60, "r": 20, "t": 50, "b": 50}, hovermode="closest",
                         showlegend=True)
    if log:
        figure.update_yaxes(plotly_log_axis(positive))
    return figure


def per_pass_figure(frame: pd.DataFrame, metric: Metric) -> go.Figure | None:
    """A metric's every pass per variant, a trace per overlay."""
    rows = measured_pass_values(frame)
    rows = rows[rows[METRIC] == metric.name]
    if rows.empty:
        return None
    figure = go.Figure()
    for overlay, group in rows.groupby(OVERLAY, sort=False):
        figure.add_trace(go.Scatter(
            x=group[VARIANT].astype(str), y=group[VALUE], mode="markers",
            name=str(overlay), legendgroup=str(overlay), customdata=customdata(group),
            hovertemplate=HOVER.replace("UNIT", metric.unit),
            marker={"size": 9, "color": colour(str(overlay))}))
    figure.update_layout(scattermode="group")
    return layout(figure, f"{metric.headline or metric.name}: each pass", "variant",
                  metric.unit, rows[VALUE])


def against_figure(rows: pd.DataFrame, x_column: str, title: str,
                   x_label: str) -> go.Figure | None:
    """Passes against a numeric setting (join time against N, a sweep), a line
    through each overlay's means."""
    rows = rows[rows[x_column].notna()] if x_column in rows.columns else rows[:0]
    if rows.empty or rows[x_column].nunique() < 2:
        return None
    unit = str(rows[UNIT].iloc[0])
    figure = go.Figure()
    for overlay, group in rows.groupby(OVERLAY, sort=False):
        group = group.assign(x=group[x_column].astype(float)).sort_values("x")
        means = group.groupby("x")[VALUE].mean()
        figure.add_trace(go.Scatter(
            x=group["x"], y=group[VALUE], mode="markers", name=str(overlay),
            legendgroup=str(overlay), customdata=customdata(group),
            marker={"color": colour(str(overlay))}, hovertemplate=HOVER.replace("UNIT", unit)))
        figure.add_trace(go.Scatter(
            x=means.index, y=means.to_numpy(), mode="lines", name=f"{overlay} mean",
            legendgroup=str(overlay), showlegend=False, line={"color": colour(str(overlay))},
            hovertemplate=f"{overlay}: mean %{{y:.4~r}} {unit} at %{{x}}<extra></extra>"))
    return layout(figure, title, x_label, unit, rows[VALUE])


def cdf_figure(of_scenario: list[PingSample], title: str) -> go.Figure | None:
    """The round trips of each pass as a CDF, a line per pass, grouped per overlay."""
    if not of_scenario:
        return None
    figure = go.Figure()
    shown: set[str] = set()
    for sample in of_scenario:
        rtts = sorted(sample.rtts_ms)
        fractions = [(i + 1) / len(rtts) for i in range(len(rtts))]
        size = f", {sample.size}-byte payload" if sample.size else ""
        data = [[sample.pass_no, sample.run_id, f"variant {sample.variant}{size}; "
                 f"{sample.path.name}"]] * len(rtts)
        figure.add_trace(go.Scatter(
            x=rtts, y=fractions, mode="lines",
            line={"shape": "hv", "color": colour(sample.overlay)},
            name=sample.overlay, legendgroup=sample.overlay,
            showlegend=sample.overlay not in shown, customdata=data,
            hovertemplate=("%{fullData.name}<br>pass %{customdata[0]}<br>run "
                           "%{customdata[1]}<br>%{customdata[2]}<br>%{x:.3f} ms: "
                           "%{y:.0%} of replies<extra></extra>")))
        shown.add(sample.overlay)
    figure = layout(figure, title, "round trip (ms)", "fraction of replies")
    rtts = [r for s in of_scenario for r in s.rtts_ms if r > 0]
    if rtts and max(rtts) / min(rtts) > LOG_SPAN:
        figure.update_xaxes(plotly_log_axis(rtts))
    return figure


def percentile_cdf_figure(frame: pd.DataFrame, title: str) -> go.Figure | None:
    """The room's request latency percentiles as a CDF (mean over passes), a line per
    overlay and variant, log time axis."""
    lines = room_cdf_points(frame)
    if not lines:
        return None
    figure = go.Figure()
    for label, points in lines.items():
        overlay = label.split(" ", 1)[0]
        figure.add_trace(go.Scatter(
            x=points.to_numpy(), y=points.index / 100, mode="lines+markers", name=label,
            line={"color": colour(overlay)},
            hovertemplate=f"{label}<br>%{{y:.1%}} of requests within %{{x:.3f}} ms"
                          "<extra></extra>"))
    figure = layout(figure, title, "request latency (ms, log scale)",
                    "share of requests answered within")
    figure.update_xaxes(plotly_log_axis(v for points in lines.values()
                                        for v in points.to_numpy()))
    return figure


def scenario_figures(rows: pd.DataFrame, samples: list[PingSample]) -> list[Figure]:
    """Each registered scenario's declared figures that its rows (or raw files) can
    draw, in catalogue order, each by its declared name."""
    passes = measured_pass_values(rows)
    found = [(spec.name, scenario_figure(
        spec, rows[rows[SCENARIO] == declared.name],
        passes[passes[SCENARIO] == declared.name],
        [s for s in samples if s.scenario == declared.name]))
        for declared in DECLARATIONS for spec in declared.figures]
    return [Figure(name, figure) for name, figure in found if figure is not None]


def scenario_figure(spec: FigureSpec, rows: pd.DataFrame, passes: pd.DataFrame,
                    samples: list[PingSample]) -> go.Figure | None:
    """One declared figure of a scenario's rows, measured passes and ping samples."""
    match spec:
        case AgainstSetting():
            return against_figure(passes[passes[METRIC] == spec.metric.name],
                                  setting_column(spec.setting), spec.title, spec.axis)
        case PingCdf():
            return cdf_figure(samples, spec.title)
        case PercentileCdf():
            return percentile_cdf_figure(rows, spec.title)


def series_figures(frame: pd.DataFrame, method: str) -> Iterator[Figure]:
    """Per step of a method: MiB moved against time, a line per overlay, direction and
    pass (from the per-interval byte rows)."""
    if INTERVAL_S not in frame.columns:
        return
    points = frame[(frame[METHOD] == method) & frame[INTERVAL_S].notna()
                   & frame[METRIC].astype(str).str.endswith(INTERVAL_BYTES_SUFFIX)]
    for variant, of_step in points.groupby(VARIANT, sort=False):
        figure = go.Figure()
        shown: set[str] = set()
        for (overlay, metric, _), line in of_step.groupby([OVERLAY, METRIC, PASS],
                                                          sort=False):
            line = line.sort_values(INTERVAL_S)
            direction = str(metric).removesuffix(INTERVAL_BYTES_SUFFIX)
            figure.add_trace(go.Scatter(
                x=line[INTERVAL_S], y=line[VALUE].cumsum() / 2**20, mode="lines",
                name=str(overlay), legendgroup=str(overlay),
                showlegend=str(overlay) not in shown, customdata=customdata(line),
                line={"dash": "solid" if direction == "upload" else "dash",
                      "color": colour(str(overlay))},
                hovertemplate=HOVER.replace("UNIT", f"MiB {direction}ed")))
            shown.add(str(overlay))
        yield Figure(f"{method}-{variant}", layout(
            figure, f"{method}, {variant}: bytes over time (a line per pass and direction)",
            "seconds since the direction began", "MiB moved"))


def report_figures(frame: pd.DataFrame, summary: pd.DataFrame,
                   samples: list[PingSample]) -> list[Figure]:
    """The results' own figures (no method's): each plotted metric per pass, each
    scenario's declared figures, each swept parameter, failover's timelines."""
    metrics = catalogue()
    rows = frame[frame[METHOD] == ""]
    passes = measured_pass_values(rows)
    headline = [Figure(m.name, figure, headline=True) for m in metrics
                if m.plot and (figure := per_pass_figure(rows, m)) is not None]
    found: list[tuple[str, go.Figure | None]] = []
    for column in swept_columns(summary):
        for metric in metrics:
            if metric.headline and metric.better is not Better.NEITHER:
                found.append((f"sweep-{column}-{metric.name}", against_figure(
                    passes[passes[METRIC] == metric.name], column,
                    f"{metric.headline} against {axis_label(column)}", axis_label(column))))
    found += timeline_figures(rows)
    found += schedule_timeline_figures(rows)
    return headline + scenario_figures(rows, samples) + [
        Figure(name, figure) for name, figure in found if figure is not None]


def timeline_figures(frame: pd.DataFrame) -> list[tuple[str, go.Figure | None]]:
    """failover: per overlay and fault, the share of 10 ms probes answered per 0.1 s
    (a line per pass), the instants the fault took effect and was lifted dashed."""
    found: list[tuple[str, go.Figure | None]] = []
    for (overlay, fault), passes in timelines(frame).items():
        figure = go.Figure()
        for number, one in enumerate(passes, start=1):
            figure.add_trace(go.Scatter(x=one.line[INTERVAL_S], y=one.line[VALUE],
                                        mode="lines",
                                        line={"shape": "hv", "color": colour(overlay)},
                                        name=f"pass {number}"))
            for at, mark in ((one.start, "red"), (one.end, "green")):
                if at == at:  # not NaN
                    figure.add_vline(x=at, line_dash="dash", line_color=mark)
        found.append((f"failover-{overlay}-{fault}", layout(
            figure, f"failover on {overlay}, {fault}: probes answered (red: the fault in "
            "effect, green: lifted)",
            "seconds since the probe began", "share of probes answered")))
    return found


@dataclass(frozen=True)
class ScheduleTimeline:
    """A scenario's timeline under a schedule of faults: its metric per 100 ms, the
    metrics placing each event's effective start and end on the same axis."""

    scenario: str
    metric: str
    axis: str
    at: str
    end: str


SCHEDULE_TIMELINES = (
    ScheduleTimeline("room", ROOM_TIMELINE_P99, "p99 of requests due per 100 ms (ms)",
                     ROOM_FAULT_AT, ROOM_FAULT_END),
    ScheduleTimeline("throughput", STREAM_TIMELINE, "stream rate per 100 ms (Mbit/s)",
                     "stream_fault_at_s", "stream_fault_end_s"),
)


def schedule_timeline_figures(frame: pd.DataFrame) -> list[tuple[str, go.Figure | None]]:
    """Per scenario run under a schedule of faults and overlay: its timeline, a line per
    pass, each event's effective start (red) and end (green) dashed and named."""
    if INTERVAL_S not in frame.columns or FAULT not in frame.columns:
        return []
    found: list[tuple[str, go.Figure | None]] = []
    for spec in SCHEDULE_TIMELINES:
        points = frame[frame[INTERVAL_S].notna() & (frame[METRIC] == spec.metric)]
        marks = frame[frame[INTERVAL_S].isna() & frame[METRIC].isin([spec.at, spec.end])]
        for overlay, lines in points.groupby(OVERLAY, sort=False):
            figure = go.Figure()
            for pass_no, line in lines.groupby(PASS, sort=False):
                line = line.sort_values(INTERVAL_S)
                figure.add_trace(go.Scatter(
                    x=line[INTERVAL_S], y=line[VALUE], mode="lines", name=f"pass {pass_no}",
                    line={"shape": "hv", "color": colour(str(overlay))}))
            mine = marks[marks[OVERLAY] == overlay].drop_duplicates([METRIC, FAULT])
            for metric, fault, at in zip(mine[METRIC], mine[FAULT], mine[VALUE], strict=True):
                named = {"annotation_text": str(fault)} if metric == spec.at else {}
                figure.add_vline(x=at, line_dash="dash",
                                 line_color="red" if named else "green", **named)
            found.append((f"{spec.scenario}-faults-{overlay}", layout(
                figure, f"{spec.scenario} on {overlay} under its faults (red: in effect, "
                "green: lifted)", "seconds since the load began", spec.axis)))
    return found
