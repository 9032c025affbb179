"""PNG plots of a results frame (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from vnetbench.units import parse_milliseconds, parse_percent, parse_rate

BAR_PLOTS = {
    "tcp_mbit": ("throughput.png", "TCP throughput per overlay", "Mbit/s"),
    "rtt_mean_ms": ("rtt.png", "Mean ping round trip per overlay", "ms"),
}


def bar_with_ranges(summary: pd.DataFrame, metric: str, path: Path, title: str,
                    unit: str) -> Path | None:
    """Mean per overlay/variant as bars, lowest-to-highest pass as the error range."""
    rows = summary[summary["metric"] == metric]
    if rows.empty:
        return None
    labels = [o if v == "default" else f"{o}\n{v}"
              for o, v in zip(rows["overlay"], rows["variant"], strict=True)]
    errors = [(rows["mean"] - rows["low"]).to_numpy(), (rows["high"] - rows["mean"]).to_numpy()]
    figure, axes = plt.subplots(figsize=(max(5.0, 1.3 * len(rows)), 3.8))
    axes.bar(labels, rows["mean"], yerr=errors, capsize=6, color="#4c72b0")
    axes.set_ylabel(unit)
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("bar: mean over passes; whiskers: lowest to highest pass", fontsize=8)
    positive = rows["low"][rows["low"] > 0]
    if len(positive) > 1 and rows["high"].max() / positive.min() > 20:
        axes.set_yscale("log")  # overlays and the bare path differ by orders of magnitude
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def line_against(summary: pd.DataFrame, metric: str, x_metric_label: str, path: Path,
                 x_of_variant: dict[str, float]) -> Path | None:
    """A metric against a numeric variant setting (join time against N, sweeps)."""
    rows = summary[(summary["metric"] == metric) & summary["variant"].isin(x_of_variant)]
    if rows.empty:
        return None
    figure, axes = plt.subplots(figsize=(5, 3.5))
    axes.set_title(f"{metric}: mean over passes, band lowest to highest", fontsize=9)
    for overlay, group in rows.groupby("overlay"):
        group = group.assign(x=group["variant"].map(x_of_variant)).sort_values("x")
        axes.plot(group["x"], group["mean"], marker="o", label=str(overlay))
        axes.fill_between(group["x"], group["low"], group["high"], alpha=0.2)
    axes.set_xlabel(x_metric_label)
    axes.set_ylabel(str(rows["unit"].iloc[0]))
    positive = rows["low"][rows["low"] > 0]
    if len(positive) > 1 and rows["high"].max() / positive.min() > 20:
        axes.set_yscale("log")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_plots(summary: pd.DataFrame, directory: Path) -> list[Path]:
    written = []
    for metric, (name, title, unit) in BAR_PLOTS.items():
        path = bar_with_ranges(summary, metric, directory / name, title, unit)
        if path:
            written.append(path)
    join_sizes = {v: float(str(v)[1:].split("-")[0]) for v in summary["variant"].unique()
                  if str(v).startswith("n") and str(v)[1:].split("-")[0].isdigit()}
    path = line_against(summary, "join_seconds", "machines joining at once",
                        directory / "join.png", join_sizes)
    if path:
        written.append(path)
    return written + sweep_plots(summary, directory)


SWEEP_METRICS = ("tcp_mbit", "rtt_mean_ms", "ping_loss", "tcp_retransmits", "join_seconds",
                 "pings_answered")


def sweep_plots(summary: pd.DataFrame, directory: Path) -> list[Path]:
    """For variants 'segment.key=value' (vnetbench sweep): each metric against the value."""
    by_parameter: dict[str, dict[str, float]] = {}
    for variant in summary["variant"].unique():
        parameter, sep, value = str(variant).partition("=")
        if sep:
            by_parameter.setdefault(parameter, {})[str(variant)] = numeric(parameter, value)
    written = []
    for parameter, x_of_variant in by_parameter.items():
        for metric in SWEEP_METRICS:
            path = line_against(summary, metric, axis_label(parameter),
                                directory / f"sweep-{parameter}-{metric}.png", x_of_variant)
            if path:
                written.append(path)
    return written


def numeric(parameter: str, value: str) -> float:
    key = parameter.rsplit(".", 1)[-1]
    if key == "rate":
        return parse_rate(value) / 1e6
    if key in ("delay", "jitter"):
        return parse_milliseconds(value)
    return parse_percent(value) if key == "loss" else float(value)


def axis_label(parameter: str) -> str:
    unit = {"rate": "Mbit/s", "delay": "ms each way", "jitter": "ms", "loss": "% each way"}
    return f"{parameter} ({unit.get(parameter.rsplit('.', 1)[-1], '')})"
