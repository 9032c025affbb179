"""`vnetbench compare OLD NEW`: per metric, NEW/OLD with a bootstrap interval
over passes and a verdict; a regression beyond the threshold fails the exit."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from vnetbench.metrics import catalogue
from vnetbench.outcome import State
from vnetbench.report.markdown import load_directory
from vnetbench.report.tables import pass_values
from vnetbench.stats import Verdict, compare_samples

KEYS = ["scenario", "overlay", "variant", "metric", "unit"]


def compare_directories(old: Path, new: Path, threshold: float) -> pd.DataFrame:
    _, old_frame = load_directory(old)
    _, new_frame = load_directory(new)
    return compare_frames(old_frame, new_frame, threshold)


def compare_frames(old: pd.DataFrame, new: pd.DataFrame, threshold: float) -> pd.DataFrame:
    """Per pass values only: a time series' points (interval_s) are not samples."""
    old_ok = old[(old["state"] == State.OK) & pass_values(old)].dropna(subset=["value"])
    new_ok = new[(new["state"] == State.OK) & pass_values(new)].dropna(subset=["value"])
    metrics = catalogue()
    new_groups = {key: group["value"].to_numpy() for key, group in new_ok.groupby(KEYS)}
    rows = []
    for key, group in old_ok.groupby(KEYS):
        if key not in new_groups:
            continue
        result = compare_samples(group["value"].to_numpy(), new_groups[key],
                                 metrics.better(str(key[3])), threshold)
        rows.append({**dict(zip(KEYS, key, strict=True)), "old_n": len(group),
                     "new_n": len(new_groups[key]), "ratio": result.ratio,
                     "ci_low": result.low, "ci_high": result.high,
                     "verdict": result.verdict.value})
    return pd.DataFrame(rows, columns=[*KEYS, "old_n", "new_n", "ratio", "ci_low", "ci_high",
                                       "verdict"])


def regressions(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["verdict"] == Verdict.WORSE.value]
