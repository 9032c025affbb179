"""Results: one tidy row per measured value, written after every pass.

The columns, and the row each value makes, are vnetbench.core.schema's. A metric's
dimensions (its fault, role, quantile...) are columns of their own; results written
before they were, with the dimensions in the metric's name, are upgraded as they are
read (`with_dimensions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import inf
from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.core.metrics import MAGNITUDE_UNITS
from vnetbench.core.outcome import Kind, State, kinds_of_status, state_of_status
from vnetbench.core.schema import (
    COLUMNS,
    DIMENSIONS,
    INTERVAL_S,
    KINDS,
    METHOD,
    METRIC,
    OVERLAY,
    PASS,
    REMARK,
    RUN_ID,
    SCENARIO,
    STATE,
    STATUS,
    UNIT,
    VALUE,
    VARIANT,
    CellKey,
    ResultRow,
)
from vnetbench.declared import catalogue
from vnetbench.errors import UserError
from vnetbench.files import write_atomic, write_parquet, write_text_atomic
from vnetbench.terminal.ui import note

PARQUET = "results.parquet"
CSV = "results.csv"
RESULT_LINES = "results.txt"


@dataclass
class ResultSet:
    """The rows and RESULT lines of a results directory, written after every pass."""

    directory: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @classmethod
    def resume(cls, directory: Path) -> ResultSet:
        """Continue a results directory: keep its rows and RESULT lines."""
        results = cls(directory)
        frame = load_results(directory) if (directory / PARQUET).exists() else None
        if frame is not None:
            records = frame.to_dict("records")
            results.rows = [{str(k): v for k, v in row.items()} for row in records]
        if (directory / RESULT_LINES).exists():
            results.lines = (directory / RESULT_LINES).read_text().splitlines()
        return results

    def add(
        self,
        cell: CellKey,
        pass_no: int,
        metrics: dict[str, tuple[float | None, str]],
        settings: dict[str, Any],
        status: str = "ok",
        state: State = State.OK,
        remark: str = "",
        interval_s: float | None = None,
        columns: dict[str, Any] | None = None,
        kinds: tuple[Kind, ...] = (),
    ) -> None:
        """Record one pass of a cell: metrics maps a series' name (a metric's, or one
        series' of a metric with dimensions: `outage_ms_switch-restart`, as the
        declaration's `series` names it) -> (value, unit); each row carries the metric and
        its dimensions apart. `interval_s` places these rows in a time series. `columns`
        is the older spelling of it ({"interval_s": ...}), the only extra column a row
        has."""
        extra = dict(columns or {})
        interval_s = extra.pop(INTERVAL_S, interval_s)
        if extra:
            raise ValueError(f"no result column {', '.join(extra)} (vnetbench.core.schema)")
        split = catalogue().split
        for name, (value, unit) in metrics.items():
            metric, dimensions = split(name)
            self.rows.append(ResultRow(
                cell.run_id, cell.scenario, cell.overlay, cell.variant.name,
                cell.variant.method, pass_no, metric, value, unit, state, status, remark,
                settings, cell.variant.parameters, interval_s, dimensions,
                tuple(kind.value for kind in kinds)).record())

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.rows)
        if frame.empty:
            return pd.DataFrame(columns=list(COLUMNS))
        frame[VALUE] = pd.to_numeric(frame[VALUE], errors="coerce").astype("float64")
        return frame

    def write(self) -> None:
        """Write parquet, CSV and the RESULT lines; called after every pass."""
        frame = self.frame()
        write_atomic(self.directory / PARQUET, lambda path: write_parquet(frame, path))
        write_atomic(self.directory / CSV, lambda path: frame.to_csv(path, index=False))
        write_text_atomic(self.directory / RESULT_LINES,
                          "".join(f"{line}\n" for line in self.lines))


def result_line(
    scenario: str, overlay: str, pass_no: int, fields: dict[str, float | int | str | None]
) -> str:
    """The seed's one-line summary: `RESULT scenario=... overlay=... pass=N key=value ...`."""
    parts = [f"RESULT scenario={scenario}", f"overlay={overlay}", f"pass={pass_no}"]
    for key, value in fields.items():
        if isinstance(value, float):
            text = f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        else:
            text = "none" if value is None else str(value).replace(" ", "_")
        parts.append(f"{key}={text}")
    return " ".join(parts)


# What every reader takes from a results file (older files lack state, method, remark:
# with_states adds them)
REQUIRED_COLUMNS = (RUN_ID, SCENARIO, OVERLAY, VARIANT, PASS, METRIC, VALUE, UNIT, STATUS)


def find_results(paths: Sequence[Path]) -> list[Path]:
    """Each path a results directory, or a root whose subdirectories are (each once)."""
    found: list[Path] = []
    for path in paths:
        if (path / PARQUET).is_file():
            found.append(path)
            continue
        inside = sorted(p for p in path.iterdir() if (p / PARQUET).is_file()) \
            if path.is_dir() else []
        if not inside:
            raise UserError(f"{path} is no results directory (no {PARQUET}) and holds none: "
                            "give results directories (e.g. results/2026-11-29-2cpu) or a "
                            "root that holds several (e.g. results/).")
        found += inside
    return list(dict.fromkeys(p.resolve() for p in found))


def load_results(directory: Path) -> pd.DataFrame:
    """The results frame; from the CSV copy (saying so) if the parquet file is damaged.
    A file that is not vnetbench's results (columns missing, values not numbers) is a
    UserError naming it."""
    try:
        with (directory / PARQUET).open("rb") as parquet:
            frame, path = pd.read_parquet(parquet), directory / PARQUET
    except (OSError, ValueError) as damaged:
        if not (directory / CSV).exists():
            raise UserError(f"{directory / PARQUET} cannot be read ({damaged}) and there is "
                            f"no {CSV} beside it: the results of that directory are lost."
                            ) from None
        frame, path = read_csv_copy(directory / CSV), directory / CSV
        note(f"{directory / PARQUET} cannot be read ({damaged}); using {CSV}", style="yellow")
    check_columns(frame, path)
    frame = with_dimensions(with_states(frame))
    check_values(frame, path)
    return frame


def read_csv_copy(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, keep_default_na=False, na_values={VALUE: ["", "nan"]},
                           dtype=dict.fromkeys(DIMENSIONS, str))
    except (OSError, ValueError) as damaged:  # pandas' EmptyDataError, ParserError
        raise UserError(f"{path.with_name(PARQUET)} cannot be read, nor its copy {path} "
                        f"({damaged}): the results of that directory are lost. Restore them "
                        "from a copy, or measure again.") from None


def check_columns(frame: pd.DataFrame, path: Path) -> None:
    """The columns every reader takes, and numbers where numbers are read."""
    missing = [column for column in REQUIRED_COLUMNS if column not in frame.columns]
    not_numbers = [column for column in (VALUE, PASS) if column in frame.columns
                   and not pd.api.types.is_numeric_dtype(frame[column])]
    if missing or not_numbers:
        wrong = (f"no column {', '.join(missing)}" if missing
                 else f"{', '.join(not_numbers)} not numbers")
        raise UserError(f"{path} is not a results file vnetbench wrote ({wrong}). Give a "
                        "results directory written by 'vnetbench run', 'matrix' or 'ab', or "
                        "restore the file from a copy.")


def check_values(frame: pd.DataFrame, path: Path) -> None:
    """What vnetbench never writes: a pass that is not a whole number from 1, a value
    that is infinite, a rate, size or count below zero, one series in two units, or one
    pass of a series twice (a reader would count it twice, and a comparison take it as
    another pass)."""
    passes = frame[PASS]
    series = [SCENARIO, METRIC, *(d for d in DIMENSIONS if d in frame.columns)]
    units = frame[frame[UNIT].astype(str) != ""].groupby(series, dropna=False)[UNIT].nunique()
    key = [c for c in frame.columns if c not in (VALUE, UNIT, STATUS, KINDS, STATE, REMARK)]
    twice = frame[frame.duplicated(subset=key, keep=False)]
    negative = frame[frame[UNIT].isin(MAGNITUDE_UNITS) & (frame[VALUE] < 0)]
    wrong = ("pass has empty values" if passes.isna().any()
             else "pass has values that are not whole numbers from 1"
             if ((passes % 1 != 0) | (passes < 1)).any()
             else "value has infinite values" if frame[VALUE].isin([inf, -inf]).any()
             else f"{negative.iloc[0][METRIC]} is below zero in {negative.iloc[0][UNIT]}"
             if not negative.empty
             else f"{units[units > 1].index[0][1]} is written in {units.max()} units"
             if (units > 1).any()
             else f"pass {twice.iloc[0][PASS]} of {twice.iloc[0][METRIC]} is written twice"
             if not twice.empty else "")
    if wrong:
        raise UserError(f"{path} holds what vnetbench never writes ({wrong}): something "
                        "else changed it. Restore it from a copy, or measure again.")


def with_states(frame: pd.DataFrame) -> pd.DataFrame:
    """Results written before states, kinds and remarks were columns, in today's
    columns (the kinds a reader asks for read from the status: kinds_of_status); and
    the time series' column on every frame read, empty where no scenario kept a series
    (a reader selects a pass's own values with `interval_s.isna()` on any results)."""
    if INTERVAL_S not in frame.columns:
        frame = frame.assign(**{INTERVAL_S: float("nan")})
    if STATE not in frame.columns:
        frame = frame.assign(**{STATE: frame[STATUS].map(
            lambda s: state_of_status(str(s)).value)})
    if KINDS not in frame.columns:
        frame = frame.assign(**{KINDS: frame[STATUS].map(
            lambda s: ",".join(kind.value for kind in kinds_of_status(str(s))))})
    frame[KINDS] = frame[KINDS].fillna("").astype(str)
    if METHOD not in frame.columns:
        frame = frame.assign(**{METHOD: ""})
    frame[METHOD] = frame[METHOD].fillna("")
    return frame if REMARK in frame.columns else frame.assign(**{REMARK: ""})


def has_kind(frame: pd.DataFrame, kind: Kind) -> pd.Series:
    """Per row: does its status say a problem of this kind (the `kinds` column; on a
    frame without one, what kinds_of_status reads of the sentence)?"""
    if KINDS not in frame.columns:
        return frame[STATUS].map(lambda status: kind in kinds_of_status(str(status)))
    return frame[KINDS].map(lambda kinds: kind.value in str(kinds).split(","))


def with_dimensions(frame: pd.DataFrame) -> pd.DataFrame:
    """Every dimension's column, empty where a row has none; a row written before
    dimensions were columns (`outage_ms_switch-restart`) split into its metric and
    dimensions (`outage_ms`, fault `switch-restart`) by the catalogue."""
    frame = frame.assign(**{d: frame[d].fillna("").astype(str) if d in frame.columns
                            else "" for d in DIMENSIONS})
    undivided = (frame[list(DIMENSIONS)] == "").all(axis=1)
    names = frame.loc[undivided, METRIC].astype(str)
    split = {name: catalogue().split(name) for name in names.unique()}
    old = names[names.map(lambda name: bool(split[name][1]))]
    if not old.empty:
        frame.loc[old.index, METRIC] = old.map(lambda name: split[name][0])
        for dimension in DIMENSIONS:
            frame.loc[old.index, dimension] = old.map(
                lambda name, d=dimension: split[name][1].get(d, ""))
    return frame


def named(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows as the tables, `compare` and `ab` read them: each series under its one
    name (metric and dimensions, as the catalogue names it: `outage_ms_switch-restart`)
    in the metric column, no dimension columns."""
    present = [d for d in DIMENSIONS if d in frame.columns]
    if not present:
        return frame
    keys = frame[[METRIC, *present]].astype(str)
    series_name = catalogue().series_name
    names = {key: series_name(key[0], dict(zip(present, key[1:], strict=True)))
             for key in keys.drop_duplicates().itertuples(index=False, name=None)}
    return frame.drop(columns=present).assign(**{METRIC: [
        names[key] for key in keys.itertuples(index=False, name=None)]})
