"""`vnetbench history DIR...`: the headline metrics across results directories (one
per build or day), on one page (history.html): a graph per headline metric, a
point per directory (the mean over its passes, whiskers lowest to highest pass),
ordered by date (run.json `started`) or by build label. A change between two
consecutive directories beyond this machine's noise floor (an A/A's noise.json:
the largest difference between two bring-ups of one build) is marked, and every
change is listed with its ratio and whether it is beyond that floor. Without a
noise floor the page says none was measured and marks nothing: two sessions
differ by more than their passes' spread, so a ratio alone is no verdict.
Change points over each whole series (history_changes.py) are marked with their
label, size and p, and listed; `--json` prints them with the series."""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from vnetbench.analysis.results import find_results
from vnetbench.analysis.runrecord import RunRecord
from vnetbench.core.metrics import Better
from vnetbench.core.schema import CELL, METRIC, OVERLAY, SCENARIO, UNIT, VARIANT
from vnetbench.declared import catalogue
from vnetbench.errors import UserError
from vnetbench.files import write_text_atomic
from vnetbench.report.ab import noise_near
from vnetbench.report.document import Block, Heading, Table, Text, load_directory
from vnetbench.report.figures import Figure, colour, layout
from vnetbench.report.history_changes import (
    Shift,
    find_shifts,
    history_json,
    method_text,
    shift_text,
    shifts_table,
)
from vnetbench.report.html import figure_grid, page, render_block
from vnetbench.report.options import LabelFrom, Order
from vnetbench.report.tables import number, ratio_to, summary_table
from vnetbench.runtime.rundir import writable_directory

HISTORY = "history.html"
SERIES = list(CELL)


@dataclass(frozen=True)
class Build:
    """One results directory on the page."""

    directory: Path
    label: str
    started: datetime | None
    summary: pd.DataFrame


def results_directories(paths: Sequence[Path]) -> list[Path]:
    """Each path a results directory, or a root whose subdirectories are: two or more."""
    unique = find_results(paths)
    if len(unique) < 2:
        raise UserError(f"history needs two or more results directories; found "
                        f"{len(unique)} ({', '.join(map(str, unique))}). Give more, or a "
                        "root that holds several.")
    return unique


def started(record: RunRecord) -> datetime | None:
    try:
        return datetime.fromisoformat(str(record.started))
    except ValueError:
        return None


def short_id(image_id: str) -> str:
    return image_id.removeprefix("sha256:")[:12]


def build_label(directory: Path, record: RunRecord, how: LabelFrom) -> str:
    """The directory's label on the x axis: its date, or its vNet or tools image."""
    images = record.images
    if how is LabelFrom.DATE:
        when = started(record)
        return when.strftime("%Y-%m-%d %H:%M") if when else directory.name
    if how is LabelFrom.TOOLS and (images.get("tools") or {}).get("id"):
        return short_id(str(images["tools"]["id"]))
    if how is LabelFrom.VNET:
        vnet = next((facts for name, facts in images.items() if name.startswith("vnet")
                     and isinstance(facts, dict) and facts.get("id")), None)
        if vnet:
            return short_id(str(vnet["id"]))
        version = record.overlays.get("vnet", {}).get("version")
        if version:
            return str(version)
    raise UserError(f"{directory}/run.json names no {how.value} image to label it with: "
                    f"give it a label with --label {directory}=TEXT, or --label-from date.")


def parse_labels(given: Sequence[str], directories: Sequence[Path]) -> dict[Path, str]:
    """--label DIR=TEXT, each DIR one of the directories given."""
    labels: dict[Path, str] = {}
    for text in given:
        name, sep, label = text.partition("=")
        path = Path(name).resolve()
        if not sep or not label or path not in directories:
            raise UserError(f"--label {text}: give DIR=TEXT with DIR one of the results "
                            f"directories shown ({', '.join(map(str, directories))}).")
        if path in labels:
            raise UserError(f"--label {text}: {name} is labelled twice ({labels[path]!r} "
                            "first). Give each directory one --label.")
        labels[path] = label
    return labels


def natural(text: str) -> list[Any]:
    """'build 10' after 'build 9'."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def read_builds(directories: Sequence[Path], how: LabelFrom, labels: dict[Path, str],
                order: Order) -> list[Build]:
    """Each directory's headline summary, in the page's order, labels made unique."""
    builds = []
    for directory in directories:
        record, frame = load_directory(directory)
        label = labels.get(directory) or build_label(directory, record, how)
        builds.append(Build(directory, label, started(record), headline_summary(frame)))
    if order is Order.LABEL:
        builds.sort(key=lambda b: natural(b.label))
    else:
        builds.sort(key=lambda b: (b.started is None, b.started and b.started.timestamp()))
    seen: dict[str, int] = {}
    unique = []
    for build in builds:
        seen[build.label] = seen.get(build.label, 0) + 1
        count = seen[build.label]
        unique.append(build if count == 1 else Build(
            build.directory, f"{build.label} ({count})", build.started, build.summary))
    return unique


def headline_summary(frame: pd.DataFrame) -> pd.DataFrame:
    summary = summary_table(frame)
    metrics = catalogue()
    return summary[summary[METRIC].map(lambda m: metrics.headline(str(m)) is not None)
                   .astype(bool)]


def points(builds: Sequence[Build]) -> pd.DataFrame:
    """One row per series (scenario, overlay, variant, metric) and directory."""
    rows = [{**{k: r[k] for k in [*SERIES, METRIC, UNIT, "n", "mean", "low", "high"]},
             "position": position, "label": build.label, "directory": str(build.directory),
             "started": build.started.isoformat() if build.started else "?"}
            for position, build in enumerate(builds)
            for r in build.summary.to_dict("records")]
    return pd.DataFrame(rows, columns=[*SERIES, METRIC, UNIT, "n", "mean", "low", "high",
                                       "position", "label", "directory", "started"])


def ratio(old: float, new: float, metric: str = "") -> float:
    """new/old, NaN where a ratio says nothing (tables.ratio_to: from zero or below, or
    of a difference such as latency added under load); 1 from zero to zero."""
    if old == 0 and new == 0:
        return 1.0
    moved = ratio_to(new, old, metric)
    return math.nan if moved is None else moved


def changes(table: pd.DataFrame, noise: dict[str, float]) -> pd.DataFrame:
    """Between consecutive directories of each series: from, to, ratio and whether it
    lies beyond the noise floor (None: no floor for it)."""
    metrics = catalogue()
    rows = []
    for key, series in table.groupby([*SERIES, METRIC], sort=False):
        scenario, overlay, variant, metric = (str(k) for k in key)
        floor = noise.get(f"{scenario}/{overlay}/{metric}")
        ordered = series.sort_values("position").to_dict("records")
        for old, new in pairwise(ordered):
            moved = ratio(float(old["mean"]), float(new["mean"]), metric)
            beyond = (None if floor is None or math.isnan(moved)
                      else abs(moved - 1) * 100 > floor)
            rows.append({SCENARIO: scenario, OVERLAY: overlay, VARIANT: variant,
                         METRIC: metric, UNIT: new[UNIT], "from": old["label"],
                         "to": new["label"], "position": new["position"],
                         "from_value": old["mean"], "to_value": new["mean"], "ratio": moved,
                         "noise_pct": floor, "beyond_noise": beyond,
                         "direction": direction(metrics.better(metric), moved)})
    return pd.DataFrame(rows, columns=[*SERIES, METRIC, UNIT, "from", "to", "position",
                                       "from_value", "to_value", "ratio", "noise_pct",
                                       "beyond_noise", "direction"])


def direction(better: Better, moved: float) -> str:
    if math.isnan(moved) or moved == 1 or better is Better.NEITHER:
        return "-"
    return "better" if (moved > 1) == (better is Better.HIGHER) else "worse"


def change_text(change: dict[Hashable, Any], floor_known: bool) -> str:
    """A change as its hover says it: 'x0.700 from LABEL, worse, beyond ...'."""
    if math.isnan(change["ratio"]):
        difference = float(change["to_value"]) - float(change["from_value"])
        return (f"{difference:+.3g} {change[UNIT]} (difference) from {change['from']}: no "
                "ratio (from zero or below, or a difference)")
    said = [f"x{change['ratio']:.3f} from {change['from']}"]
    if change["direction"] != "-":
        said.append(str(change["direction"]))
    if change["beyond_noise"] is None:
        said.append("no noise floor for it" if floor_known else "no noise floor measured")
    else:
        side = "beyond" if change["beyond_noise"] else "within"
        said.append(f"{side} the noise floor of ±{change['noise_pct']:.1f} %")
    return ", ".join(said)


def history_figure(table: pd.DataFrame, found: pd.DataFrame, shifts: Sequence[Shift],
                   title: str, labels: list[str], floor_known: bool) -> go.Figure:
    """One headline metric across the directories: a line per overlay and variant,
    each point's change from the one before in its hover, those beyond the noise
    floor ringed, the change points marked with their size and p."""
    figure = go.Figure()
    unit = str(table[UNIT].iloc[0])
    said = {(str(c[OVERLAY]), str(c[VARIANT]), int(c["position"])):
            change_text(c, floor_known) for c in found.to_dict("records")}
    for (overlay, variant), series in table.groupby([OVERLAY, VARIANT], sort=False):
        series = series.sort_values("position")
        series = series.assign(change=[
            said.get((str(overlay), str(variant), int(p)), "the first directory")
            for p in series["position"]])
        name = str(overlay) if variant == "default" else f"{overlay} {variant}"
        figure.add_trace(go.Scatter(
            x=series["label"], y=series["mean"], mode="lines+markers", name=name,
            legendgroup=str(overlay), line={"color": colour(str(overlay))},
            error_y={"type": "data", "symmetric": False,
                     "array": series["high"] - series["mean"],
                     "arrayminus": series["mean"] - series["low"]},
            customdata=series[["directory", "started", "n", "low", "high", "change"]]
            .to_numpy(),
            hovertemplate=(f"{name}<br>%{{x}}: mean %{{y:.4~r}} {unit}<br>%{{customdata[5]}}"
                           "<br>passes %{customdata[2]}, lowest %{customdata[3]:.4~r}, "
                           "highest %{customdata[4]:.4~r}<br>%{customdata[0]}<br>started "
                           "%{customdata[1]}<extra></extra>")))
    moved = found[found["beyond_noise"] == True]  # noqa: E712 (None is neither)
    if not moved.empty:
        figure.add_trace(go.Scatter(
            x=moved["to"], y=moved["to_value"], mode="markers", name="beyond noise",
            marker={"symbol": "circle-open", "size": 18, "color": "#b3261e",
                    "line": {"width": 2}}, hoverinfo="skip"))
    if shifts:
        figure.add_trace(shifts_trace(table, shifts))
    figure = layout(figure, title, "results directory", unit, table["mean"])
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=labels)
    return figure


def shifts_trace(table: pd.DataFrame, shifts: Sequence[Shift]) -> go.Scatter:
    """The change points: a diamond on the first point of each new level, its change
    and p written beside it."""
    means = {(str(r[OVERLAY]), str(r[VARIANT]), int(r["position"])): float(r["mean"])
             for r in table.to_dict("records")}
    return go.Scatter(
        x=[s.label for s in shifts],
        y=[means[(s.overlay, s.variant, s.position)] for s in shifts],
        mode="markers+text", name="change point", text=[shift_text(s) for s in shifts],
        textposition="top center",
        marker={"symbol": "diamond-open", "size": 16, "color": "#6a1b9a",
                "line": {"width": 2}},
        hovertext=[f"change point at {s.label} ({s.overlay} {s.variant}): "
                   f"{shift_text(s)}, {s.direction}; floor ±{s.floor.pct:.1f} %"
                   + ("" if s.floor.measured else " (default)") for s in shifts],
        hoverinfo="text")


def changes_table(found: pd.DataFrame, floor_known: bool) -> pd.DataFrame:
    """The changes as people read them."""
    labels = catalogue()
    def beyond(value: bool | None) -> str:
        if value is None:
            return "no floor for it" if floor_known else "no floor measured"
        return "yes" if value else "no"
    return pd.DataFrame({
        "metric": [f"{r[SCENARIO]}/{r[OVERLAY]}/{r[VARIANT]}: {labels.label(str(r[METRIC]))}"
                   for r in found.to_dict("records")],
        "from": found["from"], "to": found["to"],
        "from value": [f"{number(v)} {u}" for v, u in zip(found["from_value"], found[UNIT],
                                                           strict=True)],
        "to value": [f"{number(v)} {u}" for v, u in zip(found["to_value"], found[UNIT],
                                                         strict=True)],
        "ratio": found["ratio"].map(lambda r: "-" if math.isnan(r) else f"{r:.3f}"),
        "noise floor": found["noise_pct"].map(lambda v: "-" if pd.isna(v) else f"±{v:.1f} %"),
        "beyond noise": found["beyond_noise"].map(beyond),
        "direction": found["direction"],
    })


@dataclass(frozen=True)
class History:
    """What `history` wrote, and what `--json` prints."""

    path: Path
    json: str


def build_history(paths: Sequence[Path], out: Path, noise_dir: Path | None,
                  how: LabelFrom, given_labels: Sequence[str], order: Order) -> History:
    """Write history.html into `out`."""
    directories = results_directories(paths)
    builds = read_builds(directories, how, parse_labels(given_labels, directories), order)
    noise, source = noise_near(noise_dir, [b.directory for b in builds])
    table = points(builds)
    check_in_common(table, builds)
    found = changes(table, noise)
    shifts = find_shifts(table, noise)
    noise_text = (f"Noise floor: {source}. A change is marked when the ratio of the means "
                  "lies beyond it." if noise else f"Noise floor: {source}. No change is "
                  "marked.")
    head: list[Block] = [
        Heading(f"vnetbench history: {len(builds)} results directories", 1),
        Text(f"Each point is a directory's mean over its passes, its whiskers the lowest "
             f"and highest pass; ordered by {order.value}. {noise_text}"),
        Heading("Directories"), Table(directories_table(builds)), Heading("Headline metrics")]
    moved = found[found["beyond_noise"] == True]  # noqa: E712 (None is neither)
    tail: list[Block] = [
        Heading("Changes"),
        Text(f"{len(moved)} of {len(found)} changes between consecutive directories lie "
             "beyond the noise floor."),
        Table(changes_table(found, bool(noise))),
        Heading("Change points"),
        Text(f"{len(shifts)} change points. "
             f"{method_text(any(not s.floor.measured for s in shifts) or not noise)}"),
        Table(shifts_table(shifts))]
    figures = history_figures(table, found, shifts, builds, bool(noise))
    body = [*map(render_block, head), figure_grid(figures), *map(render_block, tail)]
    path = writable_directory(out, "--out") / HISTORY
    write_text_atomic(path, page(f"vnetbench history ({len(builds)} directories)", body, []))
    return History(path, history_json(directories_table(builds), table, shifts, noise,
                                      source, str(path)))


def check_in_common(table: pd.DataFrame, builds: Sequence[Build]) -> None:
    """Refused when no headline series is in two directories: the page would have no
    line to read, and exit 0 said it was made."""
    if not table.empty and (table.groupby([*SERIES, METRIC])["position"].nunique() > 1).any():
        return
    cells = [f"{b.directory}: {', '.join(cell_names(b.summary)) or 'no headline metric'}"
             for b in builds]
    raise UserError(f"history: no headline metric was measured in two of the directories "
                    f"({'; '.join(cells)}), so there is no series to draw. Give directories "
                    "of the same scenario on the same overlay (builds of one benchmark).")


def cell_names(summary: pd.DataFrame) -> list[str]:
    """['throughput/baseline/default', ...]: a summary's cells."""
    return sorted({"/".join(str(part) for part in cell if part) for cell in zip(
        summary[SCENARIO], summary[OVERLAY], summary[VARIANT], strict=True)})


def history_figures(table: pd.DataFrame, found: pd.DataFrame, shifts: Sequence[Shift],
                    builds: Sequence[Build], floor_known: bool) -> list[Figure]:
    """A figure per scenario and headline metric."""
    labels = [b.label for b in builds]
    return [Figure(f"{scenario}-{metric}", history_figure(
        series, found[(found[SCENARIO] == scenario) & (found[METRIC] == metric)],
        [s for s in shifts if (s.scenario, s.metric) == (scenario, metric)],
        f"{scenario}: {catalogue().label(str(metric))}", labels, floor_known))
        for (scenario, metric), series in table.groupby([SCENARIO, METRIC], sort=False)]


def directories_table(builds: Sequence[Build]) -> pd.DataFrame:
    return pd.DataFrame({"label": [b.label for b in builds],
                         "directory": [str(b.directory) for b in builds],
                         "started": [b.started.isoformat() if b.started else "?"
                                     for b in builds]})
