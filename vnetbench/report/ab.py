"""The verdicts of `vnetbench ab` and the noise floor an A/A measures.

From the rows of an A/B directory (variant = arm A or B, var_round = the round):
one value per arm and round (the mean of that bring-up's measured passes), then
per metric the paired test of vnetbench/analysis/stats.py, "A/B over interleaved
bring-ups". An A/A's pairs give the largest difference between two bring-ups of
one build (noise.json), which `compare` judges two separate directories with.
"""

from __future__ import annotations

import io
import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field, ValidationError

from vnetbench.analysis.results import has_kind, named
from vnetbench.analysis.runrecord import RunRecord, read_record
from vnetbench.analysis.sequential import Judgement, SequentialPlan, judge_sequentially
from vnetbench.analysis.stats import Verdict, compare_rounds, noise_floor
from vnetbench.core.metrics import OUTSIDE_LOAD, Better
from vnetbench.core.outcome import Kind
from vnetbench.core.schema import (
    METRIC,
    ROUND,
    SCENARIO,
    UNIT,
    VALUE,
    VARIANT,
    parameter_column,
)
from vnetbench.declared import catalogue
from vnetbench.errors import UserError
from vnetbench.files import read_kept, write_atomic, write_text_atomic
from vnetbench.report.tables import measured_pass_values

NOISE_FILE = "noise.json"
VERDICTS_FILE = "verdicts.csv"
KEYS = [SCENARIO, METRIC, UNIT]


def round_values(frame: pd.DataFrame) -> pd.DataFrame:
    """One value per (series, arm, round): the mean of that bring-up's measured passes
    (a series: its metric and dimensions, under its one name)."""
    return (measured_pass_values(named(frame)).groupby([*KEYS, VARIANT, parameter_column(ROUND)])
            [VALUE].mean().unstack(VARIANT))

def verdict_table(frame: pd.DataFrame, min_effect: float, judge_all: bool = False,
                  aa: bool = False, plan: SequentialPlan | None = None) -> pd.DataFrame:
    """Per metric: both arms' medians over rounds, B/A with its interval, p, the
    number of pairs, the rounds the verdict took and the verdict; metrics declared
    noisy are shown, not judged. With a sequential plan a judged metric's figures are
    those of the look it stopped at (vnetbench/analysis/sequential.py); without, of every round.
    In an A/A, noise_pct is the largest difference between a round's two sides."""
    columns = [*KEYS, "pairs", "rounds", "a_median", "b_median", "ratio", "ci_low",
               "ci_high", "p_value", "noise_pct", "judged", "verdict", "reason"]
    rows = []
    for metric in metric_rounds(frame, judge_all):
        judgement = judge(metric, min_effect, plan)
        result = judgement.comparison
        verdict, reason = result.verdict, result.reason
        if not metric.judged:
            verdict, reason = Verdict.NOT_JUDGED, not_judged_reason(metric.name)
        a, b = metric.a[:judgement.rounds], metric.b[:judgement.rounds]
        pairs, noise = noise_floor(metric.a, metric.b) if aa else (0, float("nan"))
        rows.append({**dict(zip(KEYS, metric.key, strict=True)), "pairs": result.pairs,
                     "rounds": judgement.rounds,
                     "a_median": float(pd.Series(a).median()),
                     "b_median": float(pd.Series(b).median()),
                     "ratio": result.ratio, "ci_low": result.low, "ci_high": result.high,
                     "p_value": result.p_value, "noise_pct": 100 * noise if pairs else None,
                     "judged": metric.judged, "verdict": verdict.value, "reason": reason})
    # typed even with no rows (nothing measured: every pass dead or unsupported), so
    # selecting by `judged` selects rows, not columns
    return pd.DataFrame(rows, columns=columns).astype({"judged": bool})


@dataclass(frozen=True)
class MetricRounds:
    """One metric's values per round, both arms, in round order (NaN: not measured)."""

    key: tuple[str, str, str]  # scenario, metric, unit
    a: np.ndarray
    b: np.ndarray
    better: Better
    judged: bool

    @property
    def name(self) -> str:
        return self.key[1]


def metric_rounds(frame: pd.DataFrame, judge_all: bool) -> list[MetricRounds]:
    """Every metric's rounds, each round at its place (round r at index r - 1)."""
    metrics = catalogue()
    values = round_values(frame)
    rounds = values.index.get_level_values(parameter_column(ROUND)).astype(int)
    every = range(1, int(rounds.max()) + 1) if len(rounds) else range(0)
    found = []
    for key, group in values.groupby(level=KEYS, sort=False):
        by_round = group.droplevel(list[Hashable](KEYS)).reindex(every)
        name = str(key[1])
        found.append(MetricRounds(
            (str(key[0]), name, str(key[2])),
            by_round.get("A", pd.Series(np.nan, index=every)).to_numpy(dtype=float),
            by_round.get("B", pd.Series(np.nan, index=every)).to_numpy(dtype=float),
            metrics.better(name), judge_all or metrics.judged(name)))
    return found


def judge(metric: MetricRounds, min_effect: float, plan: SequentialPlan | None) -> Judgement:
    """A judged metric under the plan; a metric not judged (or no plan): every round."""
    if plan is None or not metric.judged:
        return Judgement(compare_rounds(metric.a, metric.b, metric.better, min_effect),
                         metric.a.size, close=False)
    return judge_sequentially(metric.a, metric.b, metric.better, min_effect, plan)


def close_metrics(frame: pd.DataFrame, min_effect: float, judge_all: bool,
                  plan: SequentialPlan) -> list[str]:
    """scenario/metric of each judged metric still close to a verdict: more rounds may
    decide it (vnetbench/analysis/sequential.py)."""
    return [f"{metric.key[0]}/{metric.name}" for metric in metric_rounds(frame, judge_all)
            if metric.judged and judge(metric, min_effect, plan).close]


def not_judged_reason(metric: str) -> str:
    found = catalogue().find(metric)
    if found is None or found.better is Better.NEITHER:
        return "a count or a setting: neither way is better"
    return "noisy between identical runs: --all judges it"

def noise_record(table: pd.DataFrame, record: RunRecord) -> dict[str, Any]:
    """noise.json: per scenario/overlay/metric, the largest relative difference between
    the two bring-ups of an A/A round, and how many rounds said so."""
    overlay = record.arms["A"]["overlay"]
    measured = table.dropna(subset=["noise_pct"]).to_dict("records")
    metrics = {f"{r[SCENARIO]}/{overlay}/{r[METRIC]}": {
        "noise_pct": float(r["noise_pct"]), "pairs": int(r["pairs"]), "unit": str(r[UNIT])}
        for r in measured}
    return {"measured": record.started, "machine": record.machine,
            "rounds": record.rounds, "spec": record.arms["A"]["spec"],
            "metrics": metrics}

def read_noise(directory: Path) -> dict[str, float]:
    """scenario/overlay/metric -> noise in percent, from an A/A directory's noise.json."""
    path = directory / NOISE_FILE
    if not path.exists():
        kind = read_record(directory).kind
        what = " (it is an A/B of two different arms)" if kind == "ab" else ""
        raise UserError(f"{directory} holds no {NOISE_FILE}{what}: give the directory of "
                        "an A/A, made by 'vnetbench ab SCENARIO' with no --b.")
    try:
        record = NoiseRecord.model_validate_json(read_kept(path))
    except (OSError, ValidationError) as error:
        said = (error.strerror or str(error) if isinstance(error, OSError) else "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg'].lower()}"
            for e in error.errors()[:3]))
        raise UserError(f"{path} cannot be read as a noise floor ({said}): a noise floor is "
                        "a difference of 0 % or more per metric, as 'vnetbench ab' writes "
                        "it. Run the A/A again, or restore the file.") from None
    return {key: entry.noise_pct for key, entry in record.metrics.items()}


class NoiseEntry(BaseModel):
    """One metric's noise floor in noise.json (the keys read; others kept as written)."""

    noise_pct: float = Field(ge=0, allow_inf_nan=False)


class NoiseRecord(BaseModel):
    metrics: dict[str, NoiseEntry]


VERDICT_COLUMNS = (SCENARIO, METRIC, UNIT, "a_median", "b_median", "ratio", "ci_low",
                   "ci_high", "p_value", "pairs", "verdict", "reason", "judged", "noise_pct")


def read_verdicts(directory: Path) -> pd.DataFrame:
    """verdicts.csv as `ab` wrote it; a damaged or foreign one named, with the fix."""
    path = directory / VERDICTS_FILE
    try:
        table = pd.read_csv(io.BytesIO(read_kept(path)))
    except (OSError, ValueError) as error:  # pandas' EmptyDataError, ParserError
        raise UserError(f"{path} cannot be read ({error}). 'vnetbench ab' writes it whole "
                        "at the end of a session: restore it, or run the session again."
                        ) from None
    if table.empty and "judged" in table.columns:  # a header alone: nothing was measured
        table = table.astype({"judged": bool})
    missing = [column for column in VERDICT_COLUMNS if column not in table.columns]
    if missing or not pd.api.types.is_bool_dtype(table["judged"]):
        wrong = f"no column {', '.join(missing)}" if missing else "judged is not true/false"
        raise UserError(f"{path} is not the verdicts file 'vnetbench ab' writes ({wrong}): "
                        "restore it, or run the session again.")
    return table

def verdict_summary(directory: Path) -> tuple[pd.DataFrame, str, bool]:
    """The verdict table as people read it, one sentence, and whether B is worse on a
    judged metric (a CI gate's answer)."""
    record = read_record(directory)
    table = read_verdicts(directory)
    shown = pd.DataFrame({
        "metric": table[SCENARIO] + "/" + table[METRIC],
        "unit": table[UNIT].fillna(""),
        "A": table["a_median"].map(_figure),
        "B": table["b_median"].map(_figure),
        "B/A [95 % interval]": [f"{r:.3f} [{lo:.3f}, {hi:.3f}]" if pd.notna(r) else "-"
                               for r, lo, hi in zip(table["ratio"], table["ci_low"],
                                                    table["ci_high"], strict=True)],
        "p": table["p_value"].map(lambda p: "-" if pd.isna(p) else f"{p:.3f}"),
        "pairs": table["pairs"],
        "rounds": table.get("rounds", record.rounds),
        "verdict": [v if not reason else f"{v} ({reason})"
                    for v, reason in zip(table["verdict"],
                                         table["reason"].astype(object).fillna(""),
                                         strict=True)],
    })
    if record.aa:
        shown["A/A noise"] = table["noise_pct"].map(lambda v: "-" if pd.isna(v)
                                                    else f"±{v:.1f} %")
    judged = table[table["judged"]]
    counts = record.verdicts
    worse = judged[judged["verdict"] == Verdict.WORSE.value]
    same = int((judged["verdict"] == Verdict.NO_CHANGE.value).sum())
    kind = "A/A" if record.aa else "A/B"
    sentence = (f"{kind}, {rounds_said(record)}, minimum effect "
                f"{100 * (record.min_effect or 0):g} %: {same} of {len(judged)} "
                f"judged metrics no change, {counts.get('better', 0)} better, "
                f"{len(worse)} worse, {counts.get('no verdict', 0)} no verdict; "
                f"{counts.get(Verdict.NOT_JUDGED.value, 0)} shown, not judged.")
    if not worse.empty:
        sentence += " Worse: " + ", ".join(f"{r[SCENARIO]}/{r[METRIC]}" for r in
                                           worse.to_dict("records")) + "."
    loads = record.outside_load
    if any(load["marked"] for load in loads.values()):
        sentence += " Passes measured under outside load: " + ", ".join(
            f"{arm} {load['marked']} of {load['passes']}" for arm, load in loads.items()) + "."
    return shown, sentence, not worse.empty

def rounds_said(record: RunRecord) -> str:
    """'8 rounds', or with confirmation '12 rounds (8 planned, up to 16 to confirm a
    verdict near the line)'."""
    said = f"{record.rounds} rounds"
    confirm = record.confirm
    if confirm and confirm.get("looks"):
        said += (f" ({confirm['looks'][0]} planned, up to {confirm['looks'][-1]} to confirm "
                 "a verdict near the line)")
    return said


def _figure(value: float) -> str:
    if pd.isna(value):
        return "-"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"

def noise_near(given: Path | None, directories: Sequence[Path]) -> tuple[dict[str, float], str]:
    """The noise floor `compare` judges with: the A/A given, else the first of the
    compared directories that is one; and a sentence saying which (or none)."""
    if given is not None:
        return read_noise(given), f"the A/A in {given}"
    for directory in directories:
        if (directory / NOISE_FILE).exists():
            return read_noise(directory), f"the A/A in {directory}"
    return {}, ("none measured: verdicts over passes only, which understates the drift "
                "between sessions (measure one with 'vnetbench ab SCENARIO' and pass "
                "--noise DIR, or compare both builds in one session with 'vnetbench ab')")


def outside_load_by_arm(frame: pd.DataFrame) -> dict[str, dict[str, float | int]]:
    """Per arm: its passes, how many were marked as measured under outside load, and
    the median CPU busy outside the testbed (a verdict between two arms that ran on
    differently busy machines is said to be so)."""
    rows = frame[frame[METRIC] == OUTSIDE_LOAD.name].dropna(subset=[VALUE])
    return {str(arm): {"passes": len(group),
                       "marked": int(has_kind(group, Kind.OUTSIDE_LOAD).sum()),
                       "median_cores": round(float(group[VALUE].median()), 3)}
            for arm, group in rows.groupby(VARIANT)}


def write_verdicts(directory: Path, table: pd.DataFrame, record: RunRecord,
                   aa: bool) -> None:
    """verdicts.csv, the counts in run.json, and for an A/A the noise floor."""
    write_atomic(directory / VERDICTS_FILE, lambda temp: table.to_csv(temp, index=False))
    judged = table[table["judged"]]
    record.verdicts = {verdict.value: int((judged["verdict"] == verdict.value).sum())
                       for verdict in Verdict}
    record.verdicts[Verdict.NOT_JUDGED.value] = int((~table["judged"]).sum())
    if aa:
        write_text_atomic(directory / NOISE_FILE,
                          json.dumps(noise_record(table, record), indent=2) + "\n")
