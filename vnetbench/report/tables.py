"""Summary tables over passes: the seed's "Measurement | Result" with ranges."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from vnetbench.analysis.results import has_kind, named
from vnetbench.analysis.stats import Summary, format_range, summarise
from vnetbench.core.metrics import BOOL, OUTSIDE_LOAD
from vnetbench.core.outcome import Kind, State, implausible_figures
from vnetbench.core.schema import (
    CELL,
    HOSTS,
    INTERVAL_S,
    MACHINES,
    METHOD,
    METRIC,
    NATIVE,
    OVERLAY,
    PASS,
    REMARK,
    SCENARIO,
    SERIES,
    STATE,
    STATUS,
    UNIT,
    VALUE,
    VARIANT,
    is_parameter_column,
    setting_column,
)
from vnetbench.declared import DECLARATIONS, catalogue
from vnetbench.declared.declaration import PATH_ROLE, AgainstSetting
from vnetbench.methods import Method

GROUP = list(SERIES)
# Columns that describe a row's settings and ride along into the summary: the
# variant's own parameters (var_*), the size of a join or config (set_machines) and
# each setting a declared figure draws a metric against (report.md's line reads it here).
CARRIED = (setting_column(MACHINES), *(
    setting_column(spec.setting) for declared in DECLARATIONS for spec in declared.figures
    if isinstance(spec, AgainstSetting)))
STATUS_ROW = "status"  # the label of a table's row that says why numbers are missing
HOSTS_COLUMN = setting_column(HOSTS)


def carried_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if is_parameter_column(c) or c in CARRIED]


def summary_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (scenario, overlay, variant, series): n, mean, range, CV; a series
    under its one name (metric and dimensions)."""
    measured = measured_pass_values(named(frame))
    carried = carried_columns(frame)
    rows = []
    for key, group in measured.groupby(GROUP, sort=False):
        scenario, overlay, variant, metric, unit = key
        summary = summarise(group[VALUE])
        rows.append({SCENARIO: scenario, OVERLAY: overlay, VARIANT: variant,
                     METRIC: metric, UNIT: unit, "n": summary.n, "mean": summary.mean,
                     "low": summary.low, "high": summary.high, "cv": summary.cv,
                     "result": result_text(summary, str(unit)),
                     **{c: group[c].iloc[0] for c in carried}})
    return pd.DataFrame(rows, columns=[*GROUP, "n", "mean", "low", "high", "cv", "result",
                                       *carried])


def result_text(summary: Summary, unit: str) -> str:
    """A range as people read it; a yes/no metric (unit bool) as yes or no."""
    if unit != BOOL or summary.n == 0:
        return format_range(summary, unit)
    return yes_no(summary.mean, summary.n)


def yes_no(share: float, n: int) -> str:
    """yes, no, or 'yes in 2 of 3' (share: the mean of n values each 1 or 0)."""
    yes = round(share * n)
    return "yes" if yes == n else "no" if yes == 0 else f"yes in {yes} of {n}"


def cv_text(n: int, cv: float) -> str:
    """The coefficient of variation in percent; '-' for one pass (nothing varied)."""
    return "-" if n < 2 or pd.isna(cv) else f"{100 * cv:.1f} %"


def pass_values(frame: pd.DataFrame) -> pd.Series:
    """Rows holding a pass's own value, not a point of a time series (interval_s)."""
    if INTERVAL_S not in frame.columns:
        return pd.Series(True, index=frame.index)
    return frame[INTERVAL_S].isna()


def measured_pass_values(frame: pd.DataFrame) -> pd.DataFrame:
    """A pass's own measured values: no time-series point, no pass that measured
    nothing (failed, dead, not run), no empty value."""
    measured = frame[STATE].map(lambda s: State(s).measured).astype(bool)
    return frame[measured & pass_values(frame)].dropna(subset=[VALUE])


def headline_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The seed-style table: Measurement | Result | n | CV, headline metrics only."""
    metrics = catalogue()
    labels = summary[METRIC].map(lambda m: metrics.headline(str(m)))
    picked = summary[labels.notna()].assign(
        label=labels, order=summary[METRIC].map(lambda m: metrics.order(str(m))))
    picked = picked.sort_values([SCENARIO, "order", OVERLAY, VARIANT])
    measurement = picked.apply(_measurement_name, axis=1)
    return pd.DataFrame({
        "Measurement": measurement, "Result": picked["result"], "n": picked["n"],
        "CV": [cv_text(n, cv) for n, cv in zip(picked["n"], picked["cv"], strict=True)],
    }).reset_index(drop=True)


def overlay_tables(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per scenario, as published benchmarks print them: one row per measurement
    (headline metric and variant), one column per overlay with the range over
    passes, n, CV and, for throughput and RTT, the ratio to the baseline."""
    metrics = catalogue()
    labels = summary[METRIC].map(lambda m: metrics.headline(str(m)))
    picked = summary[labels.notna()].assign(
        label=labels, order=summary[METRIC].map(lambda m: metrics.order(str(m))))
    ratios: dict[tuple[str, str, str, str], float] = {
        (str(r[SCENARIO]), str(r[OVERLAY]), str(r[VARIANT]), str(r[METRIC])):
        float(r["ratio"]) for r in baseline_ratios(summary).to_dict("records")}
    overlays = list(dict.fromkeys(picked[OVERLAY]))
    tables = {}
    for scenario, rows in picked.sort_values(["order", VARIANT]).groupby(
            SCENARIO, sort=False):
        table = []
        for (label, variant), group in rows.groupby(["label", VARIANT], sort=False):
            row = {"measurement": label, VARIANT: variant}
            for record in group.to_dict("records"):
                key = (str(scenario), str(record[OVERLAY]), str(variant),
                       str(record[METRIC]))
                row[str(record[OVERLAY])] = overlay_cell(record, ratios.get(key))
            table.append(row)
        present = [o for o in overlays if any(o in r for r in table)]
        tables[str(scenario)] = pd.DataFrame(table, columns=["measurement", VARIANT,
                                                             *present]).fillna("-")
    return tables


def method_table(frame: pd.DataFrame, method: Method, compact: bool = False) -> pd.DataFrame:
    """A method's table as its reference prints it: a row per step and measurement,
    a column per overlay (range, n, CV; rates and times also against the native
    path of the same step); a status row where an overlay has no numbers or was
    measured otherwise than asked. `compact` (a terminal): ranges and ratios only."""
    rows = frame[frame[METHOD] == method.name] if METHOD in frame.columns else frame[:0]
    summary = summary_table(rows)
    metrics = catalogue()
    overlays = list(dict.fromkeys(rows[OVERLAY]))
    table = []
    for step in method.steps:
        of_step = summary[summary[VARIANT] == step.label]
        for metric in method.rows:
            picked = of_step[of_step[METRIC] == metric]
            if picked.empty:
                continue
            native = picked[picked[OVERLAY] == NATIVE]["mean"]
            reference = (float(native.iloc[0]) if len(native)
                         and str(picked[UNIT].iloc[0]) in RATIO_UNITS else None)
            row = {"step": step.label, "measurement": metrics.label(metric)}
            for record in picked.to_dict("records"):
                mean = float(record["mean"])
                own = record[OVERLAY] == NATIVE
                cell = overlay_cell(record, None if own else ratio_to(mean, reference, metric),
                                    "native", detail=not compact,
                                    difference=None if own else difference_to(
                                        mean, reference, metric))
                row[str(record[OVERLAY])] = cell
            table.append(row)
        table += step_status(rows[rows[VARIANT] == step.label], step.label, compact)
    present = [o for o in overlays if any(o in r for r in table)]
    return pd.DataFrame(table, columns=["step", "measurement", *present]).fillna("-")


def outside_load_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per scenario, overlay and variant: the CPU the host spent outside the testbed
    during its passes (lowest to highest), and which passes were marked for it."""
    rows = frame[frame[METRIC] == OUTSIDE_LOAD.name].dropna(subset=[VALUE])
    if rows.empty:
        return pd.DataFrame({"outside load": ["not recorded (results from before it was)"]})
    table = []
    for (scenario, overlay, variant), group in rows.groupby(
            list(CELL), sort=False):
        marked = group[has_kind(group, Kind.OUTSIDE_LOAD)]
        table.append({SCENARIO: scenario, OVERLAY: overlay, VARIANT: variant,
                      "cores outside the testbed": format_range(summarise(group[VALUE])),
                      "passes marked": ", ".join(str(p) for p in marked[PASS]) or "none"})
    return pd.DataFrame(table)


RATIO_UNITS = frozenset({"Mbit/s", "ms", "s"})  # rates and times: against the native path


def ratio_to(value: float, reference: float | None, metric: str) -> float | None:
    """`value` as a multiple of `reference`, where a ratio says something: a magnitude
    (a rate, a time) against a reference above zero. None for a figure that is itself a
    difference (latency added under load: the baseline's sits at zero within the
    testbed's resolution, and a ratio to it reads "-3.6e+02x") or a reference at or
    below zero; such a figure is set against its reference by `difference_to`."""
    if reference is None or not math.isfinite(reference) or reference <= 0:
        return None
    declared = catalogue().find(metric)
    return None if declared is not None and declared.difference else value / reference


def difference_to(value: float, reference: float | None, metric: str) -> float | None:
    """`value` less `reference` where there is a reference but no ratio (ratio_to)."""
    if reference is None or not math.isfinite(reference):
        return None
    return value - reference if ratio_to(value, reference, metric) is None else None


def difference_text(difference: float, unit: str) -> str:
    """'+21.1 ms (difference)': signed, said to be a difference, not a ratio."""
    return f"{difference:+.3g} {unit} (difference)".replace("  ", " ")


def ratio_text(ratio: float) -> str:
    """Two decimals from 0.1 to 10; below, two significant digits (0.036x, not
    0.04x); above, whole (192x)."""
    if ratio >= 10:
        return f"{ratio:.0f}x"
    return f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def step_status(rows: pd.DataFrame, label: str, compact: bool) -> list[dict[str, str]]:
    """A status row for a step where some overlay did not measure (with why)."""
    said = rows[rows[STATUS] != "ok"]  # not measured, or measured as adjusted
    if said.empty:
        return []
    row = {"step": label, "measurement": STATUS_ROW}
    for overlay, group in rows.groupby(OVERLAY, sort=False):
        text = "; ".join(sorted({str(s) for s in group[STATUS]}))
        row[str(overlay)] = text if not compact or len(text) < 80 else text[:77] + "..."
    return [row]


def overlay_cell(record: Mapping[Hashable, Any], ratio: float | None,
                 against: str = NATIVE, detail: bool = True,
                 difference: float | None = None) -> str:
    """A range with its n and CV (none for a single pass: nothing varied), and its
    ratio to `against`, or its difference where a ratio says nothing (ratio_to)."""
    cv, n = record["cv"], int(record["n"])
    known = isinstance(cv, float) and not math.isnan(cv)
    spread = f", CV {100 * cv:.1f} %" if known else ""
    text = str(record["result"])
    if detail and n > 1:
        text += f" (n {n}{spread})"
    if ratio is not None:
        return f"{text}, {ratio:.3g}x {against}"
    if difference is not None:
        return f"{text}, {difference_text(difference, str(record[UNIT]))} to {against}"
    return text


def _measurement_name(row: pd.Series) -> str:
    variant = "" if row[VARIANT] == "default" else f", {row[VARIANT]}"
    return f"{row['label']} ({row[OVERLAY]}{variant})"


def baseline_ratios(summary: pd.DataFrame) -> pd.DataFrame:
    """Overlay / baseline for a path's TCP rate and round trip (PATH_ROLE's metrics, its
    player's rows), per scenario and variant."""
    rows = []
    for metric in PATH_ROLE.metrics:
        of_metric = summary[summary[METRIC] == metric]
        baseline = of_metric[of_metric[OVERLAY] == NATIVE]
        if baseline.empty:
            continue
        reference = {str(k): float(v)
                     for k, v in baseline.groupby(SCENARIO)["mean"].mean().items()}
        for row in of_metric[of_metric[OVERLAY] != NATIVE].to_dict("records"):
            ratio = ratio_to(float(row["mean"]), reference.get(str(row[SCENARIO])), metric)
            if ratio is not None:
                rows.append({SCENARIO: row[SCENARIO], OVERLAY: row[OVERLAY],
                             VARIANT: row[VARIANT], METRIC: metric, "ratio": ratio})
    return pd.DataFrame(rows, columns=[SCENARIO, OVERLAY, VARIANT, METRIC, "ratio"])


def raw_fractions(summary: pd.DataFrame, raw_mbit: float | None) -> pd.DataFrame:
    """Each overlay's TCP throughput as a fraction of the machine's limit (a bare veth
    pair measured in the same matrix)."""
    columns = [SCENARIO, OVERLAY, VARIANT, "tcp Mbit/s", "of raw veth"]
    rate, _ = PATH_ROLE.metrics
    tcp = summary[summary[METRIC] == rate]
    if not raw_mbit or tcp.empty:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame([{SCENARIO: row[SCENARIO], OVERLAY: row[OVERLAY],
                          VARIANT: row[VARIANT], "tcp Mbit/s": round(float(row["mean"]), 1),
                          "of raw veth": f"{float(row['mean']) / raw_mbit:.3f}"}
                         for row in tcp.to_dict("records")], columns=columns)


NO_VALUE = "measured, but no row holds a value"
PASS_KEY = [SCENARIO, OVERLAY, VARIANT, PASS]


def problems(frame: pd.DataFrame) -> pd.DataFrame:
    """Passes that produced no numbers, or partial ones, or a figure said implausible
    (vnetbench/analysis/plausibility.py), with the reason; a pass said to be measured whose every
    row is empty is one of them (else it vanishes from every table without a word)."""
    empty = frame[VALUE].isna().groupby([frame[k] for k in PASS_KEY], dropna=False
                                        ).transform("all")
    implausible = frame[STATUS].map(lambda status: bool(implausible_figures(str(status))))
    said = (frame[STATE] != State.OK) | implausible.astype(bool)  # its status says why
    bad = frame[said | empty]
    bad = bad.assign(**{STATUS: bad[STATUS].where(said[bad.index], NO_VALUE)})
    return (bad.groupby([SCENARIO, OVERLAY, VARIANT, STATUS])[PASS]
            .apply(lambda p: ",".join(str(v) for v in sorted(set(p))))
            .reset_index(name="passes"))


def implausible_cells(frame: pd.DataFrame) -> set[tuple[str, str, str, str]]:
    """(scenario, overlay, variant, metric) of every figure a pass's status says is
    implausible, for the summary to mark."""
    said = frame.drop_duplicates([SCENARIO, OVERLAY, VARIANT, STATUS])
    return {(str(r[SCENARIO]), str(r[OVERLAY]), str(r[VARIANT]), figure)
            for r in said.to_dict("records") for figure in implausible_figures(str(r[STATUS]))}


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
    headline = summary[METRIC].map(lambda m: metrics.headline(str(m)) is not None)
    picked = summary[headline.astype(bool)]  # an empty object Series would pick columns
    if picked.empty and frame.empty:
        return pd.DataFrame()
    table = picked.pivot_table(index=[SCENARIO, METRIC], columns=OVERLAY,
                               values="result", aggfunc="first").reset_index()
    table = pd.concat([table, status_rows(frame)], ignore_index=True)
    ratios = baseline_ratios(summary)
    for row in ratios.to_dict("records"):
        column = f"{row[OVERLAY]}/{NATIVE}"
        mask = (table[SCENARIO] == row[SCENARIO]) & (table[METRIC] == row[METRIC])
        table.loc[mask, column] = f"{row['ratio']:.3g}"
    return with_hosts(table.fillna("-"), frame)


def with_hosts(table: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """A run on several hosts (a swarm): a column saying where each role ran, on each
    scenario's first row."""
    if HOSTS_COLUMN not in frame.columns or frame[HOSTS_COLUMN].isna().all():
        return table
    hosts = frame.dropna(subset=[HOSTS_COLUMN]).groupby(SCENARIO, sort=False)[HOSTS_COLUMN]
    placed = hosts.agg(lambda values: " | ".join(dict.fromkeys(str(v) for v in values)))
    first = ~table[SCENARIO].duplicated()
    column = table[SCENARIO].map(placed).fillna("-").where(first, "")
    table.insert(2, "ran on", column)
    return table


def status_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Per scenario, each overlay's states (ok, path dead, partial, not supported...)
    with the overlay's remark when it adjusted the settings, so a missing or a
    differently measured number is explained."""
    rows = []
    for scenario, of_scenario in frame.groupby(SCENARIO, sort=False):
        row = {SCENARIO: scenario, METRIC: STATUS_ROW}
        for overlay, group in of_scenario.groupby(OVERLAY, sort=False):
            states = ", ".join(sorted({str(s) for s in group[STATE]}))
            remarks = sorted({str(r) for r in group.get(REMARK, pd.Series()) if r})
            row[str(overlay)] = f"{states} ({'; '.join(remarks)})" if remarks else states
        rows.append(row)
    return pd.DataFrame(rows)
