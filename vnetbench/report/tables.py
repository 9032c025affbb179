"""Summary tables over passes: the seed's "Measurement | Result" with ranges."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from vnetbench.methods import Method
from vnetbench.metrics import OUTSIDE_LOAD, catalogue
from vnetbench.outcome import State
from vnetbench.stats import format_range, summarise

GROUP = ["scenario", "overlay", "variant", "metric", "unit"]
# Columns that describe a row's settings and ride along into the summary: the
# variant's own parameters (var_*) and the size of a join or config (set_machines).
CARRIED_PREFIX = "var_"
CARRIED = ("set_machines",)


def carried_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if str(c).startswith(CARRIED_PREFIX) or c in CARRIED]


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (scenario, overlay, variant, metric): n, mean, range, CV."""
    measured = measured_pass_values(frame)
    carried = carried_columns(frame)
    rows = []
    for key, group in measured.groupby(GROUP, sort=False):
        scenario, overlay, variant, metric, unit = key
        summary = summarise(group["value"])
        rows.append({"scenario": scenario, "overlay": overlay, "variant": variant,
                     "metric": metric, "unit": unit, "n": summary.n, "mean": summary.mean,
                     "low": summary.low, "high": summary.high, "cv": summary.cv,
                     "result": format_range(summary, str(unit)),
                     **{c: group[c].iloc[0] for c in carried}})
    return pd.DataFrame(rows, columns=[*GROUP, "n", "mean", "low", "high", "cv", "result",
                                       *carried])


def pass_values(frame: pd.DataFrame) -> pd.Series:
    """Rows holding a pass's own value, not a point of a time series (interval_s)."""
    if "interval_s" not in frame.columns:
        return pd.Series(True, index=frame.index)
    return frame["interval_s"].isna()


def measured_pass_values(frame: pd.DataFrame) -> pd.DataFrame:
    """A pass's own measured values: no time-series point, no pass that measured
    nothing (failed, dead, not run), no empty value."""
    measured = frame["state"].map(lambda s: State(s).measured).astype(bool)
    return frame[measured & pass_values(frame)].dropna(subset=["value"])


def headline_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed-style table: Measurement | Result | n | CV, headline metrics only."""
    metrics = catalogue()
    labels = summary["metric"].map(lambda m: metrics.headline(str(m)))
    picked = summary[labels.notna()].assign(
        label=labels, order=summary["metric"].map(lambda m: metrics.order(str(m))))
    picked = picked.sort_values(["scenario", "order", "overlay", "variant"])
    measurement = picked.apply(_measurement_name, axis=1)
    return pd.DataFrame({
        "Measurement": measurement, "Result": picked["result"], "n": picked["n"],
        "CV": picked["cv"].map(lambda v: "-" if pd.isna(v) else f"{100 * v:.1f} %"),
    }).reset_index(drop=True)


def overlay_tables(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per scenario, as published benchmarks print them: one row per measurement
    (headline metric and variant), one column per overlay with the range over
    passes, n, CV and, for throughput and RTT, the ratio to the baseline."""
    metrics = catalogue()
    labels = summary["metric"].map(lambda m: metrics.headline(str(m)))
    picked = summary[labels.notna()].assign(
        label=labels, order=summary["metric"].map(lambda m: metrics.order(str(m))))
    ratios: dict[tuple[str, str, str, str], float] = {
        (str(r["scenario"]), str(r["overlay"]), str(r["variant"]), str(r["metric"])):
        float(r["ratio"]) for r in baseline_ratios(summary).to_dict("records")}
    overlays = list(dict.fromkeys(picked["overlay"]))
    tables = {}
    for scenario, rows in picked.sort_values(["order", "variant"]).groupby(
            "scenario", sort=False):
        table = []
        for (label, variant), group in rows.groupby(["label", "variant"], sort=False):
            row = {"measurement": label, "variant": variant}
            for record in group.to_dict("records"):
                key = (str(scenario), str(record["overlay"]), str(variant),
                       str(record["metric"]))
                row[str(record["overlay"])] = overlay_cell(record, ratios.get(key))
            table.append(row)
        present = [o for o in overlays if any(o in r for r in table)]
        tables[str(scenario)] = pd.DataFrame(table, columns=["measurement", "variant",
                                                             *present]).fillna("-")
    return tables


def method_table(frame: pd.DataFrame, method: Method, compact: bool = False) -> pd.DataFrame:
    """A method's table as its reference prints it: a row per step and measurement,
    a column per overlay (range, n, CV; rates and times also against the native
    path of the same step); a status row where an overlay has no numbers or was
    measured otherwise than asked. `compact` (a terminal): ranges and ratios only."""
    rows = frame[frame["method"] == method.name] if "method" in frame.columns else frame[:0]
    summary = summary_table(rows)
    metrics = catalogue()
    overlays = list(dict.fromkeys(rows["overlay"]))
    table = []
    for step in method.steps:
        of_step = summary[summary["variant"] == step.label]
        for metric in method.rows:
            picked = of_step[of_step["metric"] == metric]
            if picked.empty:
                continue
            native = picked[picked["overlay"] == "baseline"]["mean"]
            reference = (float(native.iloc[0]) if len(native)
                         and str(picked["unit"].iloc[0]) in RATIO_UNITS else None)
            row = {"step": step.label, "measurement": metrics.label(metric)}
            for record in picked.to_dict("records"):
                ratio = (float(record["mean"]) / reference if reference
                         and record["overlay"] != "baseline" else None)
                cell = overlay_cell(record, ratio, "native", detail=not compact)
                row[str(record["overlay"])] = cell
            table.append(row)
        table += step_status(rows[rows["variant"] == step.label], step.label, compact)
    present = [o for o in overlays if any(o in r for r in table)]
    return pd.DataFrame(table, columns=["step", "measurement", *present]).fillna("-")


def outside_load_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per scenario, overlay and variant: the CPU the host spent outside the testbed
    during its passes (lowest to highest), and which passes were marked for it."""
    rows = frame[frame["metric"] == OUTSIDE_LOAD.name].dropna(subset=["value"])
    if rows.empty:
        return pd.DataFrame({"outside load": ["not recorded (results from before it was)"]})
    table = []
    for (scenario, overlay, variant), group in rows.groupby(
            ["scenario", "overlay", "variant"], sort=False):
        marked = group[group["status"].str.contains("under outside load", regex=False)]
        table.append({"scenario": scenario, "overlay": overlay, "variant": variant,
                      "cores outside the testbed": format_range(summarise(group["value"])),
                      "passes marked": ", ".join(str(p) for p in marked["pass"]) or "none"})
    return pd.DataFrame(table)


RATIO_UNITS = frozenset({"Mbit/s", "ms", "s"})  # rates and times: against the native path


def step_status(rows: pd.DataFrame, label: str, compact: bool) -> list[dict[str, str]]:
    """A status row for a step where some overlay did not measure (with why)."""
    said = rows[rows["status"] != "ok"]  # not measured, or measured as adjusted
    if said.empty:
        return []
    row = {"step": label, "measurement": "status"}
    for overlay, group in rows.groupby("overlay", sort=False):
        text = "; ".join(sorted({str(s) for s in group["status"]}))
        row[str(overlay)] = text if not compact or len(text) < 80 else text[:77] + "..."
    return [row]


def overlay_cell(record: Mapping[Hashable, Any], ratio: float | None,
                 against: str = "baseline", detail: bool = True) -> str:
    cv = record["cv"]
    known = isinstance(cv, float) and not math.isnan(cv)
    spread = f", CV {100 * cv:.1f} %" if known else ""
    text = f"{record['result']} (n {record['n']}{spread})" if detail else str(record["result"])
    return f"{text}, {ratio:.3g}x {against}" if ratio is not None else text


def _measurement_name(row: pd.Series) -> str:
    variant = "" if row["variant"] == "default" else f", {row['variant']}"
    return f"{row['label']} ({row['overlay']}{variant})"


def baseline_ratios(summary: pd.DataFrame) -> pd.DataFrame:
    """Overlay / baseline for throughput and RTT, per scenario and variant."""
    rows = []
    for metric in ("tcp_mbit", "rtt_mean_ms"):
        of_metric = summary[summary["metric"] == metric]
        baseline = of_metric[of_metric["overlay"] == "baseline"]
        if baseline.empty:
            continue
        reference = {str(k): float(v)
                     for k, v in baseline.groupby("scenario")["mean"].mean().items()}
        for row in of_metric[of_metric["overlay"] != "baseline"].to_dict("records"):
            base = reference.get(str(row["scenario"]))
            if base:
                rows.append({"scenario": row["scenario"], "overlay": row["overlay"],
                             "variant": row["variant"], "metric": metric,
                             "ratio": float(row["mean"]) / base})
    return pd.DataFrame(rows, columns=["scenario", "overlay", "variant", "metric", "ratio"])


def raw_fractions(summary: pd.DataFrame, raw_mbit: float | None) -> pd.DataFrame:
    """Each overlay's TCP throughput as a fraction of the machine's limit (a bare veth
    pair measured in the same matrix)."""
    columns = ["scenario", "overlay", "variant", "tcp Mbit/s", "of raw veth"]
    tcp = summary[summary["metric"] == "tcp_mbit"]
    if not raw_mbit or tcp.empty:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame([{"scenario": row["scenario"], "overlay": row["overlay"],
                          "variant": row["variant"], "tcp Mbit/s": round(float(row["mean"]), 1),
                          "of raw veth": f"{float(row['mean']) / raw_mbit:.3f}"}
                         for row in tcp.to_dict("records")], columns=columns)


def problems(frame: pd.DataFrame) -> pd.DataFrame:
    """Passes that produced no numbers, or partial ones, with the reason."""
    bad = frame[frame["state"] != State.OK]
    return (bad.groupby(["scenario", "overlay", "variant", "status"])["pass"]
            .apply(lambda p: ",".join(str(v) for v in sorted(set(p))))
            .reset_index(name="passes"))


def number(value: float) -> str:
    """A figure as people read it: whole above 100, else four significant digits."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.4g}"


def markdown(table: pd.DataFrame) -> str:
    """A pipe table that reads as plain text in a terminal too."""
    if table.empty:
        return "(none)\n"
    columns = [str(c) for c in table.columns]
    cells = [[str(v) for v in row] for row in table.itertuples(index=False)]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(columns), rule, *(line(r) for r in cells)]) + "\n"


def comparison_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Headline metrics by overlay: range over passes, and the ratio to baseline."""
    summary = summary_table(frame)
    metrics = catalogue()
    headline = summary["metric"].map(lambda m: metrics.headline(str(m)) is not None)
    picked = summary[headline.astype(bool)]  # an empty object Series would pick columns
    if picked.empty and frame.empty:
        return pd.DataFrame()
    table = picked.pivot_table(index=["scenario", "metric"], columns="overlay",
                               values="result", aggfunc="first").reset_index()
    table = pd.concat([table, status_rows(frame)], ignore_index=True)
    ratios = baseline_ratios(summary)
    for row in ratios.itertuples():
        column = f"{row.overlay}/baseline"
        mask = (table["scenario"] == row.scenario) & (table["metric"] == row.metric)
        table.loc[mask, column] = f"{row.ratio:.3g}"
    return with_hosts(table.fillna("-"), frame)


def with_hosts(table: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """A run on several hosts (a swarm): a column saying where each role ran, on each
    scenario's first row."""
    if "set_hosts" not in frame.columns or frame["set_hosts"].isna().all():
        return table
    hosts = frame.dropna(subset=["set_hosts"]).groupby("scenario", sort=False)["set_hosts"]
    placed = hosts.agg(lambda values: " | ".join(dict.fromkeys(str(v) for v in values)))
    first = ~table["scenario"].duplicated()
    column = table["scenario"].map(placed).fillna("-").where(first, "")
    table.insert(2, "ran on", column)
    return table


def status_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Per scenario, each overlay's states (ok, path dead, partial, not supported...)
    with the overlay's remark when it adjusted the settings, so a missing or a
    differently measured number is explained."""
    rows = []
    for scenario, of_scenario in frame.groupby("scenario", sort=False):
        row = {"scenario": scenario, "metric": "status"}
        for overlay, group in of_scenario.groupby("overlay", sort=False):
            states = ", ".join(sorted({str(s) for s in group["state"]}))
            remarks = sorted({str(r) for r in group.get("remark", pd.Series()) if r})
            row[str(overlay)] = f"{states} ({'; '.join(remarks)})" if remarks else states
        rows.append(row)
    return pd.DataFrame(rows)
