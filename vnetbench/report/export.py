"""`vnetbench export DIR --format github|bencher`: a results directory's figures for
CI benchmark dashboards, each the mean over its passes, with the lowest and
highest pass; only metrics the catalogue gives a direction (judged ones; the
noisy ones too with --all), per scenario/overlay/variant.

github: github-action-benchmark's custom tools (its README, "customBiggerIsBetter
and customSmallerIsBetter"; its parser, src/extract.ts): a JSON array of
{name, unit, value, range?, extra?}, name, unit, range and extra strings, value a
number. The tool, and so the direction, is one per file: the higher-is-better
metrics go to NAME-bigger-is-better.json (tool: customBiggerIsBetter), the
lower-is-better ones to NAME-smaller-is-better.json (customSmallerIsBetter).

bencher: Bencher Metric Format (bencher.dev/docs/reference/bencher-metric-format):
{benchmark: {measure: {value, lower_value?, upper_value?}}}, a benchmark per
scenario/overlay/variant, a measure per metric (its name in kebab case, at most
64 characters, Bencher's slug limit). BMF carries no direction: Bencher keeps it
in a threshold's boundary, a lower one for higher-is-better measures, an upper
one for lower-is-better; `threshold_options` says which for each measure.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.core.metrics import Better
from vnetbench.core.schema import CELL, METRIC, UNIT
from vnetbench.declared import catalogue
from vnetbench.errors import UserError
from vnetbench.files import write_text_atomic
from vnetbench.report.document import load_directory
from vnetbench.report.options import ExportFormat
from vnetbench.report.tables import number, summary_table
from vnetbench.terminal.outputs import Output, check_outputs, results_inputs

GITHUB_TOOLS = {Better.HIGHER: ("bigger-is-better", "customBiggerIsBetter"),
                Better.LOWER: ("smaller-is-better", "customSmallerIsBetter")}
MEASURE_SLUG_MAX = 64
STDOUT = Path("-")


@dataclass(frozen=True)
class Figure:
    """One metric of one cell, over its passes."""

    benchmark: str  # scenario/overlay/variant
    metric: str
    unit: str
    better: Better
    mean: float
    low: float
    high: float
    n: int

    @property
    def name(self) -> str:
        return f"{self.benchmark}/{self.metric}"


@dataclass(frozen=True)
class Written:
    path: Path  # STDOUT: printed
    what: str  # e.g. "github-action-benchmark, tool customBiggerIsBetter"


def figures(frame: pd.DataFrame, judge_all: bool) -> list[Figure]:
    """The exported figures: a direction, a finite mean, judged unless `judge_all`."""
    metrics = catalogue()
    found = []
    for r in summary_table(frame).to_dict("records"):
        metric = str(r[METRIC])
        better = metrics.better(metric)
        if better is Better.NEITHER or not (judge_all or metrics.judged(metric)):
            continue
        if not math.isfinite(float(r["mean"])):
            continue
        found.append(Figure("/".join(str(r[c]) for c in CELL), metric,
                            str(r[UNIT]), better, float(r["mean"]), float(r["low"]),
                            float(r["high"]), int(r["n"])))
    return found


def github_entry(figure: Figure) -> dict[str, Any]:
    spread = max(figure.high - figure.mean, figure.mean - figure.low)
    return {"name": figure.name, "unit": figure.unit, "value": figure.mean,
            "range": f"± {spread:.4g}",
            "extra": f"mean of {figure.n} passes; lowest {number(figure.low)}, highest "
                     f"{number(figure.high)} {figure.unit}"}


def github_documents(found: list[Figure]) -> dict[Better, list[dict[str, Any]]]:
    """The higher-is-better and the lower-is-better entries, a list each."""
    return {better: [github_entry(f) for f in found if f.better is better]
            for better in GITHUB_TOOLS}


def measure_slug(metric: str) -> str:
    return metric.replace("_", "-").lower()[:MEASURE_SLUG_MAX]


def bencher_document(found: list[Figure]) -> dict[str, dict[str, dict[str, float]]]:
    document: dict[str, dict[str, dict[str, float]]] = {}
    for figure in found:
        document.setdefault(figure.benchmark, {})[measure_slug(figure.metric)] = {
            "value": figure.mean, "lower_value": figure.low, "upper_value": figure.high}
    return document


def threshold_options(found: list[Figure]) -> list[str]:
    """Per measure, the boundary a Bencher threshold needs (bencher run options)."""
    sides = {measure_slug(f.metric): "lower" if f.better is Better.HIGHER else "upper"
             for f in found}
    return [f"--threshold-measure {slug} --threshold-{side}-boundary 0.99"
            for slug, side in sides.items()]


def github_paths(base: Path) -> dict[Better, Path]:
    """bench.json -> bench-bigger-is-better.json and bench-smaller-is-better.json."""
    return {better: base.with_name(f"{base.stem}-{suffix}.json")
            for better, (suffix, _) in GITHUB_TOOLS.items()}


def targets(directory: Path, form: ExportFormat, out: Path | None) -> list[Path]:
    """The files the export writes: -o's (github: its two), else its own in DIR; -o
    itself first, so that a directory there is said as given."""
    if out == STDOUT:
        return []
    base = out or directory / ("bencher.json" if form is ExportFormat.BENCHER else "github.json")
    if form is ExportFormat.BENCHER:
        return [base]
    return [*([out] if out else []), *(github_paths(base).values() if base.name else [])]


def check_targets(directory: Path, form: ExportFormat, out: Path | None) -> None:
    """Every file the export writes can be written and is none of the results it reads
    (checked before anything is read): -o names a file in a directory that exists,
    outside DIR; without -o, the export's own files beside the results."""
    check_outputs("export", [
        Output("-o", path, must_exist=True, ours=out is None, default=out is None)
        for path in targets(directory, form, out)], results_inputs([directory]))


def write_export(directory: Path, form: ExportFormat, out: Path | None,
                 judge_all: bool) -> tuple[list[Written], list[Figure]]:
    """Write the export; return what went where, and the figures exported."""
    check_targets(directory, form, out)
    _, frame = load_directory(directory)
    found = figures(frame, judge_all)
    if not found:
        raise UserError(f"{directory} holds no measured metric with a direction to export "
                        "(failed passes have none; counts and settings have no better side)"
                        + ("" if judge_all else "; --all adds the noisy ones") + ".")
    if form is ExportFormat.BENCHER:
        text = json.dumps(bencher_document(found), indent=2) + "\n"
        path = out or directory / "bencher.json"
        if path == STDOUT:
            sys.stdout.write(text)
        else:
            write_text_atomic(path, text)
        return [Written(path, "Bencher Metric Format")], found
    if out == STDOUT:
        raise UserError("--format github writes two files (one per direction), not one "
                        "stream: give -o FILE.json (FILE-bigger-is-better.json and "
                        "FILE-smaller-is-better.json are written).")
    written = []
    documents = github_documents(found)
    for better, path in github_paths(out or directory / "github.json").items():
        if documents[better]:
            write_text_atomic(path, json.dumps(documents[better], indent=2) + "\n")
            written.append(Written(path, f"github-action-benchmark, tool "
                                         f"{GITHUB_TOOLS[better][1]}"))
    return written, found
