"""The result documents `--json` prints and `--json-file` writes for the measuring
commands (run, matrix, sweep), capacity, calibrate and doctor: pydantic models built
from the typed records each command already has (run.json's RunRecord, the --slo
targets checked, the failed cells, capacity's search, calibrate's figures, doctor's
diagnosis), so the document, its schema (vnetbench/generators/fileschemas.py,
generated from these models) and the terminal cannot say different things.

Each document carries `format_version` (DOCUMENT_VERSION: raised when a key changes
meaning or goes; a key added is optional to readers) and `exit_status`, the status
the command exits with, so a CI job reading the document needs nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from pydantic import Field

from vnetbench.analysis.slo import Checked
from vnetbench.analysis.venue import VenueVerdict
from vnetbench.core.model import Model
from vnetbench.deploy.doctor import Check
from vnetbench.runs.capacity import Clause, Step
from vnetbench.runs.targets import Figure
from vnetbench.terminal.exitstatus import FailedCell

if TYPE_CHECKING:
    import pandas as pd

    from vnetbench.deploy.doctor import Diagnosis
    from vnetbench.runs.capacity import CapacityPlan, Search

DOCUMENT_VERSION: Literal[1] = 1
MeasuringCommand = Literal["run", "matrix", "sweep"]


class Document(Model):
    """What every result document begins with."""

    format_version: Literal[1] = Field(
        DOCUMENT_VERSION, description="the document's format; a new key may be added "
        "within a format, a changed or removed one makes the next")
    command: str = Field(description="the command that printed it")
    exit_status: int = Field(description="the status the command exits with "
                             "(docs/exit-status.md): 0 everything measured and every "
                             "target met, 1 a measured miss, 3 the environment")


class CellFigure(Model):
    """One series of one cell over its measured passes (a pass that failed, was dead
    or not run is left out, as the report and --slo leave it)."""

    scenario: str
    overlay: str
    variant: str
    method: str = Field(description="the reference method's name; '' outside one")
    metric: str = Field(description="the series' one name (metric and dimensions)")
    unit: str
    passes: int = Field(ge=1, description="measured passes with a value")
    median: float
    mean: float
    low: float
    high: float


class MeasuredDocument(Document):
    """What `run`, `matrix` and `sweep` print with --json: where the results are, how
    the run ended, each cell's figures, the --slo targets checked and the cells with
    a failed or dead pass."""

    command: MeasuringCommand
    directory: str = Field(description="the results directory (results.parquet, "
                           "run.json, the report)")
    kind: str | None = Field(description="run.json's kind")
    status: str | None = Field(description="run.json's status: completed, or how it "
                               "ended otherwise")
    started: str | None
    ended: str | None
    overlays: list[str] = Field(description="those the results hold, in their order "
                                "(run.json's without results)")
    figures: list[CellFigure]
    targets: list[Checked] = Field(description="each --slo target on each cell of its "
                                   "scenario")
    failed: list[FailedCell] = Field(description="the cells with a failed pass or a dead "
                                     "path: a miss unless allow_failed")
    allow_failed: bool
    venue: VenueVerdict | None = Field(None, description="the room's venue verdict on "
                                       "its targets: per cell held, or the first target "
                                       "missed in the contest's order (phase, event); "
                                       "null without a room target")


def measured_document(command: str, directory: Path,
                      frame: pd.DataFrame, targets: Sequence[Checked],
                      failed: Sequence[FailedCell], allow_failed: bool,
                      status: int, venue: VenueVerdict | None = None) -> MeasuredDocument:
    from vnetbench.analysis.runrecord import read_record

    record = read_record(directory)
    return MeasuredDocument(
        command=cast(MeasuringCommand, command), exit_status=status,
        directory=str(directory), kind=record.kind, status=record.status,
        started=record.started, ended=record.ended,
        overlays=[str(o) for o in dict.fromkeys(frame["overlay"])] if len(frame)
        else list(record.overlays), figures=cell_figures(frame),
        targets=list(targets), failed=list(failed), allow_failed=allow_failed,
        venue=venue)


def cell_figures(frame: pd.DataFrame) -> list[CellFigure]:
    """Each cell's series over its measured passes, in the order the results hold them."""
    from vnetbench.analysis.results import named
    from vnetbench.core.schema import METHOD, METRIC, OVERLAY, SCENARIO, UNIT, VALUE, VARIANT
    from vnetbench.report.tables import measured_pass_values

    if frame.empty:
        return []
    rows = measured_pass_values(named(frame))
    rows = rows.assign(**{METHOD: rows[METHOD].fillna("").astype(str)
                          if METHOD in rows.columns else ""})
    keys = [SCENARIO, OVERLAY, VARIANT, METHOD, METRIC, UNIT]
    figures = []
    for key, group in rows.groupby(keys, sort=False):
        values = group[VALUE].astype(float)
        scenario, overlay, variant, method, metric, unit = (str(part) for part in key)
        figures.append(CellFigure(
            scenario=scenario, overlay=overlay, variant=variant, method=method,
            metric=metric, unit=unit, passes=len(values), median=float(values.median()),
            mean=float(values.mean()), low=float(values.min()), high=float(values.max())))
    return figures


class CapacityDocument(Document):
    """What `capacity` prints with --json: the search's plan, every step it took, the
    largest size that met the target and the limit at the smallest that missed."""

    command: Literal["capacity"] = "capacity"
    directory: str
    overlay: str
    by: Literal["machines", "rate"] = Field(description="what grew: the room's "
                                            "machines, or each machine's requests/s")
    slo: list[Clause] = Field(description="the target, clause by clause")
    start: float
    max: float
    precision: float
    passes: int
    largest: float | None = Field(description="the largest size that met the target; "
                                  "null: none did (exit 1)")
    smallest_missed: float | None = Field(description="the smallest size that missed; "
                                          "null: every size tried met it")
    limit: str | None = Field(description="what ran out first at the smallest size that "
                              "missed (the host, a role's CPU, the overlay)")
    steps: list[Step] = Field(description="in the order they ran")


def capacity_document(plan: CapacityPlan, search: Search, directory: Path,
                      status: int) -> CapacityDocument:
    miss = search.first_miss()
    by: Literal["machines", "rate"] = "rate" if plan.dimension == "rate" else "machines"
    return CapacityDocument(
        exit_status=status, directory=str(directory), overlay=plan.overlay.name, by=by,
        slo=plan.clauses, start=plan.start, max=plan.most, precision=plan.precision,
        passes=plan.passes, largest=search.best(),
        smallest_missed=miss.size if miss else None, limit=miss.limit if miss else None,
        steps=search.steps)


class DoctorDocument(Document):
    """What `doctor` prints with --json: each check and the verdict."""

    command: Literal["doctor"] = "doctor"
    ready: bool = Field(description="every required check passed (exit 0; else 3)")
    checks: list[Check]


def doctor_document(diagnosis: Diagnosis, status: int) -> DoctorDocument:
    return DoctorDocument(exit_status=status, ready=diagnosis.ready,
                          checks=diagnosis.checks)


class CalibrationDocument(Document):
    """What `calibrate` prints with --json: each figure against its target (as
    calibration.json keeps them, beside the breakdowns)."""

    command: Literal["calibrate"] = "calibrate"
    directory: str
    figures: list[Figure] = Field(description="met: null for a reference figure (no "
                                  "target) or one with a target not measured (exit 3)")


def calibration_document(directory: Path, figures: Sequence[Figure],
                         status: int) -> CalibrationDocument:
    return CalibrationDocument(exit_status=status, directory=str(directory),
                               figures=list(figures))
