"""The report's first screen: which overlay, how far from the baseline, and is it
real. A row per scenario's lead figure (the metric catalogue marks them: `lead`),
a column per overlay (the baseline first) with the mean over passes, its spread
when there were several passes and its ratio to the baseline, and, in an A/B or
A/A directory, the verdict on that metric. report.md and report.html show the
same table (vnetbench/report/document.py)."""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from vnetbench.analysis.stats import Verdict
from vnetbench.core.metrics import BOOL
from vnetbench.core.schema import METRIC, NATIVE, OVERLAY, SCENARIO, STATE, UNIT, VARIANT
from vnetbench.declared import catalogue
from vnetbench.report.tables import (
    RATIO_UNITS,
    difference_text,
    difference_to,
    implausible_cells,
    ratio_text,
    ratio_to,
    yes_no,
)

# rates and times read as a ratio; a share, a percentage or a count of 0 does not
LEAD_RATIO_UNITS = RATIO_UNITS | {"transactions/s", "µs"}
VERDICT = "verdict"
# after a figure some pass said was implausible (vnetbench/analysis/plausibility.py)
IMPLAUSIBLE_SAID = " (implausible: see Passes without numbers)"
COUNT = "count"  # a count's figure is its number
SHOWN_SPREAD = 0.005  # a CV below half a percent reads as "±<1 %"
Key = tuple[str, str, str]  # scenario, variant, metric


def lead_table(frame: pd.DataFrame, summary: pd.DataFrame,
               verdicts: pd.DataFrame | None = None) -> pd.DataFrame:
    """scenario | measurement | an overlay per column [| verdict]: a row per scenario's
    lead metric, in the order the results hold the scenarios. Where the row's
    overlays ran several variants (join sizes, vnet's TLS and plain, an A/B's arms),
    a cell lists its variants' figures: 'n20 0.41 s; n50 0.93 s'."""
    metrics = catalogue()
    lead = summary[summary[METRIC].map(lambda m: is_lead(str(m))).astype(bool)]
    if lead.empty:
        return pd.DataFrame({"summary": ["no lead figure was measured (see the tables below)"]})
    lead = lead.assign(order=lead[METRIC].map(lambda m: metrics.order(str(m))),
                       label=lead[METRIC].map(lambda m: metrics.label(str(m))))
    baselines = Baselines(lead[lead[OVERLAY] == NATIVE])
    overlays = sorted(dict.fromkeys(frame[OVERLAY].astype(str)), key=lambda o: o != NATIVE)
    judged = verdict_texts(verdicts)
    implausible = implausible_cells(frame)
    rows = []
    for scenario, of_scenario in lead.groupby(SCENARIO, sort=False):
        for (_, metric), group in of_scenario.groupby(["order", METRIC], sort=True):
            variants = sorted(set(group[VARIANT].astype(str)), key=natural)
            named = variants != ["default"] and len(variants) > 1
            label = str(group["label"].iloc[0])
            row = {SCENARIO: str(scenario), "measurement": label if named or variants == [
                "default"] else f"{label} ({variants[0]})"}
            for overlay in overlays:
                records = sorted(group[group[OVERLAY] == overlay].to_dict("records"),
                                 key=lambda r: natural(str(r[VARIANT])))
                row[overlay] = "; ".join(
                    (f"{r[VARIANT]} " if named and r[VARIANT] != "default" else "")
                    + figure_text(r, baselines.of(r), unit_said=label.endswith(f"({r[UNIT]})"))
                    + (IMPLAUSIBLE_SAID if (str(scenario), overlay, str(r[VARIANT]),
                                            str(metric)) in implausible else "")
                    for r in records) or (
                        "not given" + IMPLAUSIBLE_SAID
                        if any(c[0] == scenario and c[1] == overlay and c[3] == metric
                               for c in implausible)
                        else missing_text(frame, str(scenario), overlay))
            if judged:
                row[VERDICT] = judged.get((str(scenario), str(metric)), "")
            rows.append(row)
    table = pd.DataFrame(rows)
    table[SCENARIO] = table[SCENARIO].where(~table[SCENARIO].duplicated(), "")
    return table


class Baselines:
    """The baseline's means a figure is set against: of the same scenario, variant and
    metric, else of the scenario's default variant (vnet's tls against the plain path)."""

    def __init__(self, rows: pd.DataFrame) -> None:
        self.means = {key(r): float(r["mean"]) for r in rows.to_dict("records")}

    def of(self, record: Mapping[Hashable, Any]) -> float | None:
        scenario, variant, metric = key(record)
        return self.means.get((scenario, variant, metric),
                              self.means.get((scenario, "default", metric)))


def natural(text: str) -> list[Any]:
    """n20 before n100: digits compared as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def is_lead(name: str) -> bool:
    metric = catalogue().find(name)
    return bool(metric and metric.lead)


def key(record: Mapping[Hashable, Any]) -> Key:
    return str(record[SCENARIO]), str(record[VARIANT]), str(record[METRIC])


def figure_text(record: Mapping[Hashable, Any], baseline: float | None,
                unit_said: bool = False) -> str:
    """'640 Mbit/s ±3 %, 0.04x': the mean over passes, the CV when several passes
    varied, the ratio to the baseline's mean (its difference where a ratio says
    nothing: tables.ratio_to); a yes/no metric as yes or no; no unit
    for a count or where the measurement's label says it."""
    unit, n, mean, cv = str(record[UNIT]), int(record["n"]), float(record["mean"]), record["cv"]
    if unit == BOOL:
        return yes_no(mean, n)
    shown = "" if unit_said or unit == COUNT else unit
    text = f"{rounded(mean)} {shown}".strip()
    if n > 1 and pd.notna(cv):
        text += " ±<1 %" if cv < SHOWN_SPREAD else f" ±{100 * cv:.0f} %"
    if record[OVERLAY] == NATIVE or unit not in LEAD_RATIO_UNITS or baseline is None:
        return text
    metric = str(record[METRIC])
    ratio = ratio_to(mean, baseline, metric)
    if ratio is not None:
        return f"{text}, {ratio_text(ratio)}"
    difference = difference_to(mean, baseline, metric)
    return text if difference is None else f"{text}, {difference_text(difference, unit)}"


def rounded(value: float) -> str:
    """Whole from 100 up, else three significant digits: 19786, 0.0643, 2.2."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def missing_text(frame: pd.DataFrame, scenario: str, overlay: str) -> str:
    """Why an overlay has no figure: its passes' states (path dead, failed...), or '-'
    when it did not run this scenario at all."""
    rows = frame[(frame[SCENARIO] == scenario) & (frame[OVERLAY] == overlay)]
    states = sorted({str(s) for s in rows[STATE]} - {"ok"})
    return ", ".join(states) if states else "-"


def verdict_texts(verdicts: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """(scenario, metric) -> 'worse: B/A 0.93, p 0.008', from an ab's verdicts.csv."""
    if verdicts is None:
        return {}
    texts = {}
    for row in verdicts.to_dict("records"):
        verdict = str(row[VERDICT])
        if verdict in (Verdict.BETTER, Verdict.WORSE, Verdict.NO_CHANGE) \
                and pd.notna(row["ratio"]):
            p = f", p {row['p_value']:.3f}" if pd.notna(row["p_value"]) else ""
            verdict += f": B/A {row['ratio']:.3f}{p}"
        texts[(str(row[SCENARIO]), str(row[METRIC]))] = verdict
    return texts


def lead_note(verdicts: pd.DataFrame | None) -> str:
    """What the summary's figures are, in one paragraph."""
    text = ("Each scenario's lead figures, an overlay per column: the mean over passes, "
            "±CV where several passes varied, and for rates and times the ratio to "
            f"`{NATIVE}` on the same scenario and variant (0.50x: half its figure); "
            "for a figure that is itself a difference (latency added under load) or "
            "against a baseline at or below zero, where a ratio says nothing, the "
            "difference to it instead (+21 ms (difference): 21 ms more). A figure a "
            "pass said the testbed's mechanism cannot produce is marked "
            f"`{IMPLAUSIBLE_SAID.strip()}`, or `not given` where it was withheld. "
            "The tables below give every range.")
    if verdicts is not None:
        text += (" Verdict: B against A over the interleaved rounds (the A/B section "
                 "says how).")
    return text
