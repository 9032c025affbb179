"""The report as a list of blocks (headings, text, tables, figures), whatever it is
rendered to: report.md (vnetbench/report/markdown.py) and report.html
(vnetbench/report/html.py) read the same blocks, so both say the same things
from the same tables (vnetbench/report/tables.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.analysis.results import PARQUET, load_results
from vnetbench.analysis.runrecord import TIMING_PARTS, RunRecord, read_record
from vnetbench.analysis.slo import targets_table
from vnetbench.core.schema import BACKBONE_LINKS, CELL, METHOD, SITE_LINKS, setting_column
from vnetbench.errors import UserError
from vnetbench.methods import METHODS
from vnetbench.report.ab import VERDICTS_FILE, read_verdicts, verdict_summary
from vnetbench.report.raw import RawCell, raw_cells
from vnetbench.report.summary import lead_note, lead_table
from vnetbench.report.tables import (
    baseline_ratios,
    cv_text,
    headline_table,
    method_table,
    outside_load_table,
    overlay_tables,
    problems,
    raw_fractions,
    summary_table,
)
from vnetbench.report.verdict import TARGETS_SECTION, Verdict, checked_targets, verdict_lines


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str  # one paragraph; `code` spans as in Markdown


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Verdicts:
    """The verdict lines above the summary (vnetbench/report/verdict.py)."""

    lines: list[Verdict]


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame


class Plots(StrEnum):
    HEADLINE = "headline"  # each plotted headline metric per overlay (metrics.py: plot)
    OTHER = "other"  # latency CDFs, timelines, join against N, sweeps


@dataclass(frozen=True)
class Figures:
    """Where a renderer puts its plots: the results' own (method None; its headline
    plots or the others) or a reference method's time series."""

    method: str | None = None
    plots: Plots = Plots.OTHER


@dataclass(frozen=True)
class Contents:
    """Where a renderer lists the report's sections (its level-2 headings) as links."""


@dataclass(frozen=True)
class RawFiles:
    cells: list[RawCell]


Block = Heading | Text | Bullets | Verdicts | Table | Figures | RawFiles | Contents


@dataclass(frozen=True)
class Report:
    """A results directory read once: its run.json, rows, summary and blocks."""

    directory: Path
    record: RunRecord
    frame: pd.DataFrame  # every row (methods' too)
    summary: pd.DataFrame  # the scenarios' rows over passes (no method's)
    headline: pd.DataFrame
    blocks: list[Block] = field(default_factory=list)


def load_directory(directory: Path) -> tuple[RunRecord, pd.DataFrame]:
    if not (directory / PARQUET).exists():
        raise UserError(
            f"{directory} holds no {PARQUET}: give a results directory written by "
            "'vnetbench matrix' or 'vnetbench run' (e.g. results/2026-11-29-2cpu)."
        )
    return read_record(directory), load_results(directory)


def read_report(directory: Path) -> Report:
    """The whole report of a results directory, as blocks."""
    record, frame_all = load_directory(directory)
    frame = frame_all[frame_all[METHOD] == ""]
    summary = summary_table(frame)
    headline = headline_table(summary)
    ratios = baseline_ratios(summary)
    ratios["ratio"] = ratios["ratio"].map(lambda r: f"{r:.3f}")
    verdicts = read_verdicts(directory) if (directory / VERDICTS_FILE).exists() else None
    every = summary_table(frame_all)
    full = every.drop(columns=["mean", "low", "high"]).assign(
        cv=[cv_text(n, cv) for n, cv in zip(every["n"], every["cv"], strict=True)])
    blocks: list[Block] = [
        Heading(f"vnetbench results: {directory.name}", 1),
        Heading("Summary"), Verdicts(verdict_lines(frame_all, summary, record)),
        Table(lead_table(frame, summary, verdicts)),
        Text(lead_note(verdicts)),
        Contents(),
        Heading("Headline plots"), Figures(plots=Plots.HEADLINE),
        Heading("Machine and software"), Bullets(machine_lines(record)),
        Heading("Results"),
        Text("One table per scenario: a row per measurement, a column per overlay (range "
             "over passes, lowest to highest, with n, the number of passes, and CV, their "
             "coefficient of variation, when there were several; throughput and RTT also "
             "as a ratio to the baseline)."),
        *(block for scenario, table in overlay_tables(summary).items()
          for block in (Heading(scenario, 3), Table(table))),
        *method_sections(frame_all),
        *ab_section(directory, record),
        Heading("Results as one list"), Table(headline),
        Heading("Overlay / baseline"), Table(ratios),
        Heading("Against this machine's limit"), Text(raw_limit_text(record)),
        Table(raw_fractions(summary, raw_limit(record))),
        *targets_section(frame_all, record),
        Heading("Passes without numbers"), Table(problems(frame_all)),
        Heading("Outside load"),
        Text("CPU the host spent outside the testbed (other programs) during each pass; a "
             "pass beside a tenth of the machine's cores or more is marked in its status: "
             "its figure may be the machine's, not the overlay's."),
        Table(outside_load_table(frame_all)),
        Heading("Links"),
        Text("Each profile applies to each direction across a segment; offloads=on means "
             "loss removes whole TSO/GSO segments, offloads=off per-packet fidelity."),
        Table(links_table(frame_all)),
        *time_section(record),
        Heading("Raw files"),
        Text("Each cell's run directory and the tools' raw output in it (iperf3 JSON, "
             "ping text, pv counts), relative to this directory."),
        RawFiles(raw_cells(directory, frame_all, record)),
        Heading("Every metric"), Table(full),
        Heading("More plots"), Figures(plots=Plots.OTHER),
    ]
    return Report(directory, record, frame_all, summary, headline, blocks)


def targets_section(frame: pd.DataFrame, record: RunRecord) -> list[Block]:
    """The --slo targets the run was given (run.json), each on each cell, as the run's
    own table printed them."""
    if not record.targets:
        return []
    return [Heading(TARGETS_SECTION),
            Text("Each target the run was given (`--slo`) on each cell it applies to: the "
                 "median of the cell's measured passes; a cell that measured none misses."),
            Table(targets_table(checked_targets(frame, record.targets)))]


def machine_lines(record: RunRecord) -> list[str]:
    machine, engine = record.machine, record.engine
    lines = [
        f"Machine: {machine.get('cpu_model', '?')}, {machine.get('cores', '?')} cores, "
        f"{machine.get('memory_gib', '?')} GiB, Linux {machine.get('kernel', '?')}, "
        f"{machine.get('os', '')}",
        f"Docker {engine.get('server_version', '?')}, "
        f"Compose {engine.get('compose_version', '?')}",
        f"vnetbench {machine.get('vnetbench_version', '?')}; "
        f"{record.started or '?'} to {record.ended or '?'}"
        + (" (quick)" if record.quick else ""),
    ]
    for name, facts in record.overlays.items():
        lines.append(f"{name}: {facts.get('version', '?')}; path {facts.get('data_path', '?')}")
    return lines


def method_sections(frame: pd.DataFrame) -> list[Block]:
    """One section per reference method in the results: what it reproduces, how it
    differs, its table, and its time-series plots."""
    blocks: list[Block] = []
    for name in dict.fromkeys(frame[METHOD]):
        if not name or name not in METHODS:
            continue
        method = METHODS[name]
        blocks += [Heading(f"Method: {name}"),
                   Text(f"{method.summary}. Reference: `{method.reference}`. Differences: "
                        f"{method.differences}."),
                   Table(method_table(frame, method)), Figures(name)]
    return blocks


def ab_section(directory: Path, record: RunRecord) -> list[Block]:
    """An A/B's (or A/A's) verdicts over its interleaved rounds, with what each arm was."""
    if not (directory / VERDICTS_FILE).exists():
        return []
    table, sentence, _ = verdict_summary(directory)
    arms = record.arms
    title = "A/A: this machine's noise floor" if record.aa else "A/B: verdicts"
    described = [f"{label}: {' '.join(arm.get('spec', [])) or 'the topology as it is'} "
                 f"({arm.get('overlay', '?')})" for label, arm in arms.items()]
    return [Heading(title), Bullets(described),
            Text("Rounds of one bring-up each of A and B, in the order AB, BA, AB...; per "
                 "metric, B/A is the Hodges-Lehmann estimate over the rounds' pairs with its "
                 "95 % interval, p the exact Wilcoxon signed-rank test's; a change counts "
                 "when p < 0.05 and it exceeds the minimum effect. In an A/A, 'A/A noise' is "
                 "the largest difference between the two bring-ups of one round (noise.json, "
                 "read by `compare --noise`)."),
            Text(sentence), Table(table)]


def raw_limit(record: RunRecord) -> float | None:
    value = record.calibration.get("raw_veth_mbit")
    return float(value) if value else None


def raw_limit_text(record: RunRecord) -> str:
    calibration = record.calibration
    if not raw_limit(record):
        said = calibration.get("error")
        return (f"Not measured: {said}" if said else
                "Not measured (the matrix's first cell, a bare veth pair, did not run).")
    text = (f"A bare veth pair between two namespaces: {calibration['raw_veth_mbit']:.0f} "
            f"Mbit/s (median of {len(calibration.get('raw_veth_passes', []))} streams of "
            f"{calibration.get('seconds', '?')} s")
    brackets = [b for b in calibration.get("brackets", []) if "raw_veth_mbit" in b]
    if len(brackets) < 2:
        text += ", measured before the first cell only)."
    else:
        moved = float(calibration.get("moved_percent", 0.0))
        text += (", the higher of the medians measured before the first cell and after "
                 "the last: " + " and ".join(f"{b['raw_veth_mbit']:.0f}" for b in brackets)
                 + f" Mbit/s). The machine's limit moved {moved:.0f} % during the matrix"
                 + ("; cells measured at its low may read slower than they are."
                    if moved >= 10 else "."))
    return text + " `vnetbench calibrate` says where the rest of a path's time goes."


def time_section(record: RunRecord) -> list[Block]:
    """Where the time went: seconds per cell, and which cells shared a stack."""
    blocks: list[Block] = [
        Heading("Where the time went"),
        Text("Seconds per cell: the testbed's bring-up (with shaping), what join spends "
             "around each release (programs stopped and started again between passes, the "
             "wait for a quiet host) and teardown (with saving logs) beside the "
             "measurement itself.")]
    if record.shared_stacks:
        blocks += [Text(SHARED_STACKS_TEXT), Bullets(shared_stack_lines(record))]
    return [*blocks, Table(timing_table(record))]


SHARED_STACKS_TEXT = (
    "Cells of one shape on one overlay shared a stack: brought up once, measured one "
    "cell after another, torn down once. Such a cell's row holds its own measurement "
    "(its stack named in the `stack` column); its stack's row holds the bring-up, "
    "restarts and teardown, counted once, beside its cells' measurement together (so "
    "its testbed share is theirs). The stacks and the cells that shared each:")


def shared_stack_lines(record: RunRecord) -> list[str]:
    return [f"stack {number} (run {stack.run}): {', '.join(stack.cells)}"
            for number, stack in enumerate(record.shared_stacks, 1)]


def timing_table(record: RunRecord) -> pd.DataFrame:
    """Per cell (matrix) or per stack (run): bring-up, measurement, teardown, and the
    testbed's share of the total; a matrix whose cells shared stacks adds a row per
    shared stack and a `stack` column."""
    cells = record.cell_timings or {stack_label(t): t for t in record.timings}
    if not cells:
        return pd.DataFrame({"timings": ["not recorded (a run before this was kept)"]})
    stack_of = {cell: f"stack {number}"
                for number, stack in enumerate(record.shared_stacks, 1) for cell in stack.cells}
    rows = [timing_row(cell, spans, stack_of.get(cell)) for cell, spans in cells.items()]
    rows += [timing_row(f"stack {number}", stack.model_dump(), None)
             for number, stack in enumerate(record.shared_stacks, 1)]
    frame = pd.DataFrame(rows)
    if stack_of:
        frame.insert(1, "stack", [stack_of.get(name, name if name.startswith("stack ")
                                               else "own") for name in frame["cell"]])
    return frame


def stack_label(stack: dict[str, Any]) -> str:
    """A single run's stack: its first scenario and passes, and the cells measured on it
    when several shared it (a method's steps, a matrix's cells of one shape)."""
    label = f"{stack.get('scenario')} passes {stack.get('passes')}"
    cells = list(stack.get("cells", {}))
    return f"{label}, one stack for: {', '.join(cells)}" if len(cells) > 1 else label


def timing_row(name: str, spans: dict[str, Any], stack: str | None) -> dict[str, Any]:
    """One row of the time table; a cell measured on a shared stack has its testbed
    share in its stack's row."""
    up, restart, measure, down = (float(spans.get(k, 0.0)) for k in TIMING_PARTS)
    total = up + restart + measure + down
    share = (f"in {stack}" if stack else
             f"{100 * (up + restart + down) / total:.0f} %" if total else "-")
    return {"cell": name, "bring-up s": round(up, 1), "restarts s": round(restart, 1),
            "measurement s": round(measure, 1), "teardown s": round(down, 1),
            "total s": round(total, 1), "testbed share": share}


def links_table(frame: pd.DataFrame) -> pd.DataFrame:
    named = {setting_column(segment): segment for segment in (SITE_LINKS, BACKBONE_LINKS)}
    columns = [c for c in named if c in frame.columns]
    if not columns:
        return pd.DataFrame({"links": ["not recorded"]})
    return frame[[*CELL, *columns]].drop_duplicates().rename(columns=named)
