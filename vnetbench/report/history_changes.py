"""history's change points: each series (scenario, overlay, variant, metric) of
directory means through `vnetbench.analysis.changepoints`, gated by the A/A's noise floor
for that metric (else `DEFAULT_FLOOR_PCT`, and the page says so); as typed
records, the table people read and the JSON `history --json` prints."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from vnetbench.analysis.changepoints import (
    ALPHA,
    DEFAULT_FLOOR_PCT,
    MIN_POINTS,
    PERMUTATIONS,
    change_points,
)
from vnetbench.core.metrics import Better
from vnetbench.core.schema import METRIC, OVERLAY, SCENARIO, UNIT, VARIANT
from vnetbench.declared import catalogue
from vnetbench.report.tables import number


@dataclass(frozen=True)
class Floor:
    pct: float
    measured: bool  # from the A/A's noise.json; False: the default


@dataclass(frozen=True)
class Shift:
    """A change point of one series, at the directory `label` (the first of the new
    level)."""

    scenario: str
    overlay: str
    variant: str
    metric: str
    unit: str
    label: str
    position: int
    before: float  # mean of the directory means since the previous change point
    after: float  # ... up to the next one
    change_pct: float | None  # None: from a zero mean
    p: float
    direction: str  # better, worse or - (the metric has no better side)
    floor: Floor


def floor_for(key: str, noise: dict[str, float]) -> Floor:
    """The A/A's floor for scenario/overlay/metric, else the default."""
    if key not in noise:
        return Floor(DEFAULT_FLOOR_PCT, False)
    return Floor(noise[key], True)  # read_noise refused one below 0 or not finite


def shift_direction(better: Better, change_pct: float) -> str:
    if change_pct == 0 or better is Better.NEITHER:
        return "-"
    return "better" if (change_pct > 0) == (better is Better.HIGHER) else "worse"


def find_shifts(table: pd.DataFrame, noise: dict[str, float]) -> list[Shift]:
    """Every series' change points (history's `points` table in, ordered by position;
    directories without a mean left out of their series)."""
    metrics = catalogue()
    shifts = []
    for key, series in table.groupby([SCENARIO, OVERLAY, VARIANT, METRIC], sort=False):
        scenario, overlay, variant, metric = (str(k) for k in key)
        rows = series.dropna(subset=["mean"]).sort_values("position").to_dict("records")
        floor = floor_for(f"{scenario}/{overlay}/{metric}", noise)
        for change in change_points([float(r["mean"]) for r in rows], floor.pct):
            row = rows[change.index]
            pct = change.change_pct if math.isfinite(change.change_pct) else None
            shifts.append(Shift(
                scenario, overlay, variant, metric, str(row[UNIT]), str(row["label"]),
                int(row["position"]), change.before, change.after, pct, change.p,
                shift_direction(metrics.better(metric), change.change_pct), floor))
    return shifts


def shift_text(shift: Shift) -> str:
    """How a figure labels it: '-30.0 %, p 0.005'."""
    moved = "from 0" if shift.change_pct is None else f"{shift.change_pct:+.1f} %"
    return f"{moved}, p {shift.p:.3f}"


def method_text(default_used: bool) -> str:
    default = (f" No A/A floor for some series: they are gated by the default floor of "
               f"±{DEFAULT_FLOOR_PCT:.0f} % (marked 'default')." if default_used else "")
    return (f"A change point is a level shift found by E-divisive means over each series "
            f"of directory means: significant in a permutation test ({PERMUTATIONS} "
            f"permutations, p <= {ALPHA}), larger than the noise floor between the means "
            f"of the segments either side, with at least {MIN_POINTS} directories on each "
            f"side (a new level must persist).{default}")


def shifts_table(shifts: Sequence[Shift]) -> pd.DataFrame:
    """The change points as people read them."""
    labels = catalogue()
    return pd.DataFrame({
        "series": [f"{s.scenario}/{s.overlay}/{s.variant}: {labels.label(s.metric)}"
                   for s in shifts],
        "at": [s.label for s in shifts],
        "before": [f"{number(s.before)} {s.unit}" for s in shifts],
        "after": [f"{number(s.after)} {s.unit}" for s in shifts],
        "change": ["from 0" if s.change_pct is None else f"{s.change_pct:+.1f} %"
                   for s in shifts],
        "p": [f"{s.p:.3f}" for s in shifts],
        "floor": [f"±{s.floor.pct:.1f} %" + ("" if s.floor.measured else " (default)")
                  for s in shifts],
        "direction": [s.direction for s in shifts],
    }, columns=["series", "at", "before", "after", "change", "p", "floor", "direction"])


def finite(value: Any) -> Any:
    """JSON has no nan or infinity: null instead."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def history_json(directories: pd.DataFrame, table: pd.DataFrame, shifts: Sequence[Shift],
                 noise: dict[str, float], source: str, page: str) -> str:
    """What `history --json` prints: the directories, the method, and per series its
    points and change points."""
    series = []
    for key, rows in table.groupby([SCENARIO, OVERLAY, VARIANT, METRIC], sort=False):
        scenario, overlay, variant, metric = (str(k) for k in key)
        floor = floor_for(f"{scenario}/{overlay}/{metric}", noise)
        mine = [s for s in shifts if (s.scenario, s.overlay, s.variant, s.metric)
                == (scenario, overlay, variant, metric)]
        series.append({
            "scenario": scenario, "overlay": overlay, "variant": variant, "metric": metric,
            "unit": str(rows[UNIT].iloc[0]), "floor_pct": floor.pct,
            "floor_from": "noise.json" if floor.measured else "default",
            "points": [{k: finite(r[k]) for k in ("label", "position", "n", "mean", "low",
                                                  "high")}
                       for r in rows.sort_values("position").to_dict("records")],
            "change_points": [{k: finite(v) for k, v in asdict(s).items()
                               if k in ("label", "position", "before", "after",
                                        "change_pct", "p", "direction")} for s in mine]})
    return json.dumps({
        "page": page, "directories": directories.to_dict("records"),
        "noise_floor": source, "default_floor_pct": DEFAULT_FLOOR_PCT,
        "method": {"name": "e-divisive means", "alpha": ALPHA,
                   "permutations": PERMUTATIONS, "min_points_each_side": MIN_POINTS},
        "series": series}, indent=2, default=lambda v: v.item())
