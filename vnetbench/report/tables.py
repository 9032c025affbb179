"""Summary tables over passes: the seed's "Measurement | Result" with ranges."""

from __future__ import annotations

import pandas as pd

from vnetbench.stats import format_range, summarise

# The figures a reader looks for first, in the order the seed reports them.
HEADLINE_METRICS = {
    "tcp_mbit": "TCP between two agents",
    "rtt_mean_ms": "Mean ping round trip",
    "ping_loss": "Ping loss",
    "tcp_retransmits": "TCP retransmits",
    "cpu_agent_percent": "CPU of the agents during the stream (% of a core)",
    "cpu_switch_percent": "CPU of the switches/hubs during the stream (% of a core)",
    "join_seconds": "Machines joining at once",
    "joined": "Machines joined",
    "gate_spread_ms": "Start gate spread",
    "config_seconds": "Config change",
    "pings_answered": "Pings answered under flood",
    "flood_packets_dropped": "Flood packets lost (receiver count)",
    "limiter_drops": "Packets dropped by the rate limit",
    "predicted_drops": "Token-bucket prediction of those drops",
}
GROUP = ["scenario", "overlay", "variant", "metric", "unit"]


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (scenario, overlay, variant, metric): n, mean, range, CV."""
    usable = frame["status"].eq("ok") | frame["status"].str.startswith("partial")
    measured = frame[usable].dropna(subset=["value"])
    rows = []
    for key, group in measured.groupby(GROUP, sort=False):
        scenario, overlay, variant, metric, unit = key
        summary = summarise(group["value"])
        rows.append({"scenario": scenario, "overlay": overlay, "variant": variant,
                     "metric": metric, "unit": unit, "n": summary.n, "mean": summary.mean,
                     "low": summary.low, "high": summary.high, "cv": summary.cv,
                     "result": format_range(summary, str(unit))})
    return pd.DataFrame(rows, columns=[*GROUP, "n", "mean", "low", "high", "cv", "result"])


def headline_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed-style table: Measurement | Result | n | CV, headline metrics only."""
    picked = summary[summary["metric"].isin(HEADLINE_METRICS)].copy()
    picked["order"] = picked["metric"].map(list(HEADLINE_METRICS).index)
    picked = picked.sort_values(["scenario", "order", "overlay", "variant"])
    measurement = picked.apply(_measurement_name, axis=1)
    return pd.DataFrame({
        "Measurement": measurement, "Result": picked["result"], "n": picked["n"],
        "CV": picked["cv"].map(lambda v: "-" if pd.isna(v) else f"{100 * v:.1f} %"),
    }).reset_index(drop=True)


def _measurement_name(row: pd.Series) -> str:
    variant = "" if row["variant"] == "default" else f", {row['variant']}"
    return f"{HEADLINE_METRICS[row['metric']]} ({row['overlay']}{variant})"


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


def problems(frame: pd.DataFrame) -> pd.DataFrame:
    """Passes that produced no numbers, with the reason (path dead, not supported...)."""
    bad = frame[frame["status"] != "ok"]
    return (bad.groupby(["scenario", "overlay", "variant", "status"])["pass"]
            .apply(lambda p: ",".join(str(v) for v in sorted(set(p))))
            .reset_index(name="passes"))


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
    picked = summary[summary["metric"].isin(HEADLINE_METRICS)]
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
    return table.fillna("-")


def status_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Per scenario, each overlay's state: ok, or the reason's first words
    (path dead, partial, not supported...), so a missing number is explained."""
    rows = []
    for scenario, of_scenario in frame.groupby("scenario", sort=False):
        row = {"scenario": scenario, "metric": "status"}
        for overlay, group in of_scenario.groupby("overlay", sort=False):
            states = sorted({str(s).split(":")[0] for s in group["status"]})
            row[str(overlay)] = ", ".join(states)
        rows.append(row)
    return pd.DataFrame(rows)
