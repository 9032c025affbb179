"""`vnetbench compare OLD NEW`: per metric, NEW/OLD with a bootstrap interval over
passes and a verdict; a regression beyond the threshold fails the exit.

Two results directories are two sessions: the passes of one are not independent
draws of what the other measures (the drift between sessions is larger than the
spread between passes), so the bootstrap interval alone is too narrow to judge
with. A metric is judged only against this machine's noise floor (an A/A's
noise.json: `vnetbench ab SCENARIO` with no --b): a change within that noise is
"no change", said with its size. A metric the floor has no figure for (or any,
without a floor) is shown with its ratio and interval and not judged: "no
verdict", and why. `vnetbench ab` is the measurement to gate on: it interleaves
both builds in one session.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from vnetbench.analysis.results import named
from vnetbench.analysis.stats import Comparison, Verdict, compare_samples
from vnetbench.core.outcome import State
from vnetbench.core.schema import OVERLAY, SCENARIO, SERIES, STATE, VALUE, VARIANT
from vnetbench.declared import catalogue
from vnetbench.errors import UserError
from vnetbench.report.document import load_directory
from vnetbench.report.tables import pass_values

KEYS = list(SERIES)
COLUMNS = [*KEYS, "old_n", "new_n", "ratio", "ci_low", "ci_high", "noise_pct", "verdict",
           "reason"]
NO_FLOOR = ("cannot judge: no noise floor for it, and two sessions differ by this "
            "machine's drift (compare --noise AA_DIR)")


def compare_directories(old: Path, new: Path, threshold: float,
                        noise: dict[str, float] | None = None,
                        judge_all: bool = False) -> pd.DataFrame:
    _, old_frame = load_directory(old)
    _, new_frame = load_directory(new)
    table = compare_frames(old_frame, new_frame, threshold, noise, judge_all)
    if table.empty:  # an empty table and exit 0 read as "no regression"
        raise UserError(
            f"{old} and {new} have no metric measured in both ({measured(old, old_frame)}; "
            f"{measured(new, new_frame)}), so there is nothing to compare. Give two "
            "results directories of the same scenario on the same overlay.")
    return table


def measured(directory: Path, frame: pd.DataFrame) -> str:
    """'DIR measured throughput/baseline/A, ...': the cells (scenario, overlay, variant)
    with a pass that was measured."""
    ok = frame[frame[STATE] == State.OK]
    cells = sorted({"/".join(str(part) for part in cell if part)
                    for cell in zip(ok[SCENARIO], ok[OVERLAY], ok[VARIANT], strict=True)})
    shown = ", ".join(cells[:5]) + (f" and {len(cells) - 5} more" if len(cells) > 5 else "")
    return f"{directory} measured {shown}" if cells else f"{directory} measured no pass"


def compare_frames(old: pd.DataFrame, new: pd.DataFrame, threshold: float,
                   noise: dict[str, float] | None = None,
                   judge_all: bool = False) -> pd.DataFrame:
    """Per pass values only: a time series' points (interval_s) are not samples.
    `noise`: scenario/overlay/metric -> percent (an A/A's noise.json)."""
    old, new = named(old), named(new)  # a series: its metric and dimensions
    old_ok = old[(old[STATE] == State.OK) & pass_values(old)].dropna(subset=[VALUE])
    new_ok = new[(new[STATE] == State.OK) & pass_values(new)].dropna(subset=[VALUE])
    metrics = catalogue()
    new_groups = {key: group[VALUE].to_numpy() for key, group in new_ok.groupby(KEYS)}
    rows = []
    for key, group in old_ok.groupby(KEYS):
        if key not in new_groups:
            continue
        scenario, overlay, _, metric, _ = (str(part) for part in key)
        result = compare_samples(group[VALUE].to_numpy(), new_groups[key],
                                 metrics.better(metric), threshold)
        floor = (noise or {}).get(f"{scenario}/{overlay}/{metric}")
        verdict, reason = judged_verdict(result, floor, judge_all or metrics.judged(metric))
        rows.append({**dict(zip(KEYS, key, strict=True)), "old_n": len(group),
                     "new_n": len(new_groups[key]), "ratio": result.ratio,
                     "ci_low": result.low, "ci_high": result.high, "noise_pct": floor,
                     "verdict": verdict.value, "reason": reason})
    return pd.DataFrame(rows, columns=COLUMNS)


def judged_verdict(result: Comparison, noise_pct: float | None,
                   judged: bool) -> tuple[Verdict, str]:
    """The bootstrap's verdict, unless the metric is not judged, has no noise floor
    (no verdict: the drift between sessions is unknown) or changed within it."""
    if not judged:
        return Verdict.NOT_JUDGED, "shown, not judged: noisy, or neither way is better"
    if noise_pct is None:
        if result.low == result.high == 1.0:  # every pass of both alike (e.g. no loss)
            return Verdict.NO_CHANGE, "the same in every pass of both"
        return Verdict.UNKNOWN, NO_FLOOR
    if result.verdict not in (Verdict.BETTER, Verdict.WORSE):
        return result.verdict, ""
    if abs(result.ratio - 1.0) * 100 <= noise_pct:
        return Verdict.NO_CHANGE, f"within this machine's noise, ±{noise_pct:.1f} %"
    return result.verdict, f"beyond this machine's noise, ±{noise_pct:.1f} %"


def regressions(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["verdict"] == Verdict.WORSE.value]


def judged(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of metrics a verdict is wanted for (not those shown, not judged)."""
    return table[table["verdict"] != Verdict.NOT_JUDGED.value]


def without_floor(table: pd.DataFrame) -> pd.DataFrame:
    """The rows that would be judged but have no noise floor to be judged against."""
    return table[table["reason"] == NO_FLOOR]
