"""Interactive Plotly figures of a results directory, for report.html: every pass a
point whose hover says its pass, run id and settings; a trace (legend entry) per
overlay, so a click on the legend hides or shows an overlay; each scenario's
declared figures (vnetbench/declared/, the same list report.md draws: a metric
against a setting, the CDF of each pass's raw ping output, a distribution's
percentiles as a CDF, a timeline under faults, a running sum over time); each swept
parameter; a method's declared running sums per step. No scenario is named here."""

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
from vnetbench.declared.declaration import (
    AgainstSetting,
    Cumulative,
    FigureSpec,
    PercentileCdf,
    PingCdf,
    Timeline,
)
from vnetbench.report.log_axes import LOG_SPAN, plotly_log_axis
from vnetbench.report.plots import (
    axis_label,
    cumulative_points,
    fault_timelines,
    percentile_points,
    schedule_timelines,
    swept_columns,
)
from vnetbench.report.raw import PingSample
from vnetbench.report.tables import measured_pass_values

SETTING_PREFIXES = (SETTING_PREFIX, PARAMETER_PREFIX)
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


def percentile_cdf_figure(frame: pd.DataFrame, spec: PercentileCdf) -> go.Figure | None:
    """A declared distribution's percentiles as a CDF (mean over passes), a line per
    overlay and variant, log value axis."""
    lines = percentile_points(frame, spec.metric)
    if not lines:
        return None
    unit = str(frame[frame[METRIC] == spec.metric][UNIT].iloc[0])
    figure = go.Figure()
    for label, points in lines.items():
        overlay = label.split(" ", 1)[0]
        figure.add_trace(go.Scatter(
            x=points.to_numpy(), y=points.index / 100, mode="lines+markers", name=label,
            line={"color": colour(overlay)},
            hovertemplate=f"{label}<br>%{{y:.1%}} of {spec.items} within %{{x:.3f}} "
                          f"{unit}<extra></extra>"))
    figure = layout(figure, spec.title, spec.axis, spec.share)
    figure.update_xaxes(plotly_log_axis(v for points in lines.values()
                                        for v in points.to_numpy()))
    return figure


def scenario_figures(rows: pd.DataFrame, samples: list[PingSample]) -> list[Figure]:
    """Each registered scenario's declared figures that its rows (or raw files) can
    draw, in catalogue order, each by its declared name."""
    passes = measured_pass_values(rows)
    found = [named for declared in DECLARATIONS for spec in declared.figures
             for named in scenario_figure(
                 spec, declared.name, rows[rows[SCENARIO] == declared.name],
                 passes[passes[SCENARIO] == declared.name],
                 [s for s in samples if s.scenario == declared.name])]
    return [Figure(name, figure) for name, figure in found if figure is not None]


def scenario_figure(spec: FigureSpec, scenario: str, rows: pd.DataFrame,
                    passes: pd.DataFrame, samples: list[PingSample]
                    ) -> list[tuple[str, go.Figure | None]]:
    """One declared figure of a scenario's rows, measured passes and ping samples,
    each by its name (a timeline one per overlay and fault, or per overlay; a running
    sum one per variant)."""
    match spec:
        case AgainstSetting():
            return [(spec.name, against_figure(passes[passes[METRIC] == spec.metric.name],
                                               setting_column(spec.setting), spec.title,
                                               spec.axis))]
        case PingCdf():
            return [(spec.name, cdf_figure(samples, spec.title))]
        case PercentileCdf():
            return [(spec.name, percentile_cdf_figure(rows, spec))]
        case Timeline():
            return (fault_timeline_figures(rows, spec) if spec.per_fault
                    else schedule_timeline_figures(rows, spec))
        case Cumulative():
            return [(f.name, f.figure) for f in cumulative_figures(rows, spec, scenario)]


def series_figures(frame: pd.DataFrame, method: str) -> Iterator[Figure]:
    """A method's section: per step, the running sums its scenarios declare."""
    rows = frame[frame[METHOD] == method]
    for declared in DECLARATIONS:
        for spec in declared.figures:
            if isinstance(spec, Cumulative):
                yield from cumulative_figures(rows[rows[SCENARIO] == declared.name], spec,
                                              method)


def cumulative_figures(frame: pd.DataFrame, spec: Cumulative, of: str) -> Iterator[Figure]:
    """Per step (variant): the running sum against time, a line per overlay, series
    and pass (the first series solid, the others dashed), each named OF-VARIANT."""
    labels = dict(spec.series)
    for variant, of_step in cumulative_points(frame, spec).groupby(VARIANT, sort=False):
        figure = go.Figure()
        shown: set[str] = set()
        for (overlay, metric, _), line in of_step.groupby([OVERLAY, METRIC, PASS],
                                                          sort=False):
            line = line.sort_values(INTERVAL_S)
            label = labels[str(metric)]
            figure.add_trace(go.Scatter(
                x=line[INTERVAL_S], y=line[VALUE].cumsum() / spec.scale, mode="lines",
                name=str(overlay), legendgroup=str(overlay),
                showlegend=str(overlay) not in shown, customdata=customdata(line),
                line={"dash": "solid" if metric == spec.series[0][0] else "dash",
                      "color": colour(str(overlay))},
                hovertemplate=HOVER.replace("UNIT", f"{spec.unit} {label}ed")))
            shown.add(str(overlay))
        yield Figure(f"{of}-{variant}", layout(
            figure, spec.title.format(of=of, variant=variant)
            + " (a line per pass and direction)", spec.time_axis, spec.axis))


def report_figures(frame: pd.DataFrame, summary: pd.DataFrame,
                   samples: list[PingSample]) -> list[Figure]:
    """The results' own figures (no method's): each plotted metric per pass, each
    scenario's declared figures, each swept parameter."""
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
    return headline + scenario_figures(rows, samples) + [
        Figure(name, figure) for name, figure in found if figure is not None]


def fault_timeline_figures(frame: pd.DataFrame, spec: Timeline
                           ) -> list[tuple[str, go.Figure | None]]:
    """A per-fault timeline: per overlay and fault, a line per pass, the instants its
    fault took effect and was lifted dashed."""
    found: list[tuple[str, go.Figure | None]] = []
    for (overlay, fault), passes in fault_timelines(frame, spec).items():
        figure = go.Figure()
        for number, one in enumerate(passes, start=1):
            figure.add_trace(go.Scatter(x=one.line[INTERVAL_S], y=one.line[VALUE],
                                        mode="lines",
                                        line={"shape": "hv", "color": colour(overlay)},
                                        name=f"pass {number}"))
            for at, mark in ((one.start, "red"), (one.end, "green")):
                if at == at:  # not NaN
                    figure.add_vline(x=at, line_dash="dash", line_color=mark)
        found.append((f"{spec.name}-{overlay}-{fault}", layout(
            figure, f"{spec.title.format(overlay=overlay)}, {fault} (red: the fault in "
            "effect, green: lifted)", spec.time_axis, spec.axis)))
    return found


def schedule_timeline_figures(frame: pd.DataFrame, spec: Timeline
                              ) -> list[tuple[str, go.Figure | None]]:
    """A timeline under a schedule of faults: per overlay, a line per pass, each
    event's effective start (red) and end (green) dashed and named."""
    found: list[tuple[str, go.Figure | None]] = []
    for overlay, (passes, marks) in schedule_timelines(frame, spec).items():
        figure = go.Figure()
        for pass_no, line in passes:
            figure.add_trace(go.Scatter(
                x=line[INTERVAL_S], y=line[VALUE], mode="lines", name=f"pass {pass_no}",
                line={"shape": "hv", "color": colour(overlay)}))
        for mark in marks:
            named = {} if mark.lifted else {"annotation_text": mark.fault}
            figure.add_vline(x=mark.at, line_dash="dash",
                             line_color="green" if mark.lifted else "red", **named)
        found.append((f"{spec.name}-{overlay}", layout(
            figure, f"{spec.title.format(overlay=overlay)} (red: in effect, green: lifted)",
            spec.time_axis, spec.axis)))
    return found
