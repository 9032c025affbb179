"""The report's verdict lines, above its summary: the venue's verdict (a room target
given: held, or what broke first), what failed, which --slo target was missed, and
which overlay is best on each lead figure and by how much against the next.
report.md and report.html show the same lines (a Verdicts block,
vnetbench/report/document.py)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from vnetbench.analysis.runrecord import RunRecord
from vnetbench.analysis.slo import Checked, check_targets, parse_targets
from vnetbench.analysis.venue import results_verdict
from vnetbench.core.metrics import BOOL, Better
from vnetbench.core.schema import METRIC, NATIVE, OVERLAY, SCENARIO, UNIT, VARIANT
from vnetbench.declared import catalogue
from vnetbench.report.summary import is_lead, natural
from vnetbench.report.tables import (
    difference_text,
    implausible_cells,
    ratio_text,
    ratio_to,
)
from vnetbench.terminal.exitstatus import failed_cells

DEFAULT = "default"
LISTED = 6  # failed cells or missed targets a line names; the rest are counted
TARGETS_SECTION = "Targets"


@dataclass(frozen=True)
class Verdict:
    """One line: its subject ('Failed', 'Targets', 'Best overlay'), what it says, and
    whether it is a miss (a failed pass, a missed target), shown as one."""

    subject: str
    text: str
    miss: bool = False


def verdict_lines(frame: pd.DataFrame, summary: pd.DataFrame,
                  record: RunRecord) -> list[Verdict]:
    """The lines, failures first; a line on targets only where the run was given some,
    on the best overlay only where two overlays measured a lead figure alike."""
    lines = [failures_line(frame)]
    if record.targets:
        lines = [*venue_lines(frame, record), *lines, targets_line(frame, record.targets)]
    best = best_overlays(frame, summary)
    if best:
        lines.append(Verdict("Best overlay (against the next)", "; ".join(best) + "."))
    return lines


def venue_lines(frame: pd.DataFrame, record: RunRecord) -> list[Verdict]:
    """The venue's verdict first (analysis/venue.py): held, or what broke first, per
    room cell; none without a room target."""
    venue = results_verdict(frame, checked_targets(frame, record.targets or []),
                            record.topology)
    return [Verdict("Venue", cell.line(), miss=not cell.held)
            for cell in venue.cells] if venue else []


def failures_line(frame: pd.DataFrame) -> Verdict:
    """The cells with a failed or dead pass (exitstatus.failed_cells, the exit status's
    own), else that every pass measured."""
    failed = failed_cells(frame)
    if not failed:
        return Verdict("Failed", "none: every pass measured (no pass failed, no path dead).")
    count = sum(len(cell.passes) for cell in failed)
    return Verdict("Failed", f"{count} pass(es) in {len(failed)} cell(s): " + listed(
        [cell.describe() for cell in failed], "Passes without numbers"), miss=True)


def targets_line(frame: pd.DataFrame, texts: list[str]) -> Verdict:
    """The targets run.json keeps (--slo), checked on these results as the run checked
    them (slo.check_targets): each miss with its cell's median."""
    checked = checked_targets(frame, texts)
    missed = [c for c in checked if not c.met]
    if missed:
        by_target: dict[str, list[str]] = {}
        for c in missed:
            by_target.setdefault(c.target.text, []).append(
                c.describe().removeprefix(f"{c.target.text} on "))
        return Verdict("Targets missed", f"{len(missed)} of {len(checked)}: " + listed(
            [f"{text} on {', '.join(cells)}" for text, cells in by_target.items()],
            TARGETS_SECTION), miss=True)
    return Verdict("Targets", f"every one met ({', '.join(texts)}; {len(checked)} "
                   "cell(s) checked).")


def checked_targets(frame: pd.DataFrame, texts: list[str]) -> list[Checked]:
    return check_targets(frame, parse_targets(",".join(texts), "run.json's targets"))


def listed(items: list[str], section: str) -> str:
    """The first few items; the rest counted and left to the section listing them all
    (a line that fills the first screen would push the summary off it)."""
    shown = "; ".join(items[:LISTED])
    rest = len(items) - LISTED
    return shown + (f"; and {rest} more (see {section})." if rest > 0 else ".")


def best_overlays(frame: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    """'TCP between two agents: nebula, 1.82x wireguard' per lead figure of a way to be
    better that two overlays measured on the same variant (the baseline is no overlay;
    a yes/no figure has no order; an implausible figure is no one's best)."""
    metrics = catalogue()
    implausible = implausible_cells(frame)
    lead = summary[summary[METRIC].map(lambda m: is_lead(str(m))).astype(bool)
                   & (summary[OVERLAY] != NATIVE) & (summary[UNIT] != BOOL)]
    plausible = [(str(r[SCENARIO]), str(r[OVERLAY]), str(r[VARIANT]), str(r[METRIC]))
                 not in implausible for r in lead.to_dict("records")]
    lead = lead[pd.Series(plausible, index=lead.index, dtype=bool)]
    lead = lead.assign(order=lead[METRIC].map(lambda m: metrics.order(str(m))))
    said = []
    for _, of_scenario in lead.groupby(SCENARIO, sort=False):  # as the summary's rows
        for (_, metric), rows in of_scenario.groupby(["order", METRIC], sort=True):
            said += best_lines(rows, str(metric))
    return said


def best_lines(rows: pd.DataFrame, metric: str) -> list[str]:
    """One figure's line per variant two overlays measured."""
    metrics = catalogue()
    better = metrics.better(metric)
    said: list[str] = []
    if better is Better.NEITHER:
        return said
    for variant, contenders in comparable(rows).items():
        text = best_text(contenders, better, variant)
        if text:
            where = "" if variant == DEFAULT else f" ({variant})"
            said.append(f"{metrics.label(metric)}{where}: {text}")
    return said


def comparable(rows: pd.DataFrame) -> dict[str, list[Mapping[Hashable, Any]]]:
    """A figure's rows by variant, the ones an overlay ran alone (vnet's tls and plain)
    set beside the default variant as the summary sets them against the baseline's."""
    counts = rows.groupby(VARIANT)[OVERLAY].nunique()
    groups: dict[str, list[Mapping[Hashable, Any]]] = {}
    for record in rows.to_dict("records"):
        variant = str(record[VARIANT])
        shared = counts[variant] > 1 or DEFAULT not in counts.index
        groups.setdefault(variant if shared else DEFAULT, []).append(record)
    return dict(sorted(groups.items(), key=lambda item: natural(item[0])))


def best_text(records: list[Mapping[Hashable, Any]], better: Better,
              variant: str = DEFAULT) -> str | None:
    """The best overlay, against the best figure of another overlay: their ratio, or
    their difference where a ratio says nothing (tables.ratio_to); None with one
    overlay."""
    ranked = sorted(records, key=lambda r: float(r["mean"]), reverse=better is Better.HIGHER)
    best = ranked[0]
    runner_up = next((r for r in ranked if r[OVERLAY] != best[OVERLAY]), None)
    if runner_up is None:
        return None
    name, other = contender(best, variant), contender(runner_up, variant)
    mean, reference = float(best["mean"]), float(runner_up["mean"])
    if mean == reference:
        return f"{name} and {other} alike"
    metric = str(best[METRIC])
    ratio = ratio_to(mean, reference, metric) if mean > 0 else None
    if ratio is not None:
        against = f"{ratio_text(ratio)} {other}"
    else:
        against = f"{difference_text(mean - reference, str(best[UNIT]))} against {other}"
    overlap = float(best["low"]) <= float(runner_up["high"]) and \
        float(runner_up["low"]) <= float(best["high"])
    return f"{name}, {against}" + (" (their passes' ranges overlap)" if overlap else "")


def contender(record: Mapping[Hashable, Any], group: str) -> str:
    """An overlay, with its variant where it is not the line's (vnet tls)."""
    variant = str(record[VARIANT])
    return str(record[OVERLAY]) + ("" if variant == group else f" {variant}")
